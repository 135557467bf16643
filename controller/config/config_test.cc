// config_test.cc: portico-controller.toml parsing and its merge with flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "controller/config/config_flags.h"
#include "controller/config/controller_config.h"

namespace portico::controller {
namespace {

namespace fs = std::filesystem;

TEST(ControllerConfigTest, DefaultsWork) {
  ControllerConfig config;
  EXPECT_TRUE(config.Validate().ok());
  EXPECT_EQ(config.admin_address, "127.0.0.1");
  EXPECT_EQ(config.admin_port, 5800);
  EXPECT_EQ(config.sync_port, 5810);
  EXPECT_EQ(config.sync_address, "");  // decided by whether conf_sync_security is set
  EXPECT_FALSE(config.sync_security.enabled);
  EXPECT_FALSE(config.testing);
}

TEST(ControllerConfigTest, SyncSettings) {
  fs::path dir = fs::temp_directory_path() / ("portico-config-sync-" + std::to_string(getpid()));
  fs::create_directories(dir / "certs");
  for (const char* name : {"ca.crt", "server.crt", "server.key"}) {
    std::ofstream(dir / "certs" / name) << "x";
  }
  ControllerConfig config;
  Status status = ParseConfigToml(R"([sync]
port = 0
port_file = "run/sync.port"
[conf_sync_security]
active = "prod"
[[conf_sync_security.certs]]
name = "prod"
ca_file = "certs/ca.crt"
cert_file = "certs/server.crt"
key_file = "certs/server.key"
)",
                                  dir / "portico-controller.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.sync_port, 0);
  EXPECT_EQ(config.sync_port_file, (dir / "run/sync.port").string());
  EXPECT_TRUE(config.sync_security.enabled);
  EXPECT_EQ(config.sync_security.active.name, "prod");
  EXPECT_EQ(config.sync_security.active.ca_file, dir / "certs/ca.crt");

  ControllerConfig bad;
  Status refused =
      ParseConfigToml("[conf_sync_security]\nactive = \"nope\"\n", dir / "c.toml", &bad);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("conf_sync_security"), std::string::npos) << refused;
  fs::remove_all(dir);
}

TEST(ControllerConfigTest, AdminOffLoopbackNeedsAToken) {
  ControllerConfig config;
  config.config_dir = "/etc/portico/conf.d";
  config.admin_address = "::";
  Status refused = config.Validate();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("admin.address \"::\" is not a loopback address"),
            std::string::npos)
      << refused;
  config.admin_token_file = "/run/portico/admin.token";
  EXPECT_TRUE(config.Validate().ok()) << config.Validate();
}

TEST(ControllerConfigTest, ParsesEveryKey) {
  ControllerConfig config;
  Status status = ParseConfigToml(R"(
config_dir = "conf.d"
plugin_dir = "/opt/portico/plugins"
debounce_ms = 120
workers = 4
log_level = "debug"
testing = true
[admin]
address = "0.0.0.0"
port = 0
port_file = "run/admin.port"
token_file = "run/admin.token"
[sync]
address = "127.0.0.1"
port = 6810
)",
                                  "/etc/portico/portico-controller.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.config_dir, "/etc/portico/conf.d");  // relative to the file
  EXPECT_EQ(config.plugin_dir, "/opt/portico/plugins");
  EXPECT_EQ(config.debounce_ms, 120);
  EXPECT_EQ(config.workers, 4);
  EXPECT_EQ(config.log_level, "debug");
  EXPECT_TRUE(config.testing);
  EXPECT_EQ(config.admin_address, "0.0.0.0");
  EXPECT_EQ(config.admin_port, 0);
  EXPECT_EQ(config.admin_port_file, "/etc/portico/run/admin.port");
  EXPECT_EQ(config.admin_token_file, "/etc/portico/run/admin.token");
  EXPECT_EQ(config.sync_address, "127.0.0.1");
  EXPECT_EQ(config.sync_port, 6810);
  EXPECT_EQ(config.config_file, "/etc/portico/portico-controller.toml");
}

TEST(ControllerConfigTest, ErrorsNameFileLineAndKey) {
  struct Case {
    const char* toml;
    const char* want;
  };
  std::vector<Case> cases = {
      {"workers = \"two\"\n", "c.toml:1: workers: expected an integer"},
      {"\n\nworkrs = 2\n", "c.toml:3: unknown setting \"workrs\""},
      {"[admin]\nport = 70000\n", "c.toml:2: admin.port: 70000 is out of range [0, 65535]"},
      {"[admin]\nhost = \"x\"\n", "c.toml:2: unknown setting \"admin.host\""},
      {"log_level = \"loud\"\n", "log_level: \"loud\" is not one of"},
      {"testing = 1\n", "c.toml:1: testing: expected true or false"},
      {"admin = 3\n", "c.toml:1: admin: expected a table"},
      {"workers = \n", "c.toml:1:"},
  };
  for (const Case& c : cases) {
    ControllerConfig config;
    Status status = ParseConfigToml(c.toml, "c.toml", &config);
    ASSERT_FALSE(status.ok()) << c.toml;
    EXPECT_NE(status.message().find(c.want), std::string::npos)
        << "got: " << status.message() << "\nwant: " << c.want;
  }
}

// Parse runs the flags over `args` (argv[0] included).
StatusOr<ControllerConfig> Parse(std::vector<std::string> args, ConfigFlags* flags) {
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

TEST(ConfigFlagsTest, ConfigDirAloneWorks) {
  ConfigFlags flags;
  auto config = Parse({"portico-controller", "--config-dir", "/srv/conf"}, &flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->config_dir, "/srv/conf");
  EXPECT_EQ(config->admin_port, 5800);
  EXPECT_FALSE(flags.check);
}

TEST(ConfigFlagsTest, FlagsOverrideTheFileAndDefaultsDoNot) {
  std::string dir_template = (fs::temp_directory_path() / "portico-config-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir_template.data()), nullptr);
  fs::path dir = dir_template;
  fs::path file = dir / "portico-controller.toml";
  std::ofstream(file) << "config_dir = \"conf.d\"\nworkers = 6\n[admin]\nport = 7000\n";

  ConfigFlags flags;
  auto config = Parse({"portico-controller", "--config", file.string(), "--admin-port", "0",
                       "--testing", "--check"},
                      &flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->config_dir, (dir / "conf.d").string());  // from the file
  EXPECT_EQ(config->workers, 6);                             // the flag's default does not win
  EXPECT_EQ(config->admin_port, 0);                          // the flag wins
  EXPECT_TRUE(config->testing);
  EXPECT_TRUE(flags.check);
  EXPECT_EQ(config->config_file, file.string());

  ConfigFlags bad;
  auto invalid = Parse({"portico-controller", "--workers", "0"}, &bad);
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.status().message().find("workers"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ConfigFlagsTest, SyncLogBoundsFromFileAndFlags) {
  ControllerConfig defaults;
  EXPECT_EQ(defaults.sync_log_max_bytes, uint64_t{64} << 20);
  EXPECT_EQ(defaults.sync_log_max_age_ms, 300'000);

  ControllerConfig config;
  Status status = ParseConfigToml("[sync]\nlog_max_bytes = 65536\nlog_max_age_ms = 120000\n",
                                  "c.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.sync_log_max_bytes, 65536u);
  EXPECT_EQ(config.sync_log_max_age_ms, 120'000);

  ControllerConfig zero;
  Status refused = ParseConfigToml("[sync]\nlog_max_bytes = 0\n", "c.toml", &zero);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("c.toml:2: sync.log_max_bytes: 0 is out of range"),
            std::string::npos)
      << refused;

  ConfigFlags flags;
  auto parsed =
      Parse({"portico-controller", "--sync-log-max-bytes", "4096", "--sync-log-max-age-ms", "1500"},
            &flags);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->sync_log_max_bytes, 4096u);
  EXPECT_EQ(parsed->sync_log_max_age_ms, 1500);

  ConfigFlags negative;
  auto bad = Parse({"portico-controller", "--sync-log-max-age-ms", "-1"}, &negative);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sync.log_max_age_ms"), std::string::npos) << bad.status();
}

TEST(ConfigFlagsTest, LimitsFromFileAndFlags) {
  ControllerConfig defaults;
  EXPECT_EQ(defaults.max_object_bytes, 1536u * 1024);
  EXPECT_EQ(defaults.max_annotation_bytes, 256u * 1024);
  EXPECT_EQ(defaults.max_file_bytes, uint64_t{64} << 20);
  EXPECT_EQ(defaults.max_objects_per_file, 10'000u);
  EXPECT_EQ(defaults.large_file_bytes, uint64_t{1} << 20);

  ControllerConfig config;
  Status status = ParseConfigToml(
      "[limits]\nmax_object_bytes = 1000\nmax_annotation_bytes = 100\nmax_file_bytes = 5000\n"
      "max_objects_per_file = 7\nlarge_file_bytes = 0\n",
      "c.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.max_object_bytes, 1000u);
  EXPECT_EQ(config.max_annotation_bytes, 100u);
  EXPECT_EQ(config.max_file_bytes, 5000u);
  EXPECT_EQ(config.max_objects_per_file, 7u);
  EXPECT_EQ(config.large_file_bytes, 0u);

  ControllerConfig zero;
  Status refused = ParseConfigToml("[limits]\n\nmax_objects_per_file = 0\n", "c.toml", &zero);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("c.toml:3: limits.max_objects_per_file: 0 is out of range"),
            std::string::npos)
      << refused;
  ControllerConfig unknown;
  EXPECT_FALSE(ParseConfigToml("[limits]\nmax_objects = 3\n", "c.toml", &unknown).ok());

  ConfigFlags flags;
  auto parsed = Parse(
      {"portico-controller", "--max-object-bytes", "4096", "--max-annotation-bytes", "512",
       "--max-file-bytes", "8192", "--max-objects-per-file", "3", "--large-file-bytes", "2048"},
      &flags);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->max_object_bytes, 4096u);
  EXPECT_EQ(parsed->max_annotation_bytes, 512u);
  EXPECT_EQ(parsed->max_file_bytes, 8192u);
  EXPECT_EQ(parsed->max_objects_per_file, 3u);
  EXPECT_EQ(parsed->large_file_bytes, 2048u);

  ConfigFlags none;
  auto bad = Parse({"portico-controller", "--max-object-bytes", "0"}, &none);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("limits.max_object_bytes: must be positive"),
            std::string::npos)
      << bad.status();
}

TEST(ConfigFlagsTest, PluginIsolationFromFileAndFlags) {
  ControllerConfig defaults;
  EXPECT_TRUE(defaults.isolate_plugins.empty());
  EXPECT_FALSE(defaults.isolate_all);
  EXPECT_EQ(defaults.process_timeout_ms, 5000);

  ControllerConfig config;
  Status status = ParseConfigToml(
      "[plugins]\nisolate = [\"webhook\", \"thirdparty\"]\nisolate_all = true\n"
      "process_timeout_ms = 250\n",
      "c.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.isolate_plugins, (std::vector<std::string>{"webhook", "thirdparty"}));
  EXPECT_TRUE(config.isolate_all);
  EXPECT_EQ(config.process_timeout_ms, 250);

  ControllerConfig zero;
  Status refused = ParseConfigToml("[plugins]\nprocess_timeout_ms = 0\n", "c.toml", &zero);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("c.toml:2: plugins.process_timeout_ms: 0 is out of range"),
            std::string::npos)
      << refused;
  ControllerConfig unknown;
  EXPECT_FALSE(ParseConfigToml("[plugins]\nisolate_some = 3\n", "c.toml", &unknown).ok());

  ConfigFlags flags;
  auto parsed = Parse({"portico-controller", "--isolate-plugin", "a", "--isolate-plugin", "b",
                       "--process-timeout-ms", "900"},
                      &flags);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->isolate_plugins, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(parsed->isolate_all);
  EXPECT_EQ(parsed->process_timeout_ms, 900);
}

TEST(ConfigFlagsTest, EtcdFromTheFileAndFlags) {
  ControllerConfig config;
  Status status = ParseConfigToml(R"([etcd]
endpoints = ["127.0.0.1:2379", "https://127.0.0.1:22379"]
prefix = "/team"
ca_file = "ca.pem"
user = "portico"
password_file = "pw"
start_timeout_ms = 500
)",
                                  "/etc/portico/c.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(config.etcd.enabled());
  EXPECT_EQ(config.etcd.endpoints,
            (std::vector<std::string>{"127.0.0.1:2379", "https://127.0.0.1:22379"}));
  EXPECT_EQ(config.etcd.prefix, "/team");
  EXPECT_EQ(config.etcd.ca_file, "/etc/portico/ca.pem");  // relative to the file
  EXPECT_EQ(config.etcd.password_file, "/etc/portico/pw");
  EXPECT_EQ(config.etcd.start_timeout_ms, 500);
  EXPECT_TRUE(config.Validate().ok());
  ControllerConfig unknown;
  Status typo = ParseConfigToml("[etcd]\nendpoint = [\"x:1\"]\n", "c.toml", &unknown);
  EXPECT_FALSE(typo.ok());
  EXPECT_NE(typo.message().find("etcd.endpoint"), std::string::npos) << typo;

  ConfigFlags flags;
  auto flagged = Parse({"portico-controller", "--etcd-endpoints", "127.0.0.1:1,127.0.0.1:2",
                        "--etcd-prefix", "/x", "--etcd-user", "u"},
                       &flags);
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  EXPECT_EQ(flagged->etcd.endpoints, (std::vector<std::string>{"127.0.0.1:1", "127.0.0.1:2"}));
  EXPECT_EQ(flagged->etcd.prefix, "/x");
  EXPECT_EQ(flagged->etcd.user, "u");

  ConfigFlags both;
  auto refused =
      Parse({"portico-controller", "--etcd-endpoints", "127.0.0.1:1", "--config-dir", "/c"}, &both);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("choose the directory or etcd"), std::string::npos);
  ConfigFlags no_slash;
  auto bad_prefix = Parse(
      {"portico-controller", "--etcd-endpoints", "127.0.0.1:1", "--etcd-prefix", "x"}, &no_slash);
  ASSERT_FALSE(bad_prefix.ok());
  EXPECT_NE(bad_prefix.status().message().find("must start with '/'"), std::string::npos);
}

TEST(ConfigFlagsTest, LeaderElectionSettings) {
  ControllerConfig config;
  Status status = ParseConfigToml(
      "[etcd]\nendpoints = [\"127.0.0.1:2379\"]\ncontroller_id = \"ctl-a\"\n"
      "leader_ttl_s = 3\nleader_renew_ms = 500\n",
      "/etc/portico/c.toml", &config);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.etcd.controller_id, "ctl-a");
  EXPECT_EQ(config.etcd.leader_ttl_s, 3);
  EXPECT_EQ(config.etcd.leader_renew_ms, 500);
  EXPECT_TRUE(config.Validate().ok());
  ControllerConfig zero;
  Status refused = ParseConfigToml("[etcd]\nleader_ttl_s = 0\n", "c.toml", &zero);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("etcd.leader_ttl_s"), std::string::npos) << refused;

  ConfigFlags flags;
  auto flagged = Parse({"portico-controller", "--etcd-endpoints", "127.0.0.1:1", "--controller-id",
                        "ctl-b", "--leader-ttl-s", "7"},
                       &flags);
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  EXPECT_EQ(flagged->etcd.controller_id, "ctl-b");
  EXPECT_EQ(flagged->etcd.leader_ttl_s, 7);
  EXPECT_EQ(flagged->etcd.leader_renew_ms, 0);  // TTL / 3
  ConfigFlags slow;
  auto too_slow = Parse({"portico-controller", "--etcd-endpoints", "127.0.0.1:1", "--leader-ttl-s",
                         "2", "--leader-renew-ms", "2000"},
                        &slow);
  ASSERT_FALSE(too_slow.ok());
  EXPECT_NE(too_slow.status().message().find("shorter than the lease TTL"), std::string::npos)
      << too_slow.status();
}

}  // namespace
}  // namespace portico::controller
