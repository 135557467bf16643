// center_files_test: the file center's building blocks: rendering YAML that reads back the
// same, splicing documents in a file's text, editing files, atomic writes, temp-file names and
// the per-file node limit; object and file limits (what they refuse and keep), the large-file
// worker, and the lines of a refused object's fields.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/center/atomic_write.h"
#include "controller/center/config_files.h"
#include "controller/center/document_splice.h"
#include "controller/center/field_lines.h"
#include "controller/center/file_config_center.h"
#include "controller/center/file_documents.h"
#include "controller/center/file_read_worker.h"
#include "controller/center/object_limits.h"
#include "controller/center/source_registry.h"
#include "controller/center/source_writer.h"
#include "controller/center/yaml_render.h"
#include "controller/center/yaml_to_json.h"
#include "portico/sdk/json.h"

namespace portico::controller {
namespace {

namespace fs = std::filesystem;

StatusOr<sdk::ObjectRef> KindAndName(const rapidjson::Value& doc) {
  if (json::GetString(doc, "kind") == "Unknown") return InvalidArgumentError("unknown kind");
  return sdk::ObjectRef{"", json::GetString(doc, "kind"), "",
                        json::GetString(doc, "metadata.name")};
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "portico-files-XXXXXX").string();
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void Write(const std::string& rel, const std::string& text) const {
    std::ofstream(path_ / rel, std::ios::binary) << text;
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(path_ / rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  fs::path path_;
};

TEST(YamlRenderTest, ReadsBackByteEqual) {
  auto doc =
      json::Parse(R"({"s1":"true","s2":"123","s3":"1.5","s4":"null","s5":"~","s6":"yes",)"
                  R"("s7":"","s8":"line1\nline2","s9":" lead","s10":"a: b","s11":"#x",)"
                  R"("s12":"-x","s13":"0x1F","s14":"off","s15":"*a","s16":"&b","s17":"!t",)"
                  R"("s18":"[x]","s19":"{x}","s20":"x #y","s21":"tab\there","s22":"'q'",)"
                  R"("f":2.0,"g":0.1,"h":1e100,"i":-3,"j":9007199254740993,"b":false,)"
                  R"("n":null,"arr":[],"obj":{},"nested":[{"k":[1,"2",[]]},[[{}]]],)"
                  R"("unicode":"é ✓","123":"numeric key","true":"typed key","":"empty key"})");
  ASSERT_TRUE(doc.ok()) << doc.status();
  StatusOr<std::string> yaml = RenderYaml(*doc);
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  auto back = ParseYamlDocuments(*yaml, "rendered");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << *yaml;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(json::Serialize((*back)[0].json), json::Serialize(*doc)) << *yaml;
  EXPECT_NE(yaml->find("s1: \"true\""), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("f: 2.0"), std::string::npos) << *yaml;
}

TEST(YamlRenderTest, JsonIsIndentedAndParses) {
  auto doc = json::Parse(R"({"a":[1,{"b":"c"}]})");
  ASSERT_TRUE(doc.ok());
  std::string text = RenderJson(*doc);
  EXPECT_EQ(text, "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"c\"\n    }\n  ]\n}\n");
}

TEST(DocumentSpliceTest, ReplaceKeepsOtherDocumentsAndComments) {
  std::string text = "# head\na: 1\n---\n# about b\nb: 2\nc: 3\n---\nd: 4\n";
  auto out = SpliceDocuments(text, {2, 5, 8}, {{1, std::string("b: 9\n")}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "# head\na: 1\n---\n# about b\nb: 9\n---\nd: 4\n");
}

TEST(DocumentSpliceTest, RemoveTakesTheMarkerAlong) {
  std::string text = "---\na: 1\n---\n# about b\nb: 2\n---\nd: 4";
  auto middle = SpliceDocuments(text, {2, 5, 7}, {{1, std::nullopt}});
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_EQ(*middle, "---\na: 1\n---\nd: 4");
  auto first = SpliceDocuments("a: 1\n---\nb: 2\n", {1, 3}, {{0, std::nullopt}});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "b: 2\n");
  auto last = SpliceDocuments("a: 1\n---\nb: 2\n", {1, 3}, {{1, std::nullopt}});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, "a: 1\n");
  auto two = SpliceDocuments("a: 1\n---\nb: 2\n---\nc: 3\n", {1, 3, 5},
                             {{0, std::nullopt}, {1, std::nullopt}});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two, "c: 3\n");
}

TEST(DocumentSpliceTest, DocumentOnItsMarkerLine) {
  auto out = SpliceDocuments("a: 1\n--- {b: 2}\n", {1, 2}, {{1, std::string("b: 3\n")}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "a: 1\n---\nb: 3\n");
  EXPECT_EQ(AppendDocument("a: 1", true, "b: 2\n"), "a: 1\n---\nb: 2\n");
  EXPECT_EQ(AppendDocument("# only a comment\n", false, "b: 2\n"), "# only a comment\nb: 2\n");
}

TEST(SourceWriterTest, ReplacesAppendsAndRemoves) {
  TempDir dir;
  dir.Write("a.yaml",
            "# keep me\napiVersion: v1\nkind: A\nmetadata: {name: one}\n---\napiVersion: v1\n"
            "kind: A\nmetadata:\n  name: two\n");
  EditOptions options;
  ObjectIdentifier identifier = KindAndName;
  options.identifier = &identifier;
  auto two =
      json::Parse(R"({"apiVersion":"v1","kind":"A","metadata":{"name":"two"},"spec":{"x":1}})");
  auto three = json::Parse(R"({"apiVersion":"v1","kind":"A","metadata":{"name":"three"}})");
  ASSERT_TRUE(two.ok() && three.ok());
  sdk::ObjectRef ref_one{"", "A", "", "one"}, ref_two{"", "A", "", "two"},
      ref_three{"", "A", "", "three"};

  auto edited = EditConfigFile(dir.path() / "a.yaml", "a.yaml",
                               {{ref_two, &*two}, {ref_three, &*three}}, options);
  ASSERT_TRUE(edited.ok()) << edited.status();
  ASSERT_EQ(edited->missing.size(), 1u);
  EXPECT_EQ(edited->missing[0], ref_three);
  EXPECT_EQ(dir.Read("a.yaml"),
            "# keep me\napiVersion: v1\nkind: A\nmetadata: {name: one}\n---\napiVersion: v1\n"
            "kind: A\nmetadata:\n  name: two\nspec:\n  x: 1\n");

  options.append_missing = true;
  edited = EditConfigFile(dir.path() / "a.yaml", "a.yaml", {{ref_three, &*three}}, options);
  ASSERT_TRUE(edited.ok());
  EXPECT_TRUE(
      dir.Read("a.yaml").ends_with("---\napiVersion: v1\nkind: A\nmetadata:\n  name: three\n"))
      << dir.Read("a.yaml");

  options.append_missing = false;
  edited = EditConfigFile(dir.path() / "a.yaml", "a.yaml", {{ref_one, nullptr}, {ref_two, nullptr}},
                          options);
  ASSERT_TRUE(edited.ok()) << edited.status();
  EXPECT_EQ(dir.Read("a.yaml"), "apiVersion: v1\nkind: A\nmetadata:\n  name: three\n");
  edited = EditConfigFile(dir.path() / "a.yaml", "a.yaml", {{ref_three, nullptr}}, options);
  ASSERT_TRUE(edited.ok());
  EXPECT_TRUE(edited->removed);
  EXPECT_FALSE(fs::exists(dir.path() / "a.yaml"));
}

TEST(SourceWriterTest, RefusesABrokenFile) {
  TempDir dir;
  dir.Write("a.yaml", "apiVersion: v1\nkind: A\nmetadata: {name: one\n");
  EditOptions options;
  ObjectIdentifier identifier = KindAndName;
  options.identifier = &identifier;
  auto edited = EditConfigFile(dir.path() / "a.yaml", "a.yaml",
                               {{sdk::ObjectRef{"", "A", "", "one"}, nullptr}}, options);
  ASSERT_FALSE(edited.ok());
  EXPECT_EQ(edited.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(dir.Read("a.yaml"), "apiVersion: v1\nkind: A\nmetadata: {name: one\n");
}

TEST(AtomicWriteTest, ReplacesKeepsModeAndLeavesNoTemporaryFile) {
  TempDir dir;
  fs::path path = dir.path() / "a.yaml";
  ASSERT_TRUE(WriteFileAtomically(path, "one\n").ok());
  EXPECT_EQ(dir.Read("a.yaml"), "one\n");
  ::chmod(path.c_str(), 0600);
  ASSERT_TRUE(WriteFileAtomically(path, "two\n").ok());
  EXPECT_EQ(dir.Read("a.yaml"), "two\n");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 1);
  ASSERT_TRUE(RemoveFileDurably(path).ok());
  EXPECT_EQ(RemoveFileDurably(path).code(), StatusCode::kNotFound);
  EXPECT_FALSE(WriteFileAtomically(dir.path() / "no/such/dir.yaml", "x").ok());
}

TEST(AtomicWriteTest, NewFilesGetTheModeAskedFor) {
  TempDir dir;
  struct stat st;
  fs::path plain = dir.path() / "plain.yaml";
  ASSERT_TRUE(WriteFileAtomically(plain, "x\n").ok());
  ASSERT_EQ(::stat(plain.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  fs::path secret = dir.path() / "secret.yaml";
  ASSERT_TRUE(WriteFileAtomically(secret, "x\n", 0600).ok());
  ASSERT_EQ(::stat(secret.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(ConfigFilesTest, EditorTemporaryFilesAreNotConfig) {
  for (const char* name : {"a.yaml", "b.yml", "c.json", "sub/d.yaml"}) {
    EXPECT_TRUE(IsConfigFile(name)) << name;
  }
  for (const char* name : {".a.yaml", "a.yaml~", "#a.yaml#", ".a.yaml.swp", "a.yaml.swp", "4913",
                           "a.tmp", "a.yaml.tmp", ".#a.yaml", "a.yaml.orig", "a.txt"}) {
    EXPECT_FALSE(IsConfigFile(name)) << name;
  }
}

TEST(YamlLimitsTest, NodeLimitIsPerFileNotPerDocument) {
  std::string doc = "a: [";
  for (int i = 0; i < 60; ++i) doc += "1, ";
  doc += "1]\n";
  YamlLimits limits;
  limits.max_nodes = 100;
  EXPECT_TRUE(ParseYamlDocuments(doc, "one.yaml", limits).ok());
  auto two = ParseYamlDocuments(doc + "---\n" + doc, "two.yaml", limits);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("file expands to more than 100 nodes"), std::string::npos)
      << two.status();
}

TEST(YamlLimitsTest, ParserDepthGuardHasAClearMessage) {
  auto deep = ParseYamlDocuments(std::string(5000, '['), "deep.yaml");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("deep.yaml:1:"), std::string::npos) << deep.status();
  EXPECT_NE(deep.status().message().find("nesting deeper than 64 levels"), std::string::npos)
      << deep.status();
  auto recursive = ParseYamlDocuments("a: &a [*a]\n", "loop.yaml");
  EXPECT_FALSE(recursive.ok());
}

TEST(FileDocumentsTest, IdentifiesAndReportsPerDocument) {
  TempDir dir;
  dir.Write("a.yaml",
            "apiVersion: v1\nkind: A\nmetadata: {name: one}\n---\n"
            "apiVersion: v1\nkind: A\nmetadata: {}\n---\n"
            "apiVersion: v1\nkind: Unknown\nmetadata: {name: u}\n");
  ObjectIdentifier identifier = KindAndName;
  FileReadOptions options;
  options.identifier = &identifier;
  FileDocuments read = ReadFileDocuments(dir.path(), "a.yaml", options);
  EXPECT_EQ(read.state, FileDocuments::State::kParsed);
  ASSERT_EQ(read.objects.size(), 1u);
  EXPECT_EQ(read.objects[0].ref.name, "one");
  EXPECT_TRUE(read.incomplete);
  ASSERT_EQ(read.errors.size(), 2u);
  EXPECT_EQ(read.errors[0].message, "a.yaml:5: A document has no metadata.name");
  EXPECT_EQ(read.errors[1].message, "a.yaml:9: Unknown u: unknown kind");
  EXPECT_EQ(ReadFileDocuments(dir.path(), "gone.yaml", options).state, FileDocuments::State::kGone);
  options.max_file_bytes = 10;
  FileDocuments big = ReadFileDocuments(dir.path(), "a.yaml", options);
  EXPECT_EQ(big.state, FileDocuments::State::kUnparsable);
  ASSERT_EQ(big.errors.size(), 1u);
  EXPECT_NE(big.errors[0].message.find("larger than 10 bytes"), std::string::npos);
}

TEST(SourceRegistryTest, UnparsableFileKeepsObjectsAndGoneFileDeletes) {
  TempDir dir;
  ObjectIdentifier identifier = KindAndName;
  FileReadOptions options;
  options.identifier = &identifier;
  SourceRegistry registry;
  dir.Write("a.yaml", "apiVersion: v1\nkind: A\nmetadata: {name: one}\n");
  registry.Update("a.yaml", ReadFileDocuments(dir.path(), "a.yaml", options));
  EXPECT_EQ(registry.TakeChanges().size(), 1u);
  dir.Write("a.yaml", "apiVersion: v1\nkind: A\nmetadata: {name: one");
  registry.Update("a.yaml", ReadFileDocuments(dir.path(), "a.yaml", options));
  EXPECT_TRUE(registry.TakeChanges().empty());
  ASSERT_EQ(registry.Errors().size(), 1u);
  EXPECT_EQ(registry.Locate(sdk::ObjectRef{"", "A", "", "one"}).size(), 1u);
  fs::remove(dir.path() / "a.yaml");
  registry.Update("a.yaml", ReadFileDocuments(dir.path(), "a.yaml", options));
  auto changes = registry.TakeChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].op, ConfigChange::Op::kDelete);
  EXPECT_TRUE(registry.Errors().empty());
  EXPECT_TRUE(registry.Files().empty());
}

TEST(ObjectLimitsTest, SizesAndMessages) {
  auto doc = json::Parse(R"({"kind":"A","metadata":{"name":"n","annotations":{"k":"vvvv"}}})");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(SerializedSize(*doc), json::Serialize(*doc).size());
  ObjectLimits limits;
  EXPECT_TRUE(CheckObjectLimits(*doc, limits).ok());
  limits.max_annotation_bytes = 4;  // "k" + "vvvv" = 5
  EXPECT_EQ(CheckObjectLimits(*doc, limits).message(),
            "metadata.annotations: keys and values hold 5 bytes, more than the limit of 4 "
            "(limits.max_annotation_bytes)");
  limits.max_annotation_bytes = 5;
  EXPECT_TRUE(CheckObjectLimits(*doc, limits).ok());
  limits.max_object_bytes = 20;
  EXPECT_EQ(CheckObjectLimits(*doc, limits).message(),
            "the object is, as JSON, " + std::to_string(SerializedSize(*doc)) +
                " bytes, more than the limit of 20 (limits.max_object_bytes)");
}

TEST(ObjectLimitsTest, RefusedDocumentsAndFilesKeepTheLastGoodVersion) {
  TempDir dir;
  ObjectIdentifier identifier = KindAndName;
  FileReadOptions options;
  options.identifier = &identifier;
  options.objects.max_annotation_bytes = 16;
  options.objects.max_objects_per_file = 2;
  auto doc = [](const std::string& name, const std::string& note) {
    return "apiVersion: v1\nkind: A\nmetadata:\n  name: " + name + "\n  annotations: {n: \"" +
           note + "\"}\n";
  };
  SourceRegistry registry;
  dir.Write("a.yaml", doc("one", "v1") + "---\n" + doc("two", "v1"));
  registry.Update("a.yaml", ReadFileDocuments(dir.path(), "a.yaml", options));
  EXPECT_EQ(registry.TakeChanges().size(), 2u);

  // "one" too big: refused, its last good version kept; "two" changes.
  dir.Write("a.yaml", doc("one", std::string(40, 'x')) + "---\n" + doc("two", "v2"));
  FileDocuments read = ReadFileDocuments(dir.path(), "a.yaml", options);
  ASSERT_EQ(read.objects.size(), 1u);
  ASSERT_EQ(read.refused.size(), 1u);
  EXPECT_EQ(read.refused[0].first.name, "one");
  EXPECT_EQ(read.errors[read.refused[0].second].object, "A one");
  registry.Update("a.yaml", std::move(read));
  std::vector<ConfigChange> changes = registry.TakeChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].ref.name, "two");
  ASSERT_EQ(registry.Errors().size(), 1u);
  EXPECT_EQ(registry.Errors()[0].source.line, 1);
  EXPECT_EQ(registry.Errors()[0].message,
            "a.yaml:1: A one: refused: metadata.annotations: keys and values hold 41 bytes, more "
            "than the limit of 16 (limits.max_annotation_bytes); keeping its last good version");
  EXPECT_EQ(registry.Locate(sdk::ObjectRef{"", "A", "", "one"}).size(), 1u);

  // Three documents where two are allowed: the file is refused whole, nothing changes.
  dir.Write("a.yaml", doc("one", "v3") + "---\n" + doc("two", "v3") + "---\n" + doc("x", ""));
  read = ReadFileDocuments(dir.path(), "a.yaml", options);
  EXPECT_EQ(read.state, FileDocuments::State::kUnparsable);
  registry.Update("a.yaml", std::move(read));
  EXPECT_TRUE(registry.TakeChanges().empty());
  ASSERT_EQ(registry.Errors().size(), 1u);
  EXPECT_EQ(registry.Errors()[0].message,
            "a.yaml: 3 documents, more than the limit of 2 (limits.max_objects_per_file); "
            "refusing the file; keeping the 2 objects it last defined");

  // A new object refused at once has nothing to keep.
  dir.Write("b.yaml", doc("new", std::string(40, 'x')));
  registry.Update("b.yaml", ReadFileDocuments(dir.path(), "b.yaml", options));
  EXPECT_TRUE(registry.TakeChanges().empty());
  EXPECT_TRUE(registry.Locate(sdk::ObjectRef{"", "A", "", "new"}).empty());
}

TEST(ObjectLimitsTest, FileOverMaxFileBytesIsRefusedUnread) {
  TempDir dir;
  dir.Write("big.yaml", std::string(4096, '#'));
  auto text = ReadFileText(dir.path() / "big.yaml", 1000);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(text.status().message(),
            "file is larger than 1000 bytes (4096 bytes, limits.max_file_bytes); refusing it");
}

TEST(FileReadWorkerTest, ReadsInOrderOnceAndAgainWhenHandedWhileReading) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> reads;
  std::vector<std::string> done;
  bool release = false;
  FileReadWorker worker(
      [&](const std::string& file) {
        std::unique_lock<std::mutex> lock(mu);
        reads.push_back(file);
        cv.notify_all();
        // The first read waits until the test has handed more files.
        cv.wait(lock, [&] { return release || reads.size() > 1; });
        return FileDocuments();
      },
      [&](const std::string& file, FileDocuments) {
        std::lock_guard<std::mutex> lock(mu);
        done.push_back(file);
        cv.notify_all();
      });
  worker.Enqueue("a");
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return reads.size() == 1; }));
  }
  EXPECT_TRUE(worker.Holds("a"));
  worker.Enqueue("a");  // while being read: read again afterwards
  worker.Enqueue("b");
  worker.Enqueue("b");  // queued: once
  EXPECT_TRUE(worker.Holds("b"));
  EXPECT_FALSE(worker.Holds("c"));
  {
    std::unique_lock<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return done.size() == 3; }));
    EXPECT_EQ(reads, (std::vector<std::string>{"a", "a", "b"}));
    EXPECT_EQ(done, (std::vector<std::string>{"a", "a", "b"}));
  }
  worker.Stop();
  EXPECT_FALSE(worker.Holds("a"));
  worker.Enqueue("c");  // after Stop: ignored
}

// BatchLog records what a FileConfigCenter delivers, in order, as "name=annotation" (the
// annotation cut to 8 bytes).
class BatchLog : public ConfigListener {
 public:
  void OnChanges(std::vector<ConfigChange> changes, bool) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const ConfigChange& change : changes) {
      std::string note = change.doc ? json::GetString(*change.doc, "metadata.annotations.n") : "";
      delivered_.push_back(change.ref.name + "=" + note.substr(0, 8));
    }
    cv_.notify_all();
  }
  // WaitFor waits (at most 30 s) until `entry` was delivered; returns everything delivered.
  std::vector<std::string> WaitFor(const std::string& entry) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(30), [&] {
      return std::find(delivered_.begin(), delivered_.end(), entry) != delivered_.end();
    });
    return delivered_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> delivered_;
};

TEST(FileConfigCenterLimitsTest, LargeFileDoesNotDelayAnEditOfAnotherFile) {
  TempDir dir;
  auto doc = [](const std::string& name, const std::string& note) {
    return "apiVersion: v1\nkind: A\nmetadata:\n  name: " + name + "\n  annotations: {n: \"" +
           note + "\"}\n";
  };
  // Large from the start: the initial batch still holds it (Start() reads everything).
  dir.Write("big.yaml", doc("big", "v1" + std::string(100 * 1024, '1')));
  dir.Write("small.yaml", doc("small", "v1"));
  FileConfigCenterOptions options;
  options.dir = dir.path();
  options.identifier = KindAndName;
  options.debounce = std::chrono::milliseconds(5);
  options.large_file_bytes = 64 * 1024;
  options.object_limits.max_annotation_bytes = 16 << 20;
  options.object_limits.max_object_bytes = 16 << 20;
  BatchLog log;
  FileConfigCenter center(options);
  ASSERT_TRUE(center.Start(&log).ok());
  EXPECT_EQ(log.WaitFor("small=v1"), (std::vector<std::string>{"big=v1111111", "small=v1"}));

  // 8 MB in one annotation (within the object limits here): parsing it takes long enough (about
  // half a second in a debug build) that an edit of another file, made right after, comes first.
  dir.Write("big.yaml.staged", doc("big", "v2" + std::string(8 << 20, '2')));
  fs::rename(dir.path() / "big.yaml.staged", dir.path() / "big.yaml");
  dir.Write("small.yaml.staged", doc("small", "v2"));
  fs::rename(dir.path() / "small.yaml.staged", dir.path() / "small.yaml");
  EXPECT_EQ(log.WaitFor("small=v2"),
            (std::vector<std::string>{"big=v1111111", "small=v1", "small=v2"}));
  EXPECT_EQ(log.WaitFor("big=v2222222"),
            (std::vector<std::string>{"big=v1111111", "small=v1", "small=v2", "big=v2222222"}));
  center.Stop();
}

TEST(FileConfigCenterLimitsTest, FileWrittenWithoutPauseDoesNotDelayAnotherFile) {
  TempDir dir;
  dir.Write("busy.yaml", "# being written\n");
  dir.Write("small.yaml", "apiVersion: v1\nkind: A\nmetadata: {name: small}\n");
  FileConfigCenterOptions options;
  options.dir = dir.path();
  options.identifier = KindAndName;
  options.debounce = std::chrono::milliseconds(20);
  options.max_delay = std::chrono::seconds(60);  // busy.yaml is never quiet while written
  BatchLog log;
  FileConfigCenter center(options);
  ASSERT_TRUE(center.Start(&log).ok());
  ASSERT_EQ(log.WaitFor("small="), (std::vector<std::string>{"small="}));

  // A writer appends to busy.yaml without pause until small.yaml's edit is delivered.
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::ofstream out(dir.path() / "busy.yaml", std::ios::app | std::ios::binary);
    const std::string chunk = "# " + std::string(4094, '.') + "\n";
    while (!done.load()) out.write(chunk.data(), chunk.size()).flush();
  });
  dir.Write("small.yaml.staged",
            "apiVersion: v1\nkind: A\nmetadata: {name: small, annotations: {n: v2}}\n");
  fs::rename(dir.path() / "small.yaml.staged", dir.path() / "small.yaml");
  auto started = std::chrono::steady_clock::now();
  std::vector<std::string> delivered = log.WaitFor("small=v2");
  auto waited = std::chrono::steady_clock::now() - started;
  done = true;
  writer.join();
  EXPECT_EQ(delivered, (std::vector<std::string>{"small=", "small=v2"}));
  EXPECT_LT(waited, std::chrono::seconds(5)) << "the edit waited for the other file's writes";
  center.Stop();
}

TEST(FieldLinesTest, LinesOfFieldsInTheRightDocument) {
  TempDir dir;
  dir.Write("r.yaml",
            "kind: A\nmetadata: {name: first}\n"  // 1-2
            "---\n"                               // 3
            "# second\n"                          // 4
            "kind: A\n"                           // 5
            "metadata:\n"                         // 6
            "  name: second\n"                    // 7
            "  labels: {\"a.b/c\": x}\n"          // 8
            "spec:\n"                             // 9
            "  rules:\n"                          // 10
            "  - matches:\n"                      // 11
            "    - path: {type: Prefix}\n"        // 12
            "    - path:\n"                       // 13
            "        type: Nope\n");              // 14
  std::vector<int> lines =
      FieldLines(dir.path() / "r.yaml", 5,
                 {"spec.rules[0].matches[1].path.type", "spec.rules[0].matches[0].path",
                  "metadata.labels[\"a.b/c\"]", "", "spec.rules[3]", "spec.missing.deeper"},
                 1 << 20);
  EXPECT_EQ(lines, (std::vector<int>{14, 12, 8, 5, 10, 9}));
  EXPECT_EQ(FieldLines(dir.path() / "r.yaml", 1, {"metadata.name"}, 1 << 20),
            (std::vector<int>{2}));
  // Too large to parse again, or gone: the document's line.
  EXPECT_EQ(FieldLines(dir.path() / "r.yaml", 5, {"spec"}, 10), (std::vector<int>{5}));
  EXPECT_EQ(FieldLines(dir.path() / "gone.yaml", 5, {"spec"}, 1 << 20), (std::vector<int>{5}));
}

}  // namespace
}  // namespace portico::controller
