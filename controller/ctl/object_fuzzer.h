// object_fuzzer.h: ObjectFuzzer, random resource objects of one kind for `portico-ctl plugin
// verify`: documents generated from the kind's JSON Schema (so many pass validation and reach the
// processor), the same with one part broken (a wrong type, a missing required field, extreme
// numbers, long or odd strings), and malformed JSON text (cut short, bad bytes, deep nesting).
//
// Thread-safety: one ObjectFuzzer per thread. Ownership: keeps a copy of the schema.
#ifndef PORTICO_CONTROLLER_CTL_OBJECT_FUZZER_H_
#define PORTICO_CONTROLLER_CTL_OBJECT_FUZZER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <string>

#include "core/plugin/kind_registry.h"
#include "portico/sdk/json.h"

namespace portico::ctl {

class ObjectFuzzer {
 public:
  // `kind` names the objects (apiVersion, kind, metadata); its schema (may be empty) guides the
  // generator. The same seed gives the same sequence.
  ObjectFuzzer(const core::KindInfo& kind, uint64_t seed);

  // Generated returns a schema-guided object of the kind as JSON text.
  std::string Generated();
  // Mutated returns a generated object with one random part replaced or removed.
  std::string Mutated();
  // Malformed returns text that is not valid JSON, or JSON that is not an object.
  std::string Malformed();

 private:
  void Generate(const rapidjson::Value& schema, rapidjson::Value& out, int depth);
  void RandomValue(rapidjson::Value& out, int depth);
  std::string RandomString(size_t min, size_t max);
  // Matching returns a string of [min, max] bytes the schema "pattern" accepts, found among
  // common shapes and random strings, or `fallback` (also now and then on purpose).
  std::string Matching(const std::string& pattern, size_t min, size_t max, std::string fallback);
  void SetIdentity(rapidjson::Document& doc);
  const rapidjson::Value* Resolve(const rapidjson::Value& schema) const;
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  size_t Below(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }

  const core::KindInfo kind_;
  rapidjson::Document schema_;
  rapidjson::Document::AllocatorType* alloc_ = nullptr;
  std::mt19937_64 rng_;
  std::map<std::string, std::optional<std::regex>> patterns_;
};

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_OBJECT_FUZZER_H_
