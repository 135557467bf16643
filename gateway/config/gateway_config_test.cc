// gateway_config_test.cc: portico-gateway.toml parsing and its merge with flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gateway/config/config_flags.h"
#include "gateway/config/gateway_config.h"

namespace portico::gateway {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "portico-gwconfig-XXXXXX").string();
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(GatewayConfigTest, DefaultsWork) {
  GatewayConfig config;
  EXPECT_TRUE(config.Validate().ok());
  EXPECT_EQ(config.controller, "127.0.0.1:5810");
  EXPECT_EQ(config.admin_address, "127.0.0.1");
  EXPECT_EQ(config.admin_port, 5900);
  EXPECT_EQ(config.addresses, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(config.snapshot_path, "");
  EXPECT_EQ(config.spool_dir, "");
  EXPECT_EQ(config.drain_timeout_ms, 5000);
  EXPECT_EQ(config.drain_idle_timeout_ms, 1000);
  EXPECT_EQ(config.busy_poll_us, 50);
  EXPECT_EQ(config.escaped_slashes, "UnescapeAndRedirect");
  EXPECT_FALSE(config.sync_security.enabled);
  EXPECT_FALSE(DefaultGatewayName().empty());
}

TEST(GatewayConfigTest, ParsesEveryKey) {
  GatewayConfig config;
  Status status = ParseConfigToml(R"(
controller = "10.0.0.1:6810"
name = "edge-1"
addresses = ["192.0.2.1", "2001:db8::1"]
plugin_dir = "plugins"
snapshot_path = "state/gateway.snapshot"
spool_dir = "spool"
workers = 4
log_level = "debug"
[serve]
gateways = ["infra/web", "api"]
gateway_class = "portico"
[admin]
address = "0.0.0.0"
port = 0
port_file = "run/admin.port"
token_file = "run/admin.token"
)",
                                  "/etc/portico/portico-gateway.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.controller, "10.0.0.1:6810");
  EXPECT_EQ(config.name, "edge-1");
  EXPECT_EQ(config.addresses, (std::vector<std::string>{"192.0.2.1", "2001:db8::1"}));
  EXPECT_EQ(config.plugin_dir, "/etc/portico/plugins");
  EXPECT_EQ(config.snapshot_path, "/etc/portico/state/gateway.snapshot");
  EXPECT_EQ(config.spool_dir, "/etc/portico/spool");
  EXPECT_EQ(config.workers, 4);
  EXPECT_EQ(config.log_level, "debug");
  EXPECT_EQ(config.gateway_class, "portico");
  std::vector<GatewayRef> served = config.ServedGateways();
  ASSERT_EQ(served.size(), 2u);
  EXPECT_EQ(served[0], (GatewayRef{"infra", "web"}));
  EXPECT_EQ(served[1], (GatewayRef{"default", "api"}));
  EXPECT_EQ(config.admin_address, "0.0.0.0");
  EXPECT_EQ(config.admin_port, 0);
  EXPECT_EQ(config.admin_port_file, "/etc/portico/run/admin.port");
  EXPECT_EQ(config.admin_token_file, "/etc/portico/run/admin.token");
  EXPECT_EQ(config.config_file, "/etc/portico/portico-gateway.toml");
  EXPECT_TRUE(config.Validate().ok());
}

TEST(GatewayConfigTest, ParsesDataPlaneSettings) {
  GatewayConfig defaults;
  EXPECT_EQ(defaults.access_log, "stderr");
  EXPECT_EQ(defaults.ListenAddress(), "127.0.0.1");
  EXPECT_EQ(defaults.header_read_timeout_ms, 10000);
  EXPECT_EQ(defaults.idle_timeout_ms, 60000);
  EXPECT_EQ(defaults.connect_timeout_ms, 1000);
  GatewayConfig config;
  Status status = ParseConfigToml(R"(
access_log = "logs/access.log"
listen_address = "0.0.0.0"
busy_poll_us = 0
escaped_slashes = "KeepUnchanged"
[timeouts]
header_read_ms = 5000
idle_ms = 30000
body_read_ms = 7000
connect_ms = 250
upstream_ms = 15000
upstream_idle_ms = 20000
tunnel_idle_ms = 45000
drain_ms = 250
drain_idle_ms = 300
[limits]
max_request_line = 4096
max_header_line = 2048
max_header_bytes = 32768
max_headers = 50
max_body_bytes = 1048576
upstream_keepalive = 16
max_connections = 5000
max_requests_per_connection = 1000
)",
                                  "/etc/portico/portico-gateway.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.access_log, "/etc/portico/logs/access.log");
  EXPECT_EQ(config.ListenAddress(), "0.0.0.0");
  EXPECT_EQ(config.busy_poll_us, 0);
  EXPECT_EQ(config.escaped_slashes, "KeepUnchanged");
  EXPECT_EQ(config.header_read_timeout_ms, 5000);
  EXPECT_EQ(config.idle_timeout_ms, 30000);
  EXPECT_EQ(config.connect_timeout_ms, 250);
  EXPECT_EQ(config.upstream_timeout_ms, 15000);
  EXPECT_EQ(config.upstream_idle_timeout_ms, 20000);
  EXPECT_EQ(config.tunnel_idle_timeout_ms, 45000);
  EXPECT_EQ(config.drain_timeout_ms, 250);
  EXPECT_EQ(config.drain_idle_timeout_ms, 300);
  EXPECT_EQ(config.max_request_line, 4096);
  EXPECT_EQ(config.max_header_bytes, 32768);
  EXPECT_EQ(config.max_headers, 50);
  EXPECT_EQ(config.max_body_bytes, 1048576);
  EXPECT_EQ(config.upstream_keepalive, 16);
  EXPECT_EQ(config.body_read_timeout_ms, 7000);
  EXPECT_EQ(config.max_header_line, 2048);
  EXPECT_EQ(config.max_connections, 5000);
  EXPECT_EQ(config.max_requests_per_connection, 1000);
  EXPECT_TRUE(config.Validate().ok());
  GatewayConfig off;
  ASSERT_TRUE(ParseConfigToml("access_log = \"off\"\n", "g.toml", &off).ok());
  EXPECT_EQ(off.access_log, "off");
  off.connect_timeout_ms = 0;
  EXPECT_FALSE(off.Validate().ok());
  // The defaults of the limits (no keep-alive request cap, as Envoy; a cap derived from the fd
  // limit).
  EXPECT_EQ(defaults.max_header_line, 16 * 1024);
  EXPECT_EQ(defaults.max_requests_per_connection, 0);
  EXPECT_EQ(defaults.max_connections, 0);
  EXPECT_GE(DefaultMaxConnections(), 16);
}

TEST(GatewayConfigTest, AdminOffLoopbackNeedsAToken) {
  GatewayConfig config;
  ASSERT_TRUE(ParseConfigToml("[admin]\naddress = \"0.0.0.0\"\n", "g.toml", &config).ok());
  Status refused = config.Validate();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("admin.address \"0.0.0.0\" is not a loopback address: set "
                                   "admin.token_file"),
            std::string::npos)
      << refused;
  config.admin_token_file = "/run/portico/admin.token";
  EXPECT_TRUE(config.Validate().ok());
}

TEST(GatewayConfigTest, ErrorsNameFileLineAndKey) {
  struct Case {
    const char* toml;
    const char* want;
  };
  std::vector<Case> cases = {
      {"workers = \"two\"\n", "g.toml:1: workers: expected an integer"},
      {"\n\nworkrs = 2\n", "g.toml:3: unknown setting \"workrs\""},
      {"[admin]\nport = 70000\n", "g.toml:2: admin.port: 70000 is out of range [0, 65535]"},
      {"[serve]\ngateway = [\"a\"]\n", "g.toml:2: unknown setting \"serve.gateway\""},
      {"[serve]\ngateways = [\"a/b/c\"]\n", "g.toml:2: serve.gateways: gateway \"a/b/c\""},
      {"[serve]\ngateways = \"a\"\n", "g.toml:2: serve.gateways: expected an array of strings"},
      {"addresses = [1]\n", "g.toml:1: addresses: expected an array of strings"},
      {"controller = \"nohost\"\n", "g.toml:1: controller: \"nohost\" is not host:port"},
      {"controller = \"h:99999\"\n", "g.toml:1: controller:"},
      {"log_level = \"loud\"\n", "g.toml:1: log_level: \"loud\" is not one of"},
      {"serve = 3\n", "g.toml:1: serve: expected a table"},
      {"workers = \n", "g.toml:1:"},
      {"[conf_sync_security]\nactive = \"nope\"\n", "conf_sync_security"},
      {"[timeouts]\nconnect_ms = 0\n", "g.toml:2: timeouts.connect_ms: 0 is out of range"},
      {"[limits]\nmax_headrs = 5\n", "g.toml:2: unknown setting \"limits.max_headrs\""},
      {"access_log = \"\"\n", "g.toml:1: access_log: empty"},
      {"busy_poll_us = -1\n", "g.toml:1: busy_poll_us: -1 is out of range [0, 10000]"},
      {"escaped_slashes = \"Keep\"\n", "g.toml:1: escaped_slashes: \"Keep\" is not one of"},
  };
  for (const Case& c : cases) {
    GatewayConfig config;
    Status status = ParseConfigToml(c.toml, "g.toml", &config);
    ASSERT_FALSE(status.ok()) << c.toml;
    EXPECT_NE(status.message().find(c.want), std::string::npos)
        << "got: " << status.message() << "\nwant: " << c.want;
  }
}

TEST(GatewayConfigTest, SyncSecurityResolvesAgainstTheFile) {
  TempDir dir;
  fs::create_directories(dir.path() / "certs");
  for (const char* name : {"ca.crt", "client.crt", "client.key"}) {
    std::ofstream(dir.path() / "certs" / name) << "x";
  }
  GatewayConfig config;
  Status status = ParseConfigToml(R"(
[conf_sync_security]
active = "prod"
[[conf_sync_security.certs]]
name = "prod"
ca_file = "certs/ca.crt"
cert_file = "certs/client.crt"
key_file = "certs/client.key"
)",
                                  dir.path() / "portico-gateway.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(config.sync_security.enabled);
  EXPECT_EQ(config.sync_security.active.name, "prod");
  EXPECT_EQ(config.sync_security.active.ca_file, dir.path() / "certs/ca.crt");
}

// Parse runs the flags over `args` (argv[0] included).
StatusOr<GatewayConfig> Parse(std::vector<std::string> args, ConfigFlags* flags) {
  CLI::App app;
  AddConfigFlags(app, flags);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return InvalidArgumentError(e.what());
  }
  return ResolveConfig(*flags);
}

TEST(GatewayConfigFlagsTest, NoArgumentsWork) {
  ConfigFlags flags;
  auto config = Parse({"portico-gateway"}, &flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->controller, "127.0.0.1:5810");
  EXPECT_EQ(config->name, DefaultGatewayName());
  EXPECT_EQ(config->admin_port, 5900);
  EXPECT_FALSE(flags.check);
}

TEST(GatewayConfigFlagsTest, FlagsOverrideTheFileAndDefaultsDoNot) {
  TempDir dir;
  fs::path file = dir.path() / "portico-gateway.toml";
  std::ofstream(file) << "name = \"from-file\"\nworkers = 6\nsnapshot_path = \"snap\"\n"
                         "[serve]\ngateways = [\"a/b\"]\n[admin]\nport = 7000\n";
  ConfigFlags flags;
  auto config = Parse({"portico-gateway", "--config", file.string(), "--admin-port", "0",
                       "--gateway", "x/y", "--gateway", "z", "--advertise-address", "192.0.2.7",
                       "--controller", "ctl:5811", "--busy-poll-us", "7", "--check"},
                      &flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name, "from-file");                              // from the file
  EXPECT_EQ(config->workers, 6);                                     // flag default does not win
  EXPECT_EQ(config->snapshot_path, (dir.path() / "snap").string());  // relative to the file
  EXPECT_EQ(config->admin_port, 0);                                  // the flag wins
  EXPECT_EQ(config->gateways, (std::vector<std::string>{"x/y", "z"}));
  EXPECT_EQ(config->addresses, std::vector<std::string>{"192.0.2.7"});
  EXPECT_EQ(config->controller, "ctl:5811");
  EXPECT_EQ(config->busy_poll_us, 7);
  EXPECT_TRUE(flags.check);

  ConfigFlags bad;
  auto invalid = Parse({"portico-gateway", "--gateway", "a/b/c"}, &bad);
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.status().message().find("a/b/c"), std::string::npos);
  ConfigFlags half_tls;
  auto half = Parse({"portico-gateway", "--sync-ca-file", file.string()}, &half_tls);
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("go together"), std::string::npos);
}

// [sync]: the ConfigSync channel's keepalive (how fast a black-holed link is found).
TEST(GatewayConfigTest, SyncKeepaliveFromTheFileAndFlags) {
  GatewayConfig defaults;
  EXPECT_EQ(defaults.sync_keepalive_ms, 5000);
  EXPECT_EQ(defaults.sync_keepalive_timeout_ms, 5000);
  GatewayConfig config;
  Status status = ParseConfigToml("[sync]\nkeepalive_ms = 1000\nkeepalive_timeout_ms = 700\n",
                                  "g.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.sync_keepalive_ms, 1000);
  EXPECT_EQ(config.sync_keepalive_timeout_ms, 700);
  EXPECT_TRUE(config.Validate().ok());

  // Faster than the controller accepts pings: refused, naming the key and the line.
  GatewayConfig fast;
  Status refused = ParseConfigToml("[sync]\nkeepalive_ms = 200\n", "g.toml", &fast);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("sync.keepalive_ms"), std::string::npos) << refused;
  EXPECT_NE(refused.message().find("g.toml"), std::string::npos) << refused;
  GatewayConfig unknown;
  EXPECT_FALSE(ParseConfigToml("[sync]\nkeepalive = 1\n", "g.toml", &unknown).ok());

  ConfigFlags flags;
  auto from_flags = Parse(
      {"portico-gateway", "--sync-keepalive-ms", "2000", "--sync-keepalive-timeout-ms", "300"},
      &flags);
  ASSERT_TRUE(from_flags.ok()) << from_flags.status();
  EXPECT_EQ(from_flags->sync_keepalive_ms, 2000);
  EXPECT_EQ(from_flags->sync_keepalive_timeout_ms, 300);
  ConfigFlags low;
  auto too_low = Parse({"portico-gateway", "--sync-keepalive-ms", "10"}, &low);
  ASSERT_FALSE(too_low.ok());
  EXPECT_NE(too_low.status().message().find("sync.keepalive_ms"), std::string::npos);
}

TEST(GatewayConfigTest, SeveralControllersAsAListOrCommaSeparated) {
  GatewayConfig config;
  Status status = ParseConfigToml("controller = [\"10.0.0.1:5810\", \"10.0.0.2:5810\"]\n",
                                  "/etc/portico/portico-gateway.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.Controllers(), (std::vector<std::string>{"10.0.0.1:5810", "10.0.0.2:5810"}));
  EXPECT_TRUE(config.Validate().ok());
  GatewayConfig bad;
  status = ParseConfigToml("controller = [\"10.0.0.1:5810\", \"nope\"]\n", "gw.toml", &bad);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("gw.toml:1"), std::string::npos) << status;
  EXPECT_NE(status.message().find("\"nope\" is not host:port"), std::string::npos) << status;
  status = ParseConfigToml("controller = []\n", "gw.toml", &bad);
  EXPECT_FALSE(status.ok());

  ConfigFlags flags;
  auto flagged = Parse({"portico-gateway", "--controller", "a:1, b:2,c:3"}, &flags);
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  EXPECT_EQ(flagged->Controllers(), (std::vector<std::string>{"a:1", "b:2", "c:3"}));
  ConfigFlags one;
  auto single = Parse({"portico-gateway", "--controller", "ctl:5811"}, &one);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->Controllers(), std::vector<std::string>{"ctl:5811"});
  ConfigFlags wrong;
  auto refused = Parse({"portico-gateway", "--controller", "a:1,b"}, &wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("\"b\""), std::string::npos) << refused.status();
}

TEST(GatewayConfigFlagsTest, TlsFilesFromFlags) {
  TempDir dir;
  for (const char* name : {"ca.crt", "client.crt", "client.key"}) {
    std::ofstream(dir.path() / name) << "x";
  }
  ConfigFlags flags;
  auto config =
      Parse({"portico-gateway", "--sync-ca-file", (dir.path() / "ca.crt").string(),
             "--sync-cert-file", (dir.path() / "client.crt").string(), "--sync-key-file",
             (dir.path() / "client.key").string(), "--sync-server-name", "controller.test"},
            &flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->sync_security.enabled);
  EXPECT_EQ(config->sync_security.active.cert_file, dir.path() / "client.crt");
  EXPECT_EQ(config->sync_security.active.server_name, "controller.test");

  ConfigFlags missing;
  auto absent = Parse({"portico-gateway", "--sync-ca-file", (dir.path() / "nope").string(),
                       "--sync-cert-file", (dir.path() / "client.crt").string(), "--sync-key-file",
                       (dir.path() / "client.key").string()},
                      &missing);
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.status().message().find("nope"), std::string::npos);
}

}  // namespace
}  // namespace portico::gateway
