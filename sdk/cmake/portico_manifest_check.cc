// portico_manifest_check: the configure-time check of a plugin's manifest.json, run by
// portico_add_plugin() (PorticoPlugin.cmake builds it once per build tree with try_compile from
// the SDK headers it compiles plugins against, so in the Portico tree and from an installed
// prefix alike it is the hosts' own parser: portico::sdk::ParseManifest of manifest.h).
//
//   portico_manifest_check <manifest.json>
//
// Adds what portico_add_plugin() adds before embedding (manifestVersion, abi, sdkVersion), then
// judges the result as portico-controller, portico-gateway and portico-ctl judge the embedded
// manifest, and refuses fields no host reads (UnknownManifestFields). Exit 0 and no output when
// the manifest is good; otherwise exit 1 and one line naming the file, the field and the fix.
// Threading: a single-threaded command-line program.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/manifest.h"

namespace {

constexpr char kReference[] = "docs/plugins.md, \"Manifest reference\", lists every field";

// LineColumn renders a byte offset of `text` as "line L, column C".
std::string LineColumn(const std::string& text, size_t offset) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

int Fail(const std::string& path, const std::string& problem, const std::string& fix) {
  std::cerr << path << ": " << problem << "; fix: " << fix << " (" << kReference << ")\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: portico_manifest_check <manifest.json>\n";
    return 2;
  }
  const std::string path = argv[1];
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(path, "cannot be read", "create it beside CMakeLists.txt or pass MANIFEST");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();

  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    return Fail(path,
                std::string("not valid JSON at ") + LineColumn(text, doc.GetErrorOffset()) + ": " +
                    rapidjson::GetParseError_En(doc.GetParseError()),
                "correct the JSON syntax there");
  }
  if (!doc.IsObject()) return Fail(path, "not a JSON object", "write the manifest as {...}");

  // What portico_add_plugin() sets before embedding: these three are never the author's.
  auto& alloc = doc.GetAllocator();
  doc.RemoveMember("manifestVersion");
  doc.RemoveMember("abi");
  doc.RemoveMember("sdkVersion");
  doc.AddMember("manifestVersion", portico::sdk::kManifestVersion, alloc);
  rapidjson::Value abi(rapidjson::kObjectType);
  abi.AddMember("major", PORTICO_ABI_MAJOR, alloc);
  abi.AddMember("minor", PORTICO_ABI_MINOR, alloc);
  doc.AddMember("abi", abi, alloc);
  doc.AddMember("sdkVersion", rapidjson::StringRef(PORTICO_SDK_VERSION), alloc);

  auto parsed = portico::sdk::ParseManifest(portico::json::Serialize(doc));
  if (!parsed.ok()) {
    std::string problem = parsed.status().message();
    if (problem.rfind("manifest ", 0) == 0) problem = problem.substr(9);
    const std::string field = problem.substr(0, problem.find(':'));
    return Fail(path, problem, "edit \"" + field + "\" in this file as the message says");
  }
  const std::vector<std::string> unknown = portico::sdk::UnknownManifestFields(doc);
  if (!unknown.empty()) {
    return Fail(path,
                unknown.front() + ": unknown field (no host reads it; a misspelt field is dropped)",
                "rename it to a field the manifest has, or remove it");
  }
  return 0;
}
