// yaml_documents_fuzz: the controller's YAML loader (ParseYamlDocuments, with its depth and node
// limits) on any file: it never crashes, and every document it accepts renders back
// (RenderYaml, what `portico-ctl get -o yaml`, `export` and apply's file edits write) to YAML
// that parses to the same JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "controller/center/yaml_render.h"
#include "controller/center/yaml_to_json.h"
#include "portico/sdk/json.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  portico::controller::YamlLimits limits;
  limits.max_nodes = 20000;  // the input is small; bound alias bombs to what one run affords
  auto docs = portico::controller::ParseYamlDocuments(text, "fuzz.yaml", limits);
  if (!docs.ok()) {
    FUZZ_CHECK(docs.status().message().find("fuzz.yaml") != std::string::npos,
               "error without the file name: %s", docs.status().message().c_str());
    return 0;
  }
  for (const portico::controller::YamlDocument& doc : *docs) {
    std::string json = portico::json::Serialize(doc.json);
    auto yaml = portico::controller::RenderYaml(doc.json);
    if (!yaml.ok()) continue;  // a value RenderYaml refuses (it says so) is not written
    auto back = portico::controller::ParseYamlDocuments(*yaml, "rendered.yaml");
    FUZZ_CHECK(back.ok(), "rendered YAML does not parse: %s\n--- rendered:\n%s",
               back.status().message().c_str(), yaml->c_str());
    FUZZ_CHECK(back->size() == 1, "rendered YAML holds %zu documents:\n%s", back->size(),
               yaml->c_str());
    std::string again = portico::json::Serialize(back->front().json);
    FUZZ_CHECK(again == json,
               "round trip changed the document\n  before: %s\n  after:  %s\n"
               "--- rendered:\n%s",
               json.c_str(), again.c_str(), yaml->c_str());
  }
  return 0;
}
