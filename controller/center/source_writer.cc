#include "controller/center/source_writer.h"

#include <optional>
#include <utility>

#include "controller/center/atomic_write.h"
#include "controller/center/document_splice.h"
#include "controller/center/file_documents.h"
#include "controller/center/yaml_render.h"

namespace portico::controller {
namespace {

// ReadsBackAs: `text` parses into exactly `expected`, in order.
bool ReadsBackAs(const std::string& text, const std::vector<const rapidjson::Value*>& expected,
                 const EditOptions& options) {
  auto docs = ParseYamlDocuments(text, "edited", options.limits);
  if (!docs.ok() || docs->size() != expected.size()) return false;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (json::Serialize((*docs)[i].json) != json::Serialize(*expected[i])) return false;
  }
  return true;
}

}  // namespace

StatusOr<EditResult> EditConfigFile(const std::filesystem::path& path, const std::string& display,
                                    const std::vector<DocumentEdit>& edits,
                                    const EditOptions& options) {
  EditResult result;
  std::string text;
  bool exists = true;
  StatusOr<std::string> read = ReadFileText(path, options.max_file_bytes);
  if (read.ok()) {
    text = std::move(read).value();
  } else if (read.status().code() == StatusCode::kNotFound) {
    exists = false;
  } else {
    return read.status().WithPrefix(display);
  }
  std::vector<YamlDocument> docs;
  if (!text.empty()) {
    auto parsed = ParseYamlDocuments(text, display, options.limits);
    if (!parsed.ok()) {
      return FailedPreconditionError(display + " does not parse (" + parsed.status().message() +
                                     "); fix or remove it first");
    }
    docs = std::move(parsed).value();
  }
  std::vector<std::optional<sdk::ObjectRef>> refs(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    auto ref = IdentifyDocument(docs[i].json, *options.identifier);
    if (ref.ok()) refs[i] = std::move(ref).value();
  }

  const bool json_file = path.extension() == ".json";
  auto render = [&](const rapidjson::Value& value) -> std::string {
    if (json_file) return RenderJson(value);
    StatusOr<std::string> yaml = RenderYaml(value);
    return yaml.ok() ? std::move(yaml).value() : RenderJson(value);  // JSON is YAML too
  };

  // What the file must hold afterwards, document by document.
  std::vector<const rapidjson::Value*> intended;
  for (const YamlDocument& doc : docs) intended.push_back(&doc.json);
  std::vector<const rapidjson::Value*> appended;
  std::vector<DocumentPatch> patches;
  for (const DocumentEdit& edit : edits) {
    bool found = false;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (refs[i] != edit.ref) continue;
      found = true;
      if (edit.doc == nullptr) {
        patches.push_back({i, std::nullopt});
        intended[i] = nullptr;
        continue;
      }
      patches.push_back({i, render(*edit.doc)});
      intended[i] = edit.doc;
      break;  // only the winning (first) document is replaced
    }
    if (found) continue;
    if (edit.doc != nullptr && options.append_missing) {
      appended.push_back(edit.doc);
    } else {
      result.missing.push_back(edit.ref);
    }
  }
  if (patches.empty() && appended.empty()) return result;

  std::vector<const rapidjson::Value*> expected;
  for (const rapidjson::Value* doc : intended) {
    if (doc != nullptr) expected.push_back(doc);
  }
  const bool had_documents = !expected.empty();
  expected.insert(expected.end(), appended.begin(), appended.end());
  if (expected.empty()) {
    if (exists) {
      Status removed = RemoveFileDurably(path);
      if (!removed.ok() && removed.code() != StatusCode::kNotFound) return removed;
    }
    result.removed = true;
    return result;
  }

  std::vector<int> lines;
  for (const YamlDocument& doc : docs) lines.push_back(doc.line);
  StatusOr<std::string> spliced = SpliceDocuments(text, lines, std::move(patches));
  std::string new_text;
  bool spliced_ok = spliced.ok();
  if (spliced_ok) {
    new_text = std::move(spliced).value();
    bool has_documents = had_documents;
    for (const rapidjson::Value* doc : appended) {
      new_text = AppendDocument(new_text, has_documents, render(*doc));
      has_documents = true;
    }
    spliced_ok = ReadsBackAs(new_text, expected, options);
  }
  if (!spliced_ok) {
    new_text.clear();
    for (size_t i = 0; i < expected.size(); ++i) {
      if (i > 0) new_text += "---\n";
      new_text += render(*expected[i]);
    }
    if (!ReadsBackAs(new_text, expected, options)) {
      return InternalError(display + ": the edited file does not read back as intended");
    }
  }
  // A file that holds a Secret is created readable by its owner only.
  bool holds_secret = false;
  for (const rapidjson::Value* doc : expected) {
    holds_secret |=
        json::GetString(*doc, "kind") == "Secret" && json::GetString(*doc, "apiVersion") == "v1";
  }
  PORTICO_RETURN_IF_ERROR(WriteFileAtomically(path, new_text, holds_secret ? 0600 : 0644));
  result.written = true;
  return result;
}

}  // namespace portico::controller
