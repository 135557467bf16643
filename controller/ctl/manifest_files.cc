#include "controller/ctl/manifest_files.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace portico::ctl {
namespace {

namespace fs = std::filesystem;

bool IsManifest(const fs::path& path) {
  std::string name = path.filename().string();
  if (name.empty() || name[0] == '.') return false;
  std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

std::string Scalar(const YAML::Node& node, const char* key) {
  if (!node.IsDefined() || !node.IsMap()) return "";
  YAML::Node value = node[key];
  return value && value.IsScalar() ? value.Scalar() : "";
}

}  // namespace

std::string ManifestObject::KindName() const {
  size_t slash = api_version.rfind('/');
  if (slash == std::string::npos) return kind;  // core group: "v1"
  return kind + "." + api_version.substr(0, slash);
}

StatusOr<std::vector<std::string>> CollectManifestFiles(const std::string& path, bool recursive) {
  if (path == "-") return std::vector<std::string>{path};
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    return NotFoundError("the path \"" + path + "\" does not exist");
  }
  if (!fs::is_directory(status)) return std::vector<std::string>{path};
  std::vector<std::string> out;
  auto add = [&out](const fs::directory_entry& entry) {
    std::error_code e;
    if (entry.is_regular_file(e) && IsManifest(entry.path())) out.push_back(entry.path().string());
  };
  if (recursive) {
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_directory() && it->path().filename().string().starts_with('.')) {
        it.disable_recursion_pending();
        continue;
      }
      add(*it);
    }
  } else {
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) add(*it);
  }
  if (ec) return UnavailableError("cannot read directory " + path + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

StatusOr<std::string> ReadManifest(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

StatusOr<std::vector<ManifestObject>> ReadManifestObjects(std::string_view text,
                                                          std::string_view file) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(std::string(file) + ":" + std::to_string(e.mark.line + 1) + ": " +
                                e.msg);
  }
  std::vector<ManifestObject> out;
  for (const YAML::Node& doc : docs) {
    if (doc.IsNull()) continue;
    std::string where = std::string(file) + ":" + std::to_string(doc.Mark().line + 1);
    if (!doc.IsMap()) return InvalidArgumentError(where + ": the document is not a map");
    ManifestObject object;
    object.api_version = Scalar(doc, "apiVersion");
    object.kind = Scalar(doc, "kind");
    if (YAML::Node metadata = doc["metadata"]; metadata.IsDefined()) {
      object.name = Scalar(metadata, "name");
      object.ns = Scalar(metadata, "namespace");
    }
    if (object.api_version.empty() || object.kind.empty() || object.name.empty()) {
      return InvalidArgumentError(where +
                                  ": the document needs apiVersion, kind and "
                                  "metadata.name");
    }
    out.push_back(std::move(object));
  }
  return out;
}

}  // namespace portico::ctl
