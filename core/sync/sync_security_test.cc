// sync_security_test.cc: conf_sync_security parsing, and mutual TLS between a real in-process
// ConfigSync server on 127.0.0.1:0 and clients with the right, no, or a foreign certificate.
// Certificates come from gen-certs' generator (EC P-256, fast).
#include "core/sync/sync_security.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "controller/ctl/gen_certs.h"
#include "portico/sync/v1/sync.grpc.pb.h"

namespace portico::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// CaptureSink keeps every log line; tests wait for a line with a deadline.
class CaptureSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // WaitFor returns the first line at index >= `from` containing every needle, or "" after 10 s.
  std::string WaitFor(size_t from, const std::vector<std::string>& needles) {
    std::unique_lock<std::mutex> lock(lines_mu_);
    std::string found;
    auto match = [&] {
      for (size_t i = from; i < lines_.size(); ++i) {
        bool all = true;
        for (const std::string& needle : needles)
          all = all && lines_[i].find(needle) != std::string::npos;
        if (all) {
          found = lines_[i];
          return true;
        }
      }
      return false;
    };
    changed_.wait_for(lock, std::chrono::seconds(10), match);
    return found;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(lines_mu_);
    return lines_.size();
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::lock_guard<std::mutex> lock(lines_mu_);
    lines_.emplace_back(msg.payload.data(), msg.payload.size());
    changed_.notify_all();
  }
  void flush_() override {}

 private:
  std::mutex lines_mu_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
};

// Logs installs the capture sink once for the whole binary: gRPC threads log at any time, and
// spdlog's default logger must not be swapped under them.
CaptureSink& Logs() {
  static CaptureSink* sink = [] {
    auto* s = new CaptureSink;
    auto logger = std::make_shared<spdlog::logger>(
        "test", std::shared_ptr<spdlog::sinks::sink>(s, [](spdlog::sinks::sink*) {}));
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
    return s;
  }();
  return *sink;
}

class InfoService final : public sync::v1::ConfigSync::Service {
  grpc::Status GetServerInfo(grpc::ServerContext* /*context*/,
                             const sync::v1::GetServerInfoRequest* /*request*/,
                             sync::v1::ServerInfo* info) override {
    info->set_server_id("test-server");
    info->set_ready(true);
    return grpc::Status::OK;
  }
};

StatusOr<SyncSecurity> ParseText(const std::string& text, const fs::path& base_dir) {
  toml::table root = toml::parse(std::string_view(text), std::string_view("portico-gateway.toml"));
  return ParseSyncSecurity(root["conf_sync_security"].as_table(), base_dir, "portico-gateway.toml");
}

class SyncSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Logs();
    std::string pattern = (fs::temp_directory_path() / "portico-sync-security-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    for (const char* name : {"prod", "other"}) {
      ctl::GenCertsOptions options;
      options.cert_name = name;
      options.out_dir = dir_;
      options.days = 1;
      Status status = ctl::GenerateSyncCerts(options);
      ASSERT_TRUE(status.ok()) << status;
    }
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Files builds a set from gen-certs output: "prod/ca.crt", ...
  SyncSecurity Files(const std::string& ca, const std::string& cert, const std::string& key,
                     std::string server_name = "") const {
    SyncSecurity security;
    security.enabled = true;
    security.active = {"prod", dir_ / ca, dir_ / cert, dir_ / key, std::move(server_name)};
    return security;
  }
  SyncSecurity ServerSet() const {
    return Files("prod/ca.crt", "prod/server.crt", "prod/server.key");
  }
  SyncSecurity ClientSet() const {
    return Files("prod/ca.crt", "prod/client.crt", "prod/client.key");
  }

  void StartServer(const SyncSecurity& security) {
    StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
        MakeServerCredentials(security);
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", *credentials, &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(port_, 0);
  }
  std::string Target() const { return "127.0.0.1:" + std::to_string(port_); }

  grpc::Status Call(const std::shared_ptr<grpc::ChannelCredentials>& credentials,
                    const grpc::ChannelArguments& args, sync::v1::ServerInfo* info) {
    auto stub =
        sync::v1::ConfigSync::NewStub(grpc::CreateCustomChannel(Target(), credentials, args));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return stub->GetServerInfo(&context, sync::v1::GetServerInfoRequest(), info);
  }
  grpc::Status Call(const SyncSecurity& client, sync::v1::ServerInfo* info) {
    StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        MakeChannelCredentials(client);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    if (!credentials.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "no credentials");
    return Call(*credentials, ChannelArgsFor(client), info);
  }

  // RawClient: SSL channel credentials as given, e.g. without a client certificate.
  std::shared_ptr<grpc::ChannelCredentials> RawClient(const std::string& ca,
                                                      const std::string& cert,
                                                      const std::string& key) const {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = Read(dir_ / ca);
    if (!cert.empty()) options.pem_cert_chain = Read(dir_ / cert);
    if (!key.empty()) options.pem_private_key = Read(dir_ / key);
    return grpc::SslCredentials(options);
  }
  static std::string Read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  fs::path dir_;
  InfoService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Parsing

TEST_F(SyncSecurityTest, AbsentTableIsPlaintext) {
  StatusOr<SyncSecurity> security = ParseSyncSecurity(nullptr, dir_, "portico-gateway.toml");
  ASSERT_TRUE(security.ok());
  EXPECT_FALSE(security->enabled);
  StatusOr<SyncSecurity> parsed = ParseText("[other]\nx = 1\n", dir_);
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->enabled);
}

TEST_F(SyncSecurityTest, NamedSetsSelectTheActiveOne) {
  StatusOr<SyncSecurity> security = ParseText(R"(
[conf_sync_security]
active = "prod"

[[conf_sync_security.certs]]
name = "next"                      # staged: its files need not exist yet
ca_file = "next/ca.crt"
cert_file = "next/client.crt"
key_file = "next/client.key"

[[conf_sync_security.certs]]
name = "prod"
ca_file = "prod/ca.crt"
cert_file = "./prod/client.crt"
key_file = ")" + (dir_ / "prod/client.key").string() +
                                                  R"("
server_name = "localhost"
)",
                                              dir_);
  ASSERT_TRUE(security.ok()) << security.status();
  EXPECT_TRUE(security->enabled);
  EXPECT_EQ(security->active.name, "prod");
  EXPECT_EQ(security->active.ca_file, dir_ / "prod/ca.crt");
  EXPECT_EQ(security->active.cert_file, dir_ / "prod/client.crt");
  EXPECT_EQ(security->active.key_file, dir_ / "prod/client.key");
  EXPECT_EQ(security->active.server_name, "localhost");
}

TEST_F(SyncSecurityTest, LegacyTlsForm) {
  StatusOr<SyncSecurity> security = ParseText(R"(
[conf_sync_security.tls]
ca_file = "prod/ca.crt"
cert_file = "prod/server.crt"
key_file = "prod/server.key"
)",
                                              dir_);
  ASSERT_TRUE(security.ok()) << security.status();
  EXPECT_TRUE(security->enabled);
  EXPECT_EQ(security->active.name, "");
  EXPECT_EQ(security->active.cert_file, dir_ / "prod/server.crt");
  EXPECT_EQ(security->active.server_name, "");
}

struct ErrorCase {
  const char* label;
  std::string toml;
  std::string want;  // substring of the message, after "portico-gateway.toml:"
};

TEST_F(SyncSecurityTest, ErrorsNameSourceFieldAndProblem) {
  const std::string prod_entry =
      "[[conf_sync_security.certs]]\nname = \"prod\"\nca_file = \"prod/ca.crt\"\n"
      "cert_file = \"prod/client.crt\"\nkey_file = \"prod/client.key\"\n";
  const std::vector<ErrorCase> cases = {
      {"unknown active", "[conf_sync_security]\nactive = \"x\"\n" + prod_entry,
       "2: conf_sync_security.active: no certs entry named \"x\" (have \"prod\")"},
      {"active without certs", "[conf_sync_security]\nactive = \"x\"\n",
       "2: conf_sync_security.active: no certs entry named \"x\" (there are no"},
      {"certs without active", "[conf_sync_security]\n" + prod_entry,
       "conf_sync_security.active: missing: name the [[conf_sync_security.certs]] entry to use "
       "(one of \"prod\")"},
      {"missing field",
       "[conf_sync_security]\nactive = \"a\"\n[[conf_sync_security.certs]]\nname = \"a\"\n"
       "ca_file = \"prod/ca.crt\"\ncert_file = \"prod/client.crt\"\n",
       "conf_sync_security.certs[0].key_file: required, the path of a PEM file"},
      {"missing name",
       "[conf_sync_security]\nactive = \"a\"\n[[conf_sync_security.certs]]\n"
       "ca_file = \"prod/ca.crt\"\ncert_file = \"prod/client.crt\"\nkey_file = \"k\"\n",
       "conf_sync_security.certs[0].name: required"},
      {"wrong type",
       "[conf_sync_security]\nactive = \"a\"\n[[conf_sync_security.certs]]\nname = \"a\"\n"
       "ca_file = 3\n",
       "5: conf_sync_security.certs[0].ca_file: expected a string"},
      {"unknown key",
       "[conf_sync_security]\nactive = \"a\"\n[[conf_sync_security.certs]]\nname = \"a\"\n"
       "cafile = \"x\"\n",
       "5: conf_sync_security.certs[0].cafile: unknown setting (expected one of name, ca_file, "
       "cert_file, key_file, server_name)"},
      {"unknown top key", "[conf_sync_security]\nactiv = \"a\"\n",
       "2: conf_sync_security.activ: unknown setting"},
      {"duplicate name", "[conf_sync_security]\nactive = \"prod\"\n" + prod_entry + prod_entry,
       "conf_sync_security.certs[1].name: duplicate name \"prod\" (also certs[0])"},
      {"both forms",
       "[conf_sync_security]\nactive = \"prod\"\n" + prod_entry +
           "[conf_sync_security.tls]\nca_file = \"a\"\ncert_file = \"b\"\nkey_file = \"c\"\n",
       "conf_sync_security.tls: use either active + [[conf_sync_security.certs]] or the older "
       "[conf_sync_security.tls], not both"},
      {"empty table", "[conf_sync_security]\n", "conf_sync_security: empty table"},
      {"certs not an array", "[conf_sync_security]\nactive = \"a\"\ncerts = \"a\"\n",
       "3: conf_sync_security.certs: expected an array of tables"},
      {"missing active file",
       "[conf_sync_security]\nactive = \"a\"\n[[conf_sync_security.certs]]\nname = \"a\"\n"
       "ca_file = \"prod/ca.crt\"\ncert_file = \"prod/client.crt\"\nkey_file = \"gone.key\"\n",
       "7: conf_sync_security.certs[0].key_file: " + (dir_ / "gone.key").string() +
           ": no such file"},
      {"legacy missing file",
       "[conf_sync_security.tls]\nca_file = \"nope/ca.crt\"\ncert_file = \"prod/client.crt\"\n"
       "key_file = \"prod/client.key\"\n",
       "2: conf_sync_security.tls.ca_file: " + (dir_ / "nope/ca.crt").string() + ": no such file"},
      {"legacy file is a directory",
       "[conf_sync_security.tls]\nca_file = \"prod\"\ncert_file = \"prod/client.crt\"\n"
       "key_file = \"prod/client.key\"\n",
       "conf_sync_security.tls.ca_file: " + (dir_ / "prod").string() + ": is a directory"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.label);
    StatusOr<SyncSecurity> security = ParseText(c.toml, dir_);
    ASSERT_FALSE(security.ok());
    EXPECT_EQ(security.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(security.status().message(), StartsWith("portico-gateway.toml:"));
    EXPECT_THAT(security.status().message(), HasSubstr(c.want));
  }
}

TEST_F(SyncSecurityTest, ChannelArgsSetTheTargetNameOverrideOnlyWhenAsked) {
  auto override_of = [](const SyncSecurity& security) {
    grpc::ChannelArguments arguments = ChannelArgsFor(security);
    grpc_channel_args args = arguments.c_channel_args();
    for (size_t i = 0; i < args.num_args; ++i) {
      if (std::string(args.args[i].key) == GRPC_SSL_TARGET_NAME_OVERRIDE_ARG) {
        return std::string(args.args[i].value.string);
      }
    }
    return std::string("<none>");
  };
  EXPECT_EQ(override_of(ClientSet()), "<none>");
  EXPECT_EQ(override_of(Files("prod/ca.crt", "prod/client.crt", "prod/client.key", "ctl.example")),
            "ctl.example");
  EXPECT_EQ(override_of(SyncSecurity{}), "<none>");
}

TEST_F(SyncSecurityTest, CredentialsRefuseUnusableFiles) {
  StatusOr<std::shared_ptr<grpc::ServerCredentials>> mismatched =
      MakeServerCredentials(Files("prod/ca.crt", "prod/server.crt", "prod/client.key"));
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatched.status().message(),
              HasSubstr("key_file " + (dir_ / "prod/client.key").string() +
                        ": does not match the certificate in cert_file " +
                        (dir_ / "prod/server.crt").string()));

  StatusOr<std::shared_ptr<grpc::ChannelCredentials>> not_pem =
      MakeChannelCredentials(Files("prod/client.key", "prod/client.crt", "prod/client.key"));
  ASSERT_FALSE(not_pem.ok());
  EXPECT_THAT(not_pem.status().message(),
              HasSubstr("conf_sync_security \"prod\": ca_file " +
                        (dir_ / "prod/client.key").string() + ": holds no PEM certificate"));

  StatusOr<std::shared_ptr<grpc::ChannelCredentials>> missing =
      MakeChannelCredentials(Files("prod/ca.crt", "prod/missing.crt", "prod/client.key"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("cert_file " + (dir_ / "prod/missing.crt").string()));
}

// ---------------------------------------------------------------------------------------------
// A real server on loopback

TEST_F(SyncSecurityTest, PlaintextWhenDisabled) {
  StartServer(SyncSecurity{});
  sync::v1::ServerInfo info;
  grpc::Status status = Call(SyncSecurity{}, &info);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(info.server_id(), "test-server");
}

TEST_F(SyncSecurityTest, RightClientCertificateWorks) {
  StartServer(ServerSet());
  size_t mark = Logs().size();
  sync::v1::ServerInfo info;
  grpc::Status status = Call(ClientSet(), &info);
  ASSERT_TRUE(status.ok()) << DescribeSyncFailure(status, ClientSet());
  EXPECT_EQ(info.server_id(), "test-server");
  // The server's verifier saw the verified client certificate.
  EXPECT_NE(Logs().WaitFor(mark, {"ConfigSync TLS: accepted client certificate",
                                  "Portico ConfigSync client prod"}),
            "");
}

TEST_F(SyncSecurityTest, ServerNameOverrideIsChecked) {
  StartServer(ServerSet());
  sync::v1::ServerInfo info;
  grpc::Status good =
      Call(Files("prod/ca.crt", "prod/client.crt", "prod/client.key", "localhost"), &info);
  EXPECT_TRUE(good.ok()) << good.error_message();

  SyncSecurity wrong = Files("prod/ca.crt", "prod/client.crt", "prod/client.key", "wrong.example");
  grpc::Status bad = Call(wrong, &info);
  ASSERT_FALSE(bad.ok());
  std::string line = DescribeSyncFailure(bad, wrong);
  EXPECT_THAT(line, StartsWith("ConfigSync TLS handshake with " + Target() + " failed: "));
  EXPECT_THAT(line, HasSubstr("wrong.example"));
  EXPECT_THAT(line, HasSubstr("set server_name"));
}

TEST_F(SyncSecurityTest, ClientWithoutCertificateIsRefused) {
  StartServer(ServerSet());
  size_t mark = Logs().size();
  sync::v1::ServerInfo info;
  grpc::Status status = Call(RawClient("prod/ca.crt", "", ""), grpc::ChannelArguments(), &info);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  std::string line = DescribeSyncFailure(status, ClientSet());
  EXPECT_THAT(line, StartsWith("ConfigSync TLS handshake with " + Target() +
                               " failed: "
                               "the controller closed the connection during the handshake"));
  EXPECT_THAT(line, HasSubstr("check conf_sync_security \"prod\" (ca_file=" +
                              (dir_ / "prod/ca.crt").string()));
  // Server side: one warning with the reason.
  EXPECT_NE(
      Logs().WaitFor(mark, {"ConfigSync TLS: refused a peer", "peer did not return a certificate",
                            (dir_ / "prod/ca.crt").string()}),
      "");
}

TEST_F(SyncSecurityTest, ClientCertificateFromAnotherCaIsRefused) {
  StartServer(ServerSet());
  size_t mark = Logs().size();
  // Trusts the server, but presents a certificate the server's CA never signed.
  SyncSecurity foreign = Files("prod/ca.crt", "other/client.crt", "other/client.key");
  sync::v1::ServerInfo info;
  grpc::Status status = Call(foreign, &info);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(DescribeSyncFailure(status, foreign),
              HasSubstr("closed the connection during the handshake (it refused our client "
                        "certificate"));
  EXPECT_NE(Logs().WaitFor(mark, {"ConfigSync TLS: refused a peer", "certificate verify failed"}),
            "");
}

TEST_F(SyncSecurityTest, ServerCertificateIsNotAClientCertificate) {
  StartServer(ServerSet());
  size_t mark = Logs().size();
  sync::v1::ServerInfo info;
  // Signed by the right CA, but its extendedKeyUsage is serverAuth only.
  grpc::Status status = Call(Files("prod/ca.crt", "prod/server.crt", "prod/server.key"), &info);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(Logs().WaitFor(mark, {"ConfigSync TLS: refused a peer", "certificate verify failed"}),
            "");
}

TEST_F(SyncSecurityTest, ClientRefusesAServerFromAnotherCa) {
  StartServer(ServerSet());
  SyncSecurity distrusting = Files("other/ca.crt", "prod/client.crt", "prod/client.key");
  sync::v1::ServerInfo info;
  grpc::Status status = Call(distrusting, &info);
  ASSERT_FALSE(status.ok());
  std::string line = DescribeSyncFailure(status, distrusting, "controller.example:5810");
  EXPECT_THAT(line, StartsWith("ConfigSync TLS handshake with controller.example:5810 failed: "
                               "the controller's certificate is not signed by our ca_file"));
  EXPECT_THAT(line, HasSubstr("ca_file=" + (dir_ / "other/ca.crt").string()));
}

TEST_F(SyncSecurityTest, PlaintextClientIsRefusedByATlsServer) {
  StartServer(ServerSet());
  size_t mark = Logs().size();
  sync::v1::ServerInfo info;
  grpc::Status status = Call(grpc::InsecureChannelCredentials(), grpc::ChannelArguments(), &info);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(DescribeSyncFailure(status, SyncSecurity{}),
              HasSubstr("if it requires mutual TLS, set conf_sync_security here"));
  EXPECT_NE(Logs().WaitFor(mark, {"ConfigSync TLS: refused a peer", "wrong version number"}), "");
}

TEST_F(SyncSecurityTest, LegacyFormWorksEndToEnd) {
  StatusOr<SyncSecurity> server = ParseText(R"(
[conf_sync_security.tls]
ca_file = "prod/ca.crt"
cert_file = "prod/server.crt"
key_file = "prod/server.key"
)",
                                            dir_);
  ASSERT_TRUE(server.ok()) << server.status();
  StatusOr<SyncSecurity> client = ParseText(R"(
[conf_sync_security.tls]
ca_file = "prod/ca.crt"
cert_file = "prod/client.crt"
key_file = "prod/client.key"
)",
                                            dir_);
  ASSERT_TRUE(client.ok()) << client.status();
  StartServer(*server);
  sync::v1::ServerInfo info;
  grpc::Status status = Call(*client, &info);
  ASSERT_TRUE(status.ok()) << DescribeSyncFailure(status, *client);
  EXPECT_EQ(info.server_id(), "test-server");

  // And the legacy client is refused by a server of another CA, naming the legacy table.
  grpc::Status refused = Call(Files("prod/ca.crt", "other/client.crt", "other/client.key"), &info);
  EXPECT_FALSE(refused.ok());
  SyncSecurity legacy_foreign = *client;
  legacy_foreign.active.cert_file = dir_ / "other/client.crt";
  EXPECT_THAT(DescribeSyncFailure(refused, legacy_foreign),
              HasSubstr("check conf_sync_security.tls (ca_file="));
}

TEST_F(SyncSecurityTest, DescribeOtherFailuresPlainly) {
  grpc::Status refused(grpc::StatusCode::UNAVAILABLE,
                       "failed to connect to all addresses; last error: UNKNOWN: "
                       "ipv4:127.0.0.1:5810: Failed to connect to remote host: Connection refused");
  EXPECT_EQ(DescribeSyncFailure(refused, ClientSet()),
            "ConfigSync call to 127.0.0.1:5810 failed: UNAVAILABLE: " + refused.error_message());
  grpc::Status v6(grpc::StatusCode::UNAVAILABLE,
                  "failed to connect to all addresses; last error: UNAVAILABLE: "
                  "ipv6:%5B::1%5D:5810: Socket closed");
  EXPECT_THAT(DescribeSyncFailure(v6, ClientSet()),
              StartsWith("ConfigSync TLS handshake with [::1]:5810 failed: "));
  grpc::Status unimplemented(grpc::StatusCode::UNIMPLEMENTED, "");
  EXPECT_EQ(DescribeSyncFailure(unimplemented, ClientSet(), "c:1"),
            "ConfigSync call to c:1 failed: UNIMPLEMENTED: ");
}

}  // namespace
}  // namespace portico::core
