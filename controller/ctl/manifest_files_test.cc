// manifest_files_test.cc: which files apply -f DIR sends, and delete -f's identities.
#include "controller/ctl/manifest_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace portico::ctl {
namespace {

namespace fs = std::filesystem;

class ManifestFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "portico-ctl-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }
  fs::path dir_;
};

TEST_F(ManifestFilesTest, CollectsManifestsSorted) {
  Write("b.yaml", "x");
  Write("a.json", "x");
  Write("c.yml", "x");
  Write("notes.txt", "x");
  Write(".hidden.yaml", "x");
  Write("sub/d.yaml", "x");
  auto flat = CollectManifestFiles(dir_.string(), false);
  ASSERT_TRUE(flat.ok());
  ASSERT_EQ(flat->size(), 3u);
  EXPECT_EQ(fs::path((*flat)[0]).filename(), "a.json");
  EXPECT_EQ(fs::path((*flat)[2]).filename(), "c.yml");
  auto deep = CollectManifestFiles(dir_.string(), true);
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(deep->size(), 4u);
  EXPECT_EQ(CollectManifestFiles((dir_ / "missing").string(), false).status().code(),
            StatusCode::kNotFound);
}

TEST(ManifestObjectsTest, ReadsIdentities) {
  auto objects = ReadManifestObjects(R"(apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: prod}
---
apiVersion: v1
kind: Secret
metadata: {name: tls}
)",
                                     "f.yaml");
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_EQ(objects->size(), 2u);
  EXPECT_EQ((*objects)[0].KindName(), "HTTPRoute.gateway.networking.k8s.io");
  EXPECT_EQ((*objects)[0].ns, "prod");
  EXPECT_EQ((*objects)[1].KindName(), "Secret");
  EXPECT_EQ((*objects)[1].ns, "");
  auto bad = ReadManifestObjects("apiVersion: v1\nkind: Secret\n", "g.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("g.yaml:1"), std::string::npos);
}

}  // namespace
}  // namespace portico::ctl
