// file_config_center_test: FileConfigCenter against real files in temporary directories. Tests
// never sleep to synchronise: the listener records batches and error reports under a mutex, and
// tests wait for a condition with a deadline.
#include "controller/center/file_config_center.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/center/testing/test_identifier.h"
#include "portico/sdk/json.h"

namespace portico::controller {
namespace {

namespace fs = std::filesystem;
using std::chrono_literals::operator""s;

constexpr auto kDeadline = 5s;

using testing::TestIdentifier;

std::string Route(const std::string& name, const std::string& host = "a.example") {
  return "apiVersion: gateway.networking.k8s.io/v1\n"
         "kind: HTTPRoute\n"
         "metadata:\n"
         "  name: " +
         name +
         "\n"
         "spec:\n"
         "  hostnames: [\"" +
         host + "\"]\n";
}
constexpr int kRouteLines = 6;

std::string GatewayClass(const std::string& name) {
  return "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: " +
         name + "\nspec:\n  controllerName: portico.io/gateway-controller\n";
}

// Change and Batch are what the listener saw, flattened for assertions.
struct Change {
  ConfigChange::Op op;
  std::string object;  // "HTTPRoute default/r1"
  std::string json;    // "" on delete
  SourceLocation source;
};
struct Batch {
  bool initial = false;
  std::vector<Change> changes;
};

// State is everything the recorder saw; read it under Recorder's lock (WaitFor, Snapshot).
struct State {
  std::vector<Batch> batches;
  std::map<std::string, std::string> objects;  // object -> JSON, after every batch
  std::vector<ConfigError> errors;             // the last on_errors report
  int error_reports = 0;
  int deletes = 0;

  bool Has(const std::string& object, const std::string& fragment = "") const {
    auto it = objects.find(object);
    return it != objects.end() && it->second.find(fragment) != std::string::npos;
  }
  bool HasError(const std::string& fragment) const {
    return std::any_of(errors.begin(), errors.end(), [&](const ConfigError& e) {
      return e.message.find(fragment) != std::string::npos;
    });
  }
};

class Recorder : public ConfigListener {
 public:
  void OnChanges(std::vector<ConfigChange> changes, bool initial) override {
    std::lock_guard<std::mutex> lock(mu_);
    Batch batch;
    batch.initial = initial;
    for (const ConfigChange& change : changes) {
      Change c{change.op, change.ref.Display(), "", change.source};
      if (change.op == ConfigChange::Op::kUpsert) {
        EXPECT_NE(change.doc, nullptr);
        c.json = json::Serialize(*change.doc);
        state_.objects[c.object] = c.json;
      } else {
        EXPECT_EQ(change.doc, nullptr);
        state_.objects.erase(c.object);
        ++state_.deletes;
      }
      batch.changes.push_back(std::move(c));
    }
    state_.batches.push_back(std::move(batch));
    cv_.notify_all();
  }

  void OnErrors(const std::vector<ConfigError>& errors) {
    std::lock_guard<std::mutex> lock(mu_);
    state_.errors = errors;
    ++state_.error_reports;
    cv_.notify_all();
  }

  // WaitFor waits until `done(state)` holds, at most kDeadline.
  bool WaitFor(const std::function<bool(const State&)>& done) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return done(state_); });
  }

  State Snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  State state_;
};

class FileConfigCenterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "portico-center-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
    dir_ = base_ / "conf";
    fs::create_directories(dir_);
    options_.dir = dir_;
    options_.identifier = TestIdentifier;
    options_.on_errors = [this](const std::vector<ConfigError>& errors) {
      recorder_.OnErrors(errors);
    };
  }

  void TearDown() override {
    if (center_ != nullptr) center_->Stop();
    center_.reset();
    std::error_code ec;
    fs::remove_all(base_, ec);
  }

  void Start() {
    center_ = std::make_unique<FileConfigCenter>(options_);
    Status started = center_->Start(&recorder_);
    ASSERT_TRUE(started.ok()) << started;
  }

  // Write writes `content` in place (truncate and write, like most editors and shells).
  void Write(const std::string& rel, const std::string& content) {
    fs::path path = dir_ / rel;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    ASSERT_TRUE(out.good()) << path;
  }

  std::string Read(const std::string& rel) {
    std::ifstream in(dir_ / rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // BatchesAfter waits until more than `n` batches arrived and returns them all.
  std::vector<Batch> WaitForBatches(size_t n) {
    EXPECT_TRUE(recorder_.WaitFor([&](const State& s) { return s.batches.size() > n; }))
        << "no batch after " << n;
    return recorder_.Snapshot().batches;
  }

  fs::path base_;
  fs::path dir_;
  FileConfigCenterOptions options_;
  Recorder recorder_;
  std::unique_ptr<FileConfigCenter> center_;
};

TEST_F(FileConfigCenterTest, InitialSetIsOneBatchInPathOrder) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Write("sub/b.yml", GatewayClass("gc"));
  Write("sub/deeper/c.json",
        "{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"Namespace\",\n"
        "\t\"metadata\": {\"name\": \"team\", \"labels\": {\"x\": \"1\"}}\n}\n");
  // Editors' and tools' files, hidden files and directories: never read.
  int n = 0;
  for (const char* ignored :
       {".hidden.yaml", "a.yaml~", "#a.yaml#", ".a.yaml.swp", "4913", "x.tmp", "a.yaml.tmp",
        "notes.txt", ".git/config.yaml", "sub/.#b.yml", "sub/.b.yml.kate-swp"}) {
    Write(ignored, Route("ignored-" + std::to_string(n++)));
  }
  Start();
  State s = recorder_.Snapshot();
  ASSERT_EQ(s.batches.size(), 1u);
  const Batch& batch = s.batches[0];
  EXPECT_TRUE(batch.initial);
  ASSERT_EQ(batch.changes.size(), 4u);
  EXPECT_EQ(batch.changes[0].object, "HTTPRoute default/r1");
  EXPECT_EQ(batch.changes[0].source.file, "a.yaml");
  EXPECT_EQ(batch.changes[0].source.line, 1);
  EXPECT_EQ(batch.changes[1].object, "HTTPRoute default/r2");
  EXPECT_EQ(batch.changes[1].source.line, kRouteLines + 2);
  EXPECT_EQ(batch.changes[2].object, "GatewayClass gc");
  EXPECT_EQ(batch.changes[2].source.file, "sub/b.yml");
  EXPECT_EQ(batch.changes[3].object, "Namespace team");
  EXPECT_EQ(batch.changes[3].source.file, "sub/deeper/c.json");
  EXPECT_EQ(
      batch.changes[3].json,
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","labels":{"x":"1"}}})");
  for (const Change& change : batch.changes) EXPECT_EQ(change.op, ConfigChange::Op::kUpsert);
  EXPECT_TRUE(center_->Errors().empty());
  EXPECT_EQ(center_->Describe(), "file:" + dir_.string());
}

TEST_F(FileConfigCenterTest, EmptyDirectoryDeliversAnEmptyInitialBatch) {
  Start();
  State s = recorder_.Snapshot();
  ASSERT_EQ(s.batches.size(), 1u);
  EXPECT_TRUE(s.batches[0].initial);
  EXPECT_TRUE(s.batches[0].changes.empty());
}

TEST_F(FileConfigCenterTest, EditDeliversOneUpsert) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Write("b.yaml", Route("r3"));
  Start();
  Write("a.yaml", Route("r1") + "---\n" + Route("r2", "b.example"));
  std::vector<Batch> batches = WaitForBatches(1);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_FALSE(batches[1].initial);
  ASSERT_EQ(batches[1].changes.size(), 1u);
  EXPECT_EQ(batches[1].changes[0].op, ConfigChange::Op::kUpsert);
  EXPECT_EQ(batches[1].changes[0].object, "HTTPRoute default/r2");
  EXPECT_NE(batches[1].changes[0].json.find("b.example"), std::string::npos);
  EXPECT_EQ(batches[1].changes[0].source.line, kRouteLines + 2);
}

TEST_F(FileConfigCenterTest, UnchangedRewriteDeliversNothing) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Write("b.yaml", Route("r3"));
  Start();
  // Same bytes, then the same JSON written differently (comment, flow style, blank lines).
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Write("a.yaml", "# comment\n" + Route("r1") + "\n---\n" +
                      "{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute,\n"
                      " metadata: {name: r2}, spec: {hostnames: [a.example]}}\n");
  // A real change elsewhere: the next batch holds only it.
  Write("b.yaml", Route("r3", "c.example"));
  ASSERT_TRUE(
      recorder_.WaitFor([](const State& s) { return s.Has("HTTPRoute default/r3", "c.example"); }));
  State s = recorder_.Snapshot();
  ASSERT_EQ(s.batches.size(), 2u);
  ASSERT_EQ(s.batches[1].changes.size(), 1u);
  EXPECT_EQ(s.batches[1].changes[0].object, "HTTPRoute default/r3");
}

TEST_F(FileConfigCenterTest, BrokenFileKeepsItsObjectsUntilFixed) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Start();
  // Line 6 opens a flow sequence that never closes.
  Write("a.yaml", Route("r1") + "---\n" + Route("r2") + "  rules: [\n    {a: 1}\n");
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return !s.errors.empty(); }));
  State s = recorder_.Snapshot();
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].source.file, "a.yaml");
  EXPECT_GT(s.errors[0].source.line, 0);
  EXPECT_NE(s.errors[0].message.find("a.yaml:" + std::to_string(s.errors[0].source.line) + ":"),
            std::string::npos)
      << s.errors[0].message;
  EXPECT_NE(s.errors[0].message.find("keeping the 2 objects"), std::string::npos)
      << s.errors[0].message;
  EXPECT_EQ(s.batches.size(), 1u) << "a broken file deletes nothing";
  EXPECT_EQ(center_->Errors().size(), 1u);

  // Fixed (r1 changed, r2 gone): the error clears and the diff arrives.
  Write("a.yaml", Route("r1", "z.example"));
  ASSERT_TRUE(
      recorder_.WaitFor([](const State& s) { return s.batches.size() == 2 && s.errors.empty(); }));
  s = recorder_.Snapshot();
  ASSERT_EQ(s.batches[1].changes.size(), 2u);
  EXPECT_EQ(s.batches[1].changes[0].object, "HTTPRoute default/r1");
  EXPECT_EQ(s.batches[1].changes[0].op, ConfigChange::Op::kUpsert);
  EXPECT_EQ(s.batches[1].changes[1].object, "HTTPRoute default/r2");
  EXPECT_EQ(s.batches[1].changes[1].op, ConfigChange::Op::kDelete);
  EXPECT_TRUE(center_->Errors().empty());
}

TEST_F(FileConfigCenterTest, RemovingADocumentDeletesItsObject) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Start();
  Write("a.yaml", Route("r1"));
  std::vector<Batch> batches = WaitForBatches(1);
  ASSERT_EQ(batches[1].changes.size(), 1u);
  EXPECT_EQ(batches[1].changes[0].op, ConfigChange::Op::kDelete);
  EXPECT_EQ(batches[1].changes[0].object, "HTTPRoute default/r2");
  EXPECT_EQ(batches[1].changes[0].source.file, "a.yaml");
}

TEST_F(FileConfigCenterTest, RemovingAFileDeletesItsObjects) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Write("b.yaml", Route("r3"));
  Start();
  fs::remove(dir_ / "a.yaml");
  std::vector<Batch> batches = WaitForBatches(1);
  ASSERT_EQ(batches[1].changes.size(), 2u);
  for (const Change& change : batches[1].changes) {
    EXPECT_EQ(change.op, ConfigChange::Op::kDelete);
  }
  EXPECT_TRUE(recorder_.Snapshot().Has("HTTPRoute default/r3"));
}

TEST_F(FileConfigCenterTest, AtomicRenameReplacesTheFile) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Start();
  // What editors and config tools do: write a temporary file, rename it onto the target.
  Write(".a.yaml.new", Route("r1", "n.example") + "---\n" + Route("r2"));
  fs::rename(dir_ / ".a.yaml.new", dir_ / "a.yaml");
  Write("a.yaml.tmp", Route("r1", "m.example") + "---\n" + Route("r2"));
  fs::rename(dir_ / "a.yaml.tmp", dir_ / "a.yaml");
  ASSERT_TRUE(
      recorder_.WaitFor([](const State& s) { return s.Has("HTTPRoute default/r1", "m.example"); }));
  State s = recorder_.Snapshot();
  EXPECT_EQ(s.deletes, 0);
  EXPECT_TRUE(s.Has("HTTPRoute default/r2"));
  for (size_t i = 1; i < s.batches.size(); ++i) {
    for (const Change& change : s.batches[i].changes) {
      EXPECT_EQ(change.object, "HTTPRoute default/r1");
    }
  }
}

TEST_F(FileConfigCenterTest, NewSubdirectoriesAreWatched) {
  Start();
  // Created and written at once: the file may exist before the directory's watch does.
  Write("new/deeper/a.yaml", Route("r1"));
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return s.Has("HTTPRoute default/r1"); }));
  // Written later: seen through the new directory's own watch.
  Write("new/deeper/b.yaml", Route("r2"));
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return s.Has("HTTPRoute default/r2"); }));
  // A tree moved in from outside.
  fs::create_directories(base_ / "outside/inner");
  { std::ofstream(base_ / "outside/inner/c.yaml") << Route("r3"); }
  fs::rename(base_ / "outside", dir_ / "moved");
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return s.Has("HTTPRoute default/r3"); }));
  Write("moved/inner/c.yaml", Route("r3", "moved.example"));
  ASSERT_TRUE(recorder_.WaitFor(
      [](const State& s) { return s.Has("HTTPRoute default/r3", "moved.example"); }));
  // A tree moved out and one removed: their objects go.
  fs::rename(dir_ / "moved", base_ / "gone");
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return !s.Has("HTTPRoute default/r3"); }));
  fs::remove_all(dir_ / "new");
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return s.objects.empty(); }));
  EXPECT_TRUE(center_->Errors().empty());
}

TEST_F(FileConfigCenterTest, DuplicateClaimFirstByPathWinsAndLoserTakesOver) {
  Write("a.yaml", Route("dup", "a.example"));
  Write("b/z.yaml", Route("other") + "---\n" + Route("dup", "b.example"));
  Start();
  State s = recorder_.Snapshot();
  ASSERT_EQ(s.batches.size(), 1u);
  EXPECT_TRUE(s.Has("HTTPRoute default/dup", "a.example"));
  std::vector<ConfigError> errors = center_->Errors();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].source.file, "a.yaml");
  EXPECT_EQ(errors[0].object, "HTTPRoute default/dup");
  EXPECT_NE(errors[0].message.find("also defined at b/z.yaml:8"), std::string::npos)
      << errors[0].message;
  EXPECT_EQ(errors[1].source.file, "b/z.yaml");
  EXPECT_EQ(errors[1].source.line, kRouteLines + 2);
  EXPECT_NE(errors[1].message.find("also defined at a.yaml:1, which wins"), std::string::npos)
      << errors[1].message;

  // The loser changing is no change; the winner going makes the loser take over.
  Write("b/z.yaml", Route("other") + "---\n" + Route("dup", "c.example"));
  fs::remove(dir_ / "a.yaml");
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) {
    return s.Has("HTTPRoute default/dup", "c.example") && s.errors.empty();
  }));
  s = recorder_.Snapshot();
  EXPECT_EQ(s.deletes, 0);
  EXPECT_EQ(s.batches.back().changes.back().source.file, "b/z.yaml");
}

TEST_F(FileConfigCenterTest, DuplicateInOneFileFirstDocumentWins) {
  Write("a.yaml", Route("dup", "first.example") + "---\n" + Route("dup", "second.example"));
  Start();
  EXPECT_TRUE(recorder_.Snapshot().Has("HTTPRoute default/dup", "first.example"));
  EXPECT_EQ(center_->Errors().size(), 2u);
}

TEST_F(FileConfigCenterTest, AliasBombAndDeepNestingAreRefused) {
  options_.limits.max_nodes = 100'000;
  std::string bomb =
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bomb\n"
      "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c, ++prev) {
    std::string p(1, prev);
    bomb += std::string(1, c) + ": &" + c + " [*" + p + ", *" + p + ", *" + p + ", *" + p + ", *" +
            p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + "]\n";
  }
  Write("bomb.yaml", bomb);
  Write("deep.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: deep\nspec: " +
                         std::string(10'000, '[') + std::string(10'000, ']') + "\n");
  Write("flow-deep.json", std::string(100'000, '['));
  Write("good.yaml", Route("r1"));
  Start();
  State s = recorder_.Snapshot();
  ASSERT_EQ(s.batches.size(), 1u);
  ASSERT_EQ(s.batches[0].changes.size(), 1u);
  EXPECT_EQ(s.batches[0].changes[0].object, "HTTPRoute default/r1");
  EXPECT_TRUE(s.HasError("bomb.yaml:")) << ::testing::PrintToString(s.errors.size());
  EXPECT_TRUE(s.HasError("alias bomb"));
  EXPECT_TRUE(s.HasError("deep.yaml:"));
  EXPECT_TRUE(s.HasError("flow-deep.json:1:"));
  EXPECT_EQ(std::count_if(s.errors.begin(), s.errors.end(),
                          [](const ConfigError& e) {
                            return e.message.find("nesting deeper than 64 levels") !=
                                   std::string::npos;
                          }),
            2);

  // Through the watcher too.
  Write("bomb2.yaml", bomb);
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return s.HasError("bomb2.yaml:"); }));
}

TEST_F(FileConfigCenterTest, DefaultLimitsRefuseAnAliasBomb) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'l'; ++c, ++prev) {
    std::string p(1, prev);
    bomb += std::string(1, c) + ": &" + c + " [*" + p + ", *" + p + ", *" + p + ", *" + p + ", *" +
            p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + "]\n";
  }
  Write("bomb.yaml", bomb);  // 10^12 nodes
  Start();
  std::vector<ConfigError> errors = center_->Errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("more than 1000000 nodes (alias bomb?)"), std::string::npos)
      << errors[0].message;
}

TEST_F(FileConfigCenterTest, InvalidDocumentsAreReportedAndSiblingsApply) {
  Write("a.yaml", Route("r1") +
                      "---\n"
                      "apiVersion: example.io/v1\nkind: Unknown\nmetadata:\n  name: x\n"
                      "---\n"
                      "apiVersion: v1\nkind: Namespace\nmetadata:\n  labels: {a: b}\n"
                      "---\n"
                      "- just\n- a list\n"
                      "---\n" +
                      Route("r2"));
  Start();
  State s = recorder_.Snapshot();
  ASSERT_EQ(s.batches[0].changes.size(), 2u);
  EXPECT_TRUE(s.Has("HTTPRoute default/r1"));
  EXPECT_TRUE(s.Has("HTTPRoute default/r2"));
  std::vector<ConfigError> errors = center_->Errors();
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].source.line, 8);
  EXPECT_EQ(errors[0].object, "Unknown x");
  EXPECT_EQ(errors[0].message, "a.yaml:8: Unknown x: unknown kind \"Unknown\"");
  EXPECT_EQ(errors[1].source.line, 13);
  EXPECT_EQ(errors[1].message, "a.yaml:13: Namespace document has no metadata.name");
  EXPECT_EQ(errors[2].source.line, 18);
  EXPECT_NE(errors[2].message.find("not a map"), std::string::npos);
}

TEST_F(FileConfigCenterTest, IncompleteDocumentKeepsTheObjectItDefined) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Start();
  // metadata.name being retyped: r2 is not deleted meanwhile.
  Write("a.yaml", Route("r1") + "---\n" +
                      "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n"
                      "  name:\n");
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return s.HasError("keeping the 1 object"); }));
  EXPECT_EQ(recorder_.Snapshot().deletes, 0);
  Write("a.yaml", Route("r1") + "---\n" + Route("r3"));
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) {
    return s.Has("HTTPRoute default/r3") && !s.Has("HTTPRoute default/r2") && s.errors.empty();
  }));
}

TEST_F(FileConfigCenterTest, PartialWriteKeepsObjectsUntilTheWriteCompletes) {
  Write("a.yaml", Route("r1"));
  Start();
  std::string next = Route("r1", "final.example") + "---\n" + Route("r2");
  size_t cut = next.find("final.exa") + 4;  // inside a quoted string: does not parse
  int fd = ::open((dir_ / "a.yaml").c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, next.data(), cut), static_cast<ssize_t>(cut));
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return s.HasError("a.yaml:"); }));
  State s = recorder_.Snapshot();
  EXPECT_TRUE(s.Has("HTTPRoute default/r1", "a.example"));
  EXPECT_EQ(s.batches.size(), 1u);
  ASSERT_EQ(::write(fd, next.data() + cut, next.size() - cut),
            static_cast<ssize_t>(next.size() - cut));
  ::close(fd);
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) {
    return s.Has("HTTPRoute default/r1", "final.example") && s.Has("HTTPRoute default/r2") &&
           s.errors.empty();
  }));
  EXPECT_EQ(recorder_.Snapshot().deletes, 0);
}

TEST_F(FileConfigCenterTest, EmptiedFileKeepsObjectsUntilRemoved) {
  Write("a.yaml", Route("r1"));
  Start();
  Write("a.yaml", "");
  ASSERT_TRUE(
      recorder_.WaitFor([](const State& s) { return s.HasError("a.yaml: file is empty"); }));
  EXPECT_TRUE(recorder_.Snapshot().Has("HTTPRoute default/r1"));
  fs::remove(dir_ / "a.yaml");
  ASSERT_TRUE(
      recorder_.WaitFor([](const State& s) { return s.objects.empty() && s.errors.empty(); }));
}

TEST_F(FileConfigCenterTest, UnreadableFileIsReportedAndReadOnceReadable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  Write("a.yaml", Route("r1"));
  ::chmod((dir_ / "a.yaml").c_str(), 0);
  Start();
  EXPECT_TRUE(recorder_.Snapshot().HasError("a.yaml: cannot open"));
  ::chmod((dir_ / "a.yaml").c_str(), 0644);
  ASSERT_TRUE(recorder_.WaitFor(
      [](const State& s) { return s.Has("HTTPRoute default/r1") && s.errors.empty(); }));
}

TEST_F(FileConfigCenterTest, BurstOfEditsEndsInTheFinalState) {
  Write("a.yaml", Route("r1"));
  Start();
  for (int i = 0; i < 100; ++i) Write("a.yaml", Route("r1", "h" + std::to_string(i) + ".example"));
  ASSERT_TRUE(recorder_.WaitFor(
      [](const State& s) { return s.Has("HTTPRoute default/r1", "\"h99.example\""); }));
  State s = recorder_.Snapshot();
  EXPECT_EQ(s.deletes, 0) << "a truncated or half-written file deletes nothing";
  // Debounced: far fewer batches than writes (typically one).
  EXPECT_LT(s.batches.size(), 20u);
  std::cout << "100 writes -> " << s.batches.size() - 1 << " batch(es)\n";
}

TEST_F(FileConfigCenterTest, ApplyNewObjectsCreateFilesNamedAfterThem) {
  Start();
  ASSERT_TRUE(center_->Apply(Route("web") + "---\n" + GatewayClass("gc")).ok());
  ASSERT_TRUE(recorder_.WaitFor(
      [](const State& s) { return s.Has("HTTPRoute default/web") && s.Has("GatewayClass gc"); }));
  EXPECT_TRUE(fs::exists(dir_ / "httproute-default-web.yaml"));
  EXPECT_TRUE(fs::exists(dir_ / "gatewayclass-gc.yaml"));
  State s = recorder_.Snapshot();
  EXPECT_EQ(s.objects["HTTPRoute default/web"],
            R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",)"
            R"("metadata":{"name":"web"},"spec":{"hostnames":["a.example"]}})");
  // No temporary file left behind.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".")) << entry.path();
  }
  // Applying again (before or after the watcher saw it) replaces it in the same file.
  ASSERT_TRUE(center_->Apply(Route("web", "b.example")).ok());
  ASSERT_TRUE(recorder_.WaitFor(
      [](const State& s) { return s.Has("HTTPRoute default/web", "b.example"); }));
  EXPECT_FALSE(fs::exists(dir_ / "httproute-default-web-1.yaml"));
}

TEST_F(FileConfigCenterTest, ApplyExistingObjectRewritesItInPlace) {
  const std::string head = "# routes of team a\n" + Route("r1") + "---\n# the second one\n";
  const std::string tail = "---\n" + GatewayClass("gc");
  Write("team/a.yaml", head + Route("r2") + tail);
  Start();
  ASSERT_TRUE(center_->Apply(Route("r2", "new.example")).ok());
  ASSERT_TRUE(recorder_.WaitFor(
      [](const State& s) { return s.Has("HTTPRoute default/r2", "new.example"); }));
  std::string text = Read("team/a.yaml");
  EXPECT_TRUE(text.starts_with(head)) << text;
  EXPECT_TRUE(text.ends_with(tail)) << text;
  State s = recorder_.Snapshot();
  ASSERT_EQ(s.batches.size(), 2u);
  ASSERT_EQ(s.batches[1].changes.size(), 1u);
  EXPECT_EQ(s.batches[1].changes[0].source.file, "team/a.yaml");
  EXPECT_EQ(std::distance(fs::recursive_directory_iterator(dir_), {}), 2) << "team/, team/a.yaml";

  // Invalid input writes nothing.
  EXPECT_EQ(center_->Apply("apiVersion: v1\nkind: Unknown\nmetadata: {name: x}\n").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(center_->Apply("a: [").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(center_->Apply("# nothing\n").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(center_->Apply(Route("x") + "---\n" + Route("x")).code(), StatusCode::kInvalidArgument);
}

TEST_F(FileConfigCenterTest, ApplyToAJsonFileWritesJson) {
  Write("ns.json", R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})");
  Start();
  ASSERT_TRUE(center_
                  ->Apply("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n"
                          "  labels: {tier: \"1\"}\n")
                  .ok());
  ASSERT_TRUE(
      recorder_.WaitFor([](const State& s) { return s.Has("Namespace team", R"("tier":"1")"); }));
  auto parsed = json::Parse(Read("ns.json"));
  ASSERT_TRUE(parsed.ok()) << Read("ns.json");
}

TEST_F(FileConfigCenterTest, ApplyToABrokenFileFails) {
  Write("a.yaml", Route("r1"));
  Start();
  Write("a.yaml", Route("r1") + "x: [\n");
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return !s.errors.empty(); }));
  Status applied = center_->Apply(Route("r1", "b.example"));
  EXPECT_EQ(applied.code(), StatusCode::kFailedPrecondition) << applied;
  EXPECT_NE(applied.message().find("a.yaml does not parse"), std::string::npos) << applied;
}

TEST_F(FileConfigCenterTest, DeleteRemovesTheDocumentAndThenTheFile) {
  Write("a.yaml", Route("r1") + "---\n" + Route("r2"));
  Start();
  ASSERT_TRUE(
      center_->Delete(sdk::ObjectRef{"gateway.networking.k8s.io", "HTTPRoute", "default", "r2"})
          .ok());
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return !s.Has("HTTPRoute default/r2"); }));
  EXPECT_EQ(Read("a.yaml"), Route("r1"));
  ASSERT_TRUE(
      center_->Delete(sdk::ObjectRef{"gateway.networking.k8s.io", "HTTPRoute", "default", "r1"})
          .ok());
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) { return s.objects.empty(); }));
  EXPECT_FALSE(fs::exists(dir_ / "a.yaml"));
  EXPECT_EQ(
      center_->Delete(sdk::ObjectRef{"gateway.networking.k8s.io", "HTTPRoute", "default", "r1"})
          .code(),
      StatusCode::kNotFound);
}

TEST_F(FileConfigCenterTest, DeleteRemovesEveryClaim) {
  Write("a.yaml", Route("dup"));
  Write("b.yaml", Route("dup", "b.example") + "---\n" + Route("other"));
  Start();
  ASSERT_TRUE(
      center_->Delete(sdk::ObjectRef{"gateway.networking.k8s.io", "HTTPRoute", "default", "dup"})
          .ok());
  ASSERT_TRUE(recorder_.WaitFor(
      [](const State& s) { return !s.Has("HTTPRoute default/dup") && s.errors.empty(); }));
  EXPECT_EQ(Read("b.yaml"), Route("other"));
  EXPECT_FALSE(fs::exists(dir_ / "a.yaml"));
}

TEST_F(FileConfigCenterTest, ResyncDeliversWhatTheWatcherCannotSee) {
  // A symlinked file's target lives outside the watched tree.
  { std::ofstream(base_ / "target.yaml") << Route("r1"); }
  fs::create_symlink(base_ / "target.yaml", dir_ / "link.yaml");
  Start();
  ASSERT_TRUE(recorder_.Snapshot().Has("HTTPRoute default/r1", "a.example"));
  { std::ofstream(base_ / "target.yaml") << Route("r1", "b.example"); }
  ASSERT_TRUE(center_->Resync().ok());
  State s = recorder_.Snapshot();
  EXPECT_TRUE(s.Has("HTTPRoute default/r1", "b.example"));
  // Nothing changed: no batch.
  size_t batches = s.batches.size();
  ASSERT_TRUE(center_->Resync().ok());
  EXPECT_EQ(recorder_.Snapshot().batches.size(), batches);
}

TEST_F(FileConfigCenterTest, ConfigMapVolumeSwapIsSeen) {
  // The layout kubelet gives a ConfigMap volume: files are links through the "..data" link,
  // which is replaced atomically on update.
  fs::create_directories(dir_ / "..v1");
  { std::ofstream(dir_ / "..v1/routes.yaml") << Route("r1"); }
  fs::create_directory_symlink("..v1", dir_ / "..data");
  fs::create_symlink("..data/routes.yaml", dir_ / "routes.yaml");
  Start();
  ASSERT_TRUE(recorder_.Snapshot().Has("HTTPRoute default/r1", "a.example"));
  fs::create_directories(dir_ / "..v2");
  { std::ofstream(dir_ / "..v2/routes.yaml") << Route("r1", "v2.example"); }
  fs::create_directory_symlink("..v2", dir_ / "..data_tmp");
  fs::rename(dir_ / "..data_tmp", dir_ / "..data");
  ASSERT_TRUE(recorder_.WaitFor(
      [](const State& s) { return s.Has("HTTPRoute default/r1", "v2.example"); }));
}

TEST_F(FileConfigCenterTest, LifecycleErrors) {
  options_.dir = base_ / "missing";
  FileConfigCenter missing(options_);
  EXPECT_EQ(missing.Start(&recorder_).code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.Apply(Route("r1")).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(missing.Resync().code(), StatusCode::kFailedPrecondition);
  missing.Stop();

  options_.dir = dir_;
  Start();
  EXPECT_EQ(center_->Start(&recorder_).code(), StatusCode::kFailedPrecondition);
  center_->Stop();
  center_->Stop();
  EXPECT_EQ(center_->Resync().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(center_->Apply(Route("r1")).code(), StatusCode::kFailedPrecondition);
}

TEST_F(FileConfigCenterTest, ErrorsAndApplyFromOtherThreadsWhileWatching) {
  Start();
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) (void)center_->Errors();
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        Status applied =
            center_->Apply(Route("t" + std::to_string(t), "h" + std::to_string(i) + ".example"));
        EXPECT_TRUE(applied.ok()) << applied;
      }
    });
  }
  for (auto& writer : writers) writer.join();
  ASSERT_TRUE(recorder_.WaitFor([](const State& s) {
    for (int t = 0; t < 4; ++t) {
      if (!s.Has("HTTPRoute default/t" + std::to_string(t), "\"h9.example\"")) return false;
    }
    return true;
  }));
  done = true;
  reader.join();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 4);
}

}  // namespace
}  // namespace portico::controller
