// path_normalize_fuzz: NormalizePath's promises on any input: a path it accepts normalises to
// one that starts with '/', has no empty, "." or ".." segment, no backslash, no lower-case or
// unreserved escape, and is its own normal form (normalising twice changes nothing); decoding
// escaped slashes first (UnescapeSlashes) keeps those properties.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/http/path_normalize.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }
bool IsUnreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

void CheckNormal(const std::string& input, const std::string& out) {
  FUZZ_CHECK(!out.empty() && out[0] == '/', "\"%s\" -> \"%s\"", input.c_str(), out.c_str());
  FUZZ_CHECK(out.find("//") == std::string::npos, "\"%s\" -> \"%s\"", input.c_str(), out.c_str());
  FUZZ_CHECK(out.find('\\') == std::string::npos, "\"%s\" -> \"%s\"", input.c_str(), out.c_str());
  for (std::string_view dot : {"/./", "/../"}) {
    FUZZ_CHECK((out + "/").find(dot) == std::string::npos, "\"%s\" -> \"%s\"", input.c_str(),
               out.c_str());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != '%') continue;
    FUZZ_CHECK(i + 2 < out.size() && IsHex(out[i + 1]) && IsHex(out[i + 2]),
               "\"%s\" -> \"%s\": escape at %zu", input.c_str(), out.c_str(), i);
    int value = std::stoi(out.substr(i + 1, 2), nullptr, 16);
    FUZZ_CHECK(!IsUnreserved(static_cast<char>(value)), "\"%s\" -> \"%s\": %%%c%c kept",
               input.c_str(), out.c_str(), out[i + 1], out[i + 2]);
  }
  std::string again;
  FUZZ_CHECK(portico::gateway::http::NormalizePath(out, &again) && again == out,
             "\"%s\" -> \"%s\" -> \"%s\"", input.c_str(), out.c_str(), again.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  std::string out;
  if (portico::gateway::http::NormalizePath(input, &out)) CheckNormal(input, out);
  std::string unescaped;
  portico::gateway::http::UnescapeSlashes(input, &unescaped);
  FUZZ_CHECK(!portico::gateway::http::HasEscapedSlash(unescaped),
             "UnescapeSlashes(\"%s\") = \"%s\" still has an escaped slash", input.c_str(),
             unescaped.c_str());
  if (portico::gateway::http::NormalizePath(unescaped, &out)) CheckNormal(unescaped, out);
  return 0;
}
