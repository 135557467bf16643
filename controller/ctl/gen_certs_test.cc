// gen_certs_test.cc: GenerateSyncCerts and `portico-ctl gen-certs`, checked with OpenSSL's own
// verifier: chains, purposes, SANs, key modes, no silent overwrite.
#include "controller/ctl/gen_certs.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "controller/ctl/gen_certs_command.h"

namespace portico::ctl {
namespace {

namespace fs = std::filesystem;

template <auto kFree>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const {
    kFree(p);
  }
};
using X509Ptr = std::unique_ptr<X509, FreeWith<X509_free>>;
using StorePtr = std::unique_ptr<X509_STORE, FreeWith<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, FreeWith<X509_STORE_CTX_free>>;
using PKeyPtr = std::unique_ptr<EVP_PKEY, FreeWith<EVP_PKEY_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, FreeWith<GENERAL_NAMES_free>>;

class GenCertsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "portico-gen-certs-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  GenCertsOptions Options(std::string name = "prod") const {
    GenCertsOptions options;
    options.cert_name = std::move(name);
    options.out_dir = dir_;
    return options;
  }

  fs::path dir_;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

X509Ptr LoadCert(const fs::path& path) {
  std::unique_ptr<FILE, FreeWith<fclose>> file{fopen(path.c_str(), "r")};
  if (file == nullptr) return nullptr;
  return X509Ptr{PEM_read_X509(file.get(), nullptr, nullptr, nullptr)};
}

PKeyPtr LoadKey(const fs::path& path) {
  std::unique_ptr<FILE, FreeWith<fclose>> file{fopen(path.c_str(), "r")};
  if (file == nullptr) return nullptr;
  return PKeyPtr{PEM_read_PrivateKey(file.get(), nullptr, nullptr, nullptr)};
}

// Verify checks `leaf` against `ca` alone for `purpose` (X509_PURPOSE_SSL_SERVER/CLIENT);
// returns "" or OpenSSL's reason.
std::string Verify(X509* ca, X509* leaf, int purpose) {
  StorePtr store{X509_STORE_new()};
  X509_STORE_add_cert(store.get(), ca);
  StoreCtxPtr ctx{X509_STORE_CTX_new()};
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr);
  X509_STORE_CTX_set_purpose(ctx.get(), purpose);
  if (X509_verify_cert(ctx.get()) == 1) return "";
  return X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
}

// Sans lists "DNS:name" and "IP:address" entries of `cert`.
std::set<std::string> Sans(X509* cert) {
  std::set<std::string> out;
  NamesPtr names{
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr))};
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    std::unique_ptr<BIO, FreeWith<BIO_free>> bio{BIO_new(BIO_s_mem())};
    GENERAL_NAME_print(bio.get(), sk_GENERAL_NAME_value(names.get(), i));
    char* data = nullptr;
    long size = BIO_get_mem_data(bio.get(), &data);
    std::string text(data, static_cast<size_t>(size));  // "DNS:x" or "IP Address:x"
    if (text.rfind("IP Address:", 0) == 0) text = "IP:" + text.substr(11);
    out.insert(text);
  }
  return out;
}

TEST_F(GenCertsTest, ServerAndClientChainToTheCaWithTheirPurposes) {
  GenCertsOptions options = Options();
  options.hosts = {"controller.example.com", "10.1.2.3", "[fd00::5]"};
  ASSERT_TRUE(GenerateSyncCerts(options).ok());
  fs::path set = dir_ / "prod";
  X509Ptr ca = LoadCert(set / "ca.crt");
  X509Ptr server = LoadCert(set / "server.crt");
  X509Ptr client = LoadCert(set / "client.crt");
  ASSERT_NE(ca, nullptr);
  ASSERT_NE(server, nullptr);
  ASSERT_NE(client, nullptr);

  EXPECT_EQ(Verify(ca.get(), server.get(), X509_PURPOSE_SSL_SERVER), "");
  EXPECT_EQ(Verify(ca.get(), client.get(), X509_PURPOSE_SSL_CLIENT), "");
  // Each leaf is good for its own side only (extendedKeyUsage).
  EXPECT_NE(Verify(ca.get(), server.get(), X509_PURPOSE_SSL_CLIENT), "");
  EXPECT_NE(Verify(ca.get(), client.get(), X509_PURPOSE_SSL_SERVER), "");

  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  EXPECT_EQ(X509_check_ca(server.get()), 0);
  EXPECT_EQ(X509_check_ca(client.get()), 0);
  EXPECT_EQ(Sans(server.get()),
            (std::set<std::string>{"DNS:localhost", "IP:127.0.0.1", "IP:0:0:0:0:0:0:0:1",
                                   "DNS:controller.example.com", "IP:10.1.2.3",
                                   "IP:FD00:0:0:0:0:0:0:5"}));
  EXPECT_TRUE(Sans(client.get()).empty());
  EXPECT_EQ(X509_check_host(server.get(), "controller.example.com", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.0.0.1", 0), 1);

  // Keys: EC P-256, matching their certificates, readable by the owner only.
  for (const char* name : {"ca", "server", "client"}) {
    SCOPED_TRACE(name);
    PKeyPtr key = LoadKey(set / (std::string(name) + ".key"));
    ASSERT_NE(key, nullptr);
    EXPECT_EQ(EVP_PKEY_get_id(key.get()), EVP_PKEY_EC);
    EXPECT_EQ(EVP_PKEY_get_bits(key.get()), 256);
    X509Ptr cert = LoadCert(set / (std::string(name) + ".crt"));
    EXPECT_EQ(X509_check_private_key(cert.get(), key.get()), 1);
    struct stat st {};
    ASSERT_EQ(stat((set / (std::string(name) + ".key")).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
}

TEST_F(GenCertsTest, ValidityFollowsDays) {
  GenCertsOptions options = Options();
  options.days = 10;
  ASSERT_TRUE(GenerateSyncCerts(options).ok());
  X509Ptr server = LoadCert(dir_ / "prod" / "server.crt");
  ASSERT_NE(server, nullptr);
  int days = 0;
  int seconds = 0;
  ASSERT_EQ(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(server.get()),
                           X509_get0_notAfter(server.get())),
            1);
  EXPECT_EQ(days, 10);  // plus the few minutes notBefore is backdated
}

TEST_F(GenCertsTest, AnotherSetHasAnotherCa) {
  ASSERT_TRUE(GenerateSyncCerts(Options("a")).ok());
  ASSERT_TRUE(GenerateSyncCerts(Options("b")).ok());
  X509Ptr ca_a = LoadCert(dir_ / "a" / "ca.crt");
  X509Ptr client_b = LoadCert(dir_ / "b" / "client.crt");
  EXPECT_NE(Verify(ca_a.get(), client_b.get(), X509_PURPOSE_SSL_CLIENT), "");
}

TEST_F(GenCertsTest, ExistingFilesAreNotOverwrittenWithoutForce) {
  ASSERT_TRUE(GenerateSyncCerts(Options()).ok());
  std::string ca_before = ReadFile(dir_ / "prod" / "ca.crt");

  Status again = GenerateSyncCerts(Options());
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.message().find((dir_ / "prod" / "ca.crt").string()), std::string::npos)
      << again.message();
  EXPECT_NE(again.message().find("--force"), std::string::npos);
  EXPECT_EQ(ReadFile(dir_ / "prod" / "ca.crt"), ca_before);

  // One leftover file is enough to refuse, and nothing else is written then.
  fs::remove(dir_ / "prod" / "ca.crt");
  fs::remove(dir_ / "prod" / "ca.key");
  EXPECT_EQ(GenerateSyncCerts(Options()).code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(fs::exists(dir_ / "prod" / "ca.crt"));

  GenCertsOptions force = Options();
  force.force = true;
  ASSERT_TRUE(GenerateSyncCerts(force).ok());
  EXPECT_NE(ReadFile(dir_ / "prod" / "server.crt"), "");
  EXPECT_NE(ReadFile(dir_ / "prod" / "ca.crt"), ca_before);
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "prod" / "server.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(GenCertsTest, ForceDoesNotWriteThroughASymlink) {
  fs::create_directories(dir_ / "prod");
  fs::path target = dir_ / "elsewhere";
  { std::ofstream(target) << "keep"; }
  fs::create_symlink(target, dir_ / "prod" / "ca.key");
  EXPECT_EQ(GenerateSyncCerts(Options()).code(), StatusCode::kAlreadyExists);
  GenCertsOptions force = Options();
  force.force = true;
  ASSERT_TRUE(GenerateSyncCerts(force).ok());
  EXPECT_EQ(ReadFile(target), "keep");
  EXPECT_FALSE(fs::is_symlink(dir_ / "prod" / "ca.key"));
}

TEST_F(GenCertsTest, RejectsBadArguments) {
  GenCertsOptions bad_name = Options("../x");
  EXPECT_EQ(GenerateSyncCerts(bad_name).code(), StatusCode::kInvalidArgument);
  GenCertsOptions bad_host = Options();
  bad_host.hosts = {"bad host"};
  Status status = GenerateSyncCerts(bad_host);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("bad host"), std::string::npos) << status.message();
  GenCertsOptions bad_days = Options();
  bad_days.days = 0;
  EXPECT_EQ(GenerateSyncCerts(bad_days).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir_ / "prod"));
}

TEST_F(GenCertsTest, CommandPrintsFilesAndTomlForBothSides) {
  std::ostringstream out;
  std::ostringstream err;
  GenCertsOptions options = Options();
  ASSERT_EQ(RunGenCerts(options, out, err), 0) << err.str();
  const std::string text = out.str();
  const std::string set = (dir_ / "prod").string();
  for (const char* file :
       {"ca.crt", "ca.key", "server.crt", "server.key", "client.crt", "client.key"}) {
    EXPECT_NE(text.find(set + "/" + file + "\n"), std::string::npos) << file << "\n" << text;
  }
  EXPECT_NE(text.find("# portico-controller.toml\n[conf_sync_security]\nactive = \"prod\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# portico-gateway.toml\n[conf_sync_security]\nactive = \"prod\"\n"),
            std::string::npos);
  EXPECT_NE(text.find("cert_file = \"" + set + "/server.crt\""), std::string::npos);
  EXPECT_NE(text.find("key_file  = \"" + set + "/client.key\""), std::string::npos);

  std::ostringstream out2;
  EXPECT_EQ(RunGenCerts(options, out2, err), 1);
  EXPECT_NE(err.str().find("error: gen-certs: " + set + "/ca.crt already exists"),
            std::string::npos)
      << err.str();
}

TEST_F(GenCertsTest, CommandLineFlags) {
  CLI::App app;
  int exit_code = -1;
  AddGenCertsCommand(app, &exit_code);
  std::string out = dir_.string();
  std::vector<std::string> args = {"portico-ctl", "gen-certs", "--cert-name", "edge",
                                   "--out",       out,         "--days",      "30",
                                   "--host",      "a.example", "--host",      "10.0.0.1,b.example"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStdout();
  app.parse(static_cast<int>(argv.size()), argv.data());
  std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(exit_code, 0);
  X509Ptr server = LoadCert(dir_ / "edge" / "server.crt");
  ASSERT_NE(server, nullptr);
  std::set<std::string> sans = Sans(server.get());
  EXPECT_TRUE(sans.count("DNS:a.example"));
  EXPECT_TRUE(sans.count("DNS:b.example"));
  EXPECT_TRUE(sans.count("IP:10.0.0.1"));
  EXPECT_NE(printed.find("a.example, 10.0.0.1, b.example"), std::string::npos) << printed;

  CLI::App missing;
  AddGenCertsCommand(missing, &exit_code);
  std::vector<std::string> no_name = {"portico-ctl", "gen-certs", "--out", out};
  std::vector<char*> argv2;
  for (std::string& arg : no_name) argv2.push_back(arg.data());
  EXPECT_THROW(missing.parse(static_cast<int>(argv2.size()), argv2.data()), CLI::RequiredError);
}

}  // namespace
}  // namespace portico::ctl
