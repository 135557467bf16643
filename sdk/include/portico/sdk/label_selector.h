// label_selector.h: LabelSelector, a parser and matcher for Kubernetes label selector strings
// ("app=web,tier!=db", "env in (prod,staging)", "!canary", "team"), as used by the ABI's
// list_exports: the hosts evaluate selectors with it, and plugins may too. Header-only, std only.
//
// Grammar (k8s.io/apimachinery/pkg/labels): requirements separated by commas, each one of
//   key=value | key==value | key!=value | key | !key | key in (v1,v2) | key notin (v1,v2)
// with optional spaces around tokens. Semantics follow Kubernetes: "!=" and "notin" also match
// objects without the key; the empty selector matches everything.
//
// Thread-safety: a parsed LabelSelector is an immutable value; Matches() may be called from any
// thread.
#ifndef PORTICO_SDK_LABEL_SELECTOR_H_
#define PORTICO_SDK_LABEL_SELECTOR_H_

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::sdk {

// LabelSelector is a conjunction of requirements over an object's labels.
class LabelSelector {
 public:
  enum class Op { kEquals, kNotEquals, kExists, kDoesNotExist, kIn, kNotIn };

  // Requirement is one comma-separated term of a selector.
  struct Requirement {
    std::string key;
    Op op = Op::kExists;
    std::vector<std::string> values;  // one value for (Not)Equals, a set for (Not)In

    friend bool operator==(const Requirement&, const Requirement&) = default;
  };

  // Parse reads a selector string; the error names the offending position and text.
  static StatusOr<LabelSelector> Parse(std::string_view text) {
    LabelSelector selector;
    Parser parser{text};
    parser.SkipSpaces();
    if (parser.AtEnd()) return selector;
    while (true) {
      Requirement req;
      PORTICO_RETURN_IF_ERROR(parser.ParseRequirement(req));
      selector.requirements_.push_back(std::move(req));
      parser.SkipSpaces();
      if (parser.AtEnd()) break;
      if (!parser.Consume(",")) return parser.Error("expected ',' or end of selector");
    }
    return selector;
  }

  // Matches reports whether every requirement holds for `labels`.
  bool Matches(const std::map<std::string, std::string>& labels) const {
    for (const Requirement& req : requirements_) {
      auto it = labels.find(req.key);
      bool has = it != labels.end();
      auto in_values = [&] {
        return has &&
               std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
      };
      switch (req.op) {
        case Op::kEquals:
        case Op::kIn:
          if (!in_values()) return false;
          break;
        case Op::kNotEquals:
        case Op::kNotIn:
          if (in_values()) return false;
          break;
        case Op::kExists:
          if (!has) return false;
          break;
        case Op::kDoesNotExist:
          if (has) return false;
          break;
      }
    }
    return true;
  }

  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  // Parser walks the selector text; positions in errors are byte offsets.
  struct Parser {
    std::string_view text;
    size_t pos = 0;

    bool AtEnd() const { return pos >= text.size(); }
    void SkipSpaces() {
      while (!AtEnd() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    }
    bool Consume(std::string_view token) {
      if (text.substr(pos, token.size()) != token) return false;
      pos += token.size();
      return true;
    }
    Status Error(std::string_view what) const {
      return InvalidArgumentError("label selector \"" + std::string(text) +
                                  "\": " + std::string(what) + " at offset " + std::to_string(pos));
    }
    static bool IsKeyChar(char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.' || c == '/';
    }
    static bool IsValueChar(char c) { return IsKeyChar(c) && c != '/'; }

    std::string_view Read(bool (*accept)(char)) {
      size_t start = pos;
      while (!AtEnd() && accept(text[pos])) ++pos;
      return text.substr(start, pos - start);
    }
    // A label key: optional DNS-subdomain prefix and "/", then a name of at most 63 characters
    // that starts and ends with an alphanumeric character.
    Status ReadKey(std::string& out) {
      size_t start = pos;
      std::string_view key = Read(&IsKeyChar);
      if (key.empty()) return Error("expected a label key");
      size_t slash = key.find('/');
      std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
      std::string_view prefix = slash == std::string_view::npos ? "" : key.substr(0, slash);
      auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      };
      bool bad = name.empty() || name.size() > 63 || !alnum(name.front()) || !alnum(name.back()) ||
                 name.find('/') != std::string_view::npos ||
                 (slash != std::string_view::npos && (prefix.empty() || prefix.size() > 253));
      if (bad) {
        pos = start;
        return Error("invalid label key \"" + std::string(key) + "\"");
      }
      out = std::string(key);
      return OkStatus();
    }
    Status ReadValue(std::string& out) {
      size_t start = pos;
      std::string_view value = Read(&IsValueChar);
      if (value.size() > 63) {
        pos = start;
        return Error("label value longer than 63 characters");
      }
      out = std::string(value);
      return OkStatus();
    }
    // Keyword "in" / "notin" must be followed by a space or "(".
    bool ConsumeWord(std::string_view word) {
      if (text.substr(pos, word.size()) != word) return false;
      size_t after = pos + word.size();
      if (after < text.size() && text[after] != ' ' && text[after] != '\t' && text[after] != '(') {
        return false;
      }
      pos = after;
      return true;
    }
    Status ReadSet(std::vector<std::string>& out) {
      SkipSpaces();
      if (!Consume("(")) return Error("expected '(' after in/notin");
      while (true) {
        SkipSpaces();
        std::string value;
        PORTICO_RETURN_IF_ERROR(ReadValue(value));
        SkipSpaces();
        out.push_back(std::move(value));
        if (Consume(")")) break;
        if (!Consume(",")) return Error("expected ',' or ')' in value set");
      }
      if (out.size() == 1 && out[0].empty()) return Error("empty value set");
      return OkStatus();
    }
    Status ParseRequirement(Requirement& req) {
      SkipSpaces();
      if (Consume("!")) {
        SkipSpaces();
        req.op = Op::kDoesNotExist;
        return ReadKey(req.key);
      }
      PORTICO_RETURN_IF_ERROR(ReadKey(req.key));
      SkipSpaces();
      if (AtEnd() || text[pos] == ',') {
        req.op = Op::kExists;
        return OkStatus();
      }
      std::string value;
      if (Consume("!=")) {
        req.op = Op::kNotEquals;
      } else if (Consume("==") || Consume("=")) {
        req.op = Op::kEquals;
      } else if (ConsumeWord("notin")) {
        req.op = Op::kNotIn;
        return ReadSet(req.values);
      } else if (ConsumeWord("in")) {
        req.op = Op::kIn;
        return ReadSet(req.values);
      } else {
        return Error("expected an operator (=, ==, !=, in, notin)");
      }
      SkipSpaces();
      PORTICO_RETURN_IF_ERROR(ReadValue(value));
      req.values.push_back(std::move(value));
      return OkStatus();
    }
  };

  std::vector<Requirement> requirements_;
};

}  // namespace portico::sdk

#endif  // PORTICO_SDK_LABEL_SELECTOR_H_
