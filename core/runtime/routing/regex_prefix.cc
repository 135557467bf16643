// regex_prefix.cc: see regex_prefix.h.
#include "core/runtime/routing/regex_prefix.h"

namespace portico::core::routing {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// HasTopLevelAlternation reports a '|' outside every group and character class: then the
// branches share no prefix we could trust ("abc|def").
bool HasTopLevelAlternation(std::string_view p) {
  int depth = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      ++i;  // the escaped character
    } else if (c == '[') {
      // A class: "[]...]" and "[^]...]" hold a literal ']' first; escapes may hide one too.
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;
      for (; j < p.size() && p[j] != ']'; ++j) {
        if (p[j] == '\\') ++j;
      }
      i = j;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (depth > 0) --depth;
    } else if (c == '|' && depth == 0) {
      return true;
    }
  }
  return false;
}

bool IsQuantifier(char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

}  // namespace

std::string LiteralPrefix(std::string_view p) {
  if (HasTopLevelAlternation(p)) return "";
  std::string out;
  size_t i = 0;
  if (!p.empty() && p[0] == '^') i = 1;  // redundant under a full match
  while (i < p.size()) {
    const size_t before = out.size();
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) break;
      const char n = p[i + 1];
      // \d \w \b \pN \x41 \Q...\E \z ...: not a plain literal; stop.
      if (IsAlnum(n) || (static_cast<unsigned char>(n) & 0x80) != 0) break;
      out.push_back(n);
      i += 2;
    } else if ((static_cast<unsigned char>(c) & 0x80) != 0) {
      break;  // a multi-byte character: a quantifier after it would apply to all its bytes
    } else if (c == '.' || c == '[' || c == ']' || c == '(' || c == ')' || c == '|' || c == '^' ||
               c == '$' || IsQuantifier(c)) {
      break;
    } else {
      out.push_back(c);
      ++i;
    }
    // A quantified character may be absent (or repeated): it is not part of the prefix.
    if (i < p.size() && IsQuantifier(p[i])) {
      out.resize(before);
      break;
    }
  }
  return out;
}

}  // namespace portico::core::routing
