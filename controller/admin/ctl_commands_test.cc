// ctl_commands_test.cc: portico-ctl's get, apply, delete and list-plugins --target controller
// against a real admin server on a FakeBackend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "controller/admin/admin_router.h"
#include "controller/admin/fake_backend.h"
#include "controller/ctl/apply_command.h"
#include "controller/ctl/delete_command.h"
#include "controller/ctl/get_command.h"
#include "controller/ctl/list_plugins.h"
#include "core/admin/admin_server.h"
#include "portico/sdk/json.h"

namespace portico::controller::admin {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CtlCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_ = std::make_unique<AdminRouter>(&backend_);
    core::admin::AdminServerOptions options;
    options.port = 0;
    server_ = std::make_unique<core::admin::AdminServer>(
        options, [this](const AdminRequest& r) { return router_->Handle(r); });
    ASSERT_TRUE(server_->Start().ok());
    server_options_.server = "http://127.0.0.1:" + std::to_string(server_->port());
    std::string pattern = (fs::temp_directory_path() / "portico-ctl-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    std::ofstream(dir_ / "routes.yaml") << R"(apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: prod}
spec: {hostnames: [a.example.com]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: prod}
)";
    std::ofstream(dir_ / "class.json")
        << R"({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
              "metadata": {"name": "portico"}})";
    std::ofstream(dir_ / "notes.txt") << "not a manifest";
  }
  void TearDown() override {
    server_->Stop();
    fs::remove_all(dir_);
  }

  int Apply(std::vector<std::string> files, std::string* out, std::string* err) {
    ctl::ApplyOptions options;
    options.files = std::move(files);
    std::ostringstream o, e;
    int code = ctl::RunApply(options, server_options_, o, e);
    *out = o.str();
    *err = e.str();
    return code;
  }

  int Get(ctl::GetOptions options, std::string* out, std::string* err) {
    options.now_unix_s = 4102444800;  // 2100-01-01
    std::ostringstream o, e;
    int code = ctl::RunGet(options, server_options_, o, e);
    *out = o.str();
    *err = e.str();
    return code;
  }

  FakeBackend backend_;
  std::unique_ptr<AdminRouter> router_;
  std::unique_ptr<core::admin::AdminServer> server_;
  ctl::ServerOptions server_options_;
  fs::path dir_;
};

TEST_F(CtlCommandsTest, ApplyGetDelete) {
  std::string out, err;
  ASSERT_EQ(Apply({dir_.string()}, &out, &err), 0) << err;
  EXPECT_EQ(out,
            "gatewayclass.gateway.networking.k8s.io/portico created\n"
            "httproute.gateway.networking.k8s.io/web created\n"
            "httproute.gateway.networking.k8s.io/api created\n");

  ctl::GetOptions get;
  get.args = {"httproutes"};
  get.ns = "prod";
  ASSERT_EQ(Get(get, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("NAME   HOSTNAMES       STATUS     AGE\n"));
  EXPECT_THAT(out, HasSubstr("web    a.example.com   Accepted   <unknown>\n"));

  get.args = {"httproutes"};
  get.ns = "";
  ASSERT_EQ(Get(get, &out, &err), 0);
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "No resources found in default namespace.\n");

  get.all_namespaces = true;
  ASSERT_EQ(Get(get, &out, &err), 0);
  EXPECT_THAT(out, HasSubstr("NAMESPACE   NAME"));

  ctl::GetOptions yaml;
  yaml.args = {"httproute/web"};
  yaml.ns = "prod";
  yaml.output = "yaml";
  ASSERT_EQ(Get(yaml, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("kind: HTTPRoute\n"));
  EXPECT_THAT(out, HasSubstr("status:\n"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("portico:")));

  ctl::GetOptions json_out;
  json_out.args = {"gatewayclasses"};
  json_out.output = "json";
  ASSERT_EQ(Get(json_out, &out, &err), 0) << err;
  auto list = json::Parse(out);
  ASSERT_TRUE(list.ok()) << out;
  EXPECT_EQ(json::GetString(*list, "kind"), "List");
  EXPECT_EQ((*list)["items"].Size(), 1u);

  ctl::GetOptions names;
  names.args = {"httproutes"};
  names.ns = "prod";
  names.output = "name";
  ASSERT_EQ(Get(names, &out, &err), 0);
  EXPECT_EQ(out,
            "httproute.gateway.networking.k8s.io/api\nhttproute.gateway.networking.k8s.io/web\n");

  ctl::GetOptions missing;
  missing.args = {"httproutes", "nope"};
  missing.ns = "prod";
  EXPECT_EQ(Get(missing, &out, &err), 1);
  EXPECT_EQ(err,
            "Error from server (NotFound): httproutes.gateway.networking.k8s.io \"nope\" not "
            "found in namespace \"prod\"\n");
  ctl::GetOptions unknown;
  unknown.args = {"widgets"};
  EXPECT_EQ(Get(unknown, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("doesn't have a resource type \"widgets\""));

  ctl::DeleteOptions del;
  del.args = {"httproute", "web"};
  del.ns = "prod";
  std::ostringstream o, e;
  ASSERT_EQ(ctl::RunDelete(del, server_options_, o, e), 0) << e.str();
  EXPECT_EQ(o.str(), "httproute.gateway.networking.k8s.io \"web\" deleted\n");
  std::ostringstream o2, e2;
  EXPECT_EQ(ctl::RunDelete(del, server_options_, o2, e2), 1);
  EXPECT_THAT(e2.str(), HasSubstr("Error from server (NotFound)"));
  del.ignore_not_found = true;
  std::ostringstream o3, e3;
  EXPECT_EQ(ctl::RunDelete(del, server_options_, o3, e3), 0);

  ctl::DeleteOptions by_file;
  by_file.files = {(dir_ / "routes.yaml").string()};
  by_file.ignore_not_found = true;
  std::ostringstream o4, e4;
  ASSERT_EQ(ctl::RunDelete(by_file, server_options_, o4, e4), 0) << e4.str();
  EXPECT_EQ(o4.str(), "httproute.gateway.networking.k8s.io \"api\" deleted\n");
}

TEST_F(CtlCommandsTest, ApplyReportsInvalidFiles) {
  std::ofstream(dir_ / "bad.yaml") << "apiVersion: x.io/v1\nkind: Widget\nmetadata: {name: w}\n";
  std::string out, err;
  EXPECT_EQ(Apply({(dir_ / "bad.yaml").string(), (dir_ / "class.json").string()}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("Error from server (Invalid): apply refused"));
  EXPECT_THAT(err, HasSubstr("bad.yaml"));
  EXPECT_EQ(out, "gatewayclass.gateway.networking.k8s.io/portico created\n");
  EXPECT_EQ(Apply({(dir_ / "missing.yaml").string()}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("does not exist"));
}

TEST_F(CtlCommandsTest, ListPluginsFromTheController) {
  ctl::ListPluginsOptions options;
  options.target = "controller";
  options.server = server_options_;
  options.output = "wide";
  std::ostringstream out, err;
  EXPECT_EQ(ctl::RunListPlugins(options, out, err), 1) << "one plugin is refused";
  EXPECT_THAT(out.str(), HasSubstr("NAME"));
  EXPECT_THAT(out.str(), HasSubstr("gateway"));
  EXPECT_THAT(out.str(), HasSubstr("rejected: no manifest"));

  options.server.server = "http://127.0.0.1:1";
  std::ostringstream out2, err2;
  EXPECT_EQ(ctl::RunListPlugins(options, out2, err2), 1);
  EXPECT_THAT(err2.str(), HasSubstr("127.0.0.1:1"));
}

TEST(StripPorticoTest, KeepsWhatExplainsAnError) {
  auto ok = json::Parse(R"({"kind":"A","portico":{"error":"","syncedHash":"h","generation":1}})");
  ASSERT_TRUE(ok.ok());
  ctl::StripPortico(*ok);
  EXPECT_EQ(json::Serialize(*ok), R"({"kind":"A"})");
  auto bad = json::Parse(R"({"kind":"A","portico":{"source":{"file":"a.yaml","line":1},
      "generation":2,"syncedHash":"h","error":"A x: spec.a: bad","refusedGeneration":2,
      "servingGeneration":1,"violations":[{"field":"spec.a","line":3,"message":"bad"}]}})");
  ASSERT_TRUE(bad.ok());
  ctl::StripPortico(*bad);
  EXPECT_EQ(json::Serialize(*bad),
            R"({"kind":"A","portico":{"source":{"file":"a.yaml","line":1},)"
            R"("error":"A x: spec.a: bad","refusedGeneration":2,"servingGeneration":1,)"
            R"("violations":[{"field":"spec.a","line":3,"message":"bad"}]}})");
}

}  // namespace
}  // namespace portico::controller::admin
