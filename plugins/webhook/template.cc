// template.cc: see template.h.
#include "template.h"

namespace portico::plugins::webhook {
namespace {

bool KnownVariable(std::string_view name) {
  for (std::string_view v : {"method", "path", "query", "host", "client_ip", "route", "rule"}) {
    if (name == v) return true;
  }
  for (std::string_view prefix : {"header.", "query."}) {
    if (name.substr(0, prefix.size()) == prefix && name.size() > prefix.size()) return true;
  }
  return false;
}

}  // namespace

StatusOr<Template> Template::Parse(std::string_view text, const std::string& field) {
  Template t;
  t.source_.assign(text);
  std::string literal;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        literal.push_back('}');
        ++i;
        continue;
      }
      return InvalidArgumentError(field + ": a '}' without its '{' at offset " + std::to_string(i) +
                                  " (write \"}}\" for a literal brace)");
    }
    if (c != '{') {
      literal.push_back(c);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      literal.push_back('{');
      ++i;
      continue;
    }
    const size_t close = text.find('}', i + 1);
    if (close == std::string_view::npos) {
      return InvalidArgumentError(field + ": the '{' at offset " + std::to_string(i) +
                                  " is not closed (write \"{{\" for a literal brace)");
    }
    std::string name(text.substr(i + 1, close - i - 1));
    if (!KnownVariable(name)) {
      return InvalidArgumentError(
          field + ": unknown template variable {" + name +
          "} (known: method, path, query, host, client_ip, route, rule, header.NAME, "
          "query.NAME)");
    }
    if (!literal.empty()) t.pieces_.push_back({false, std::move(literal)});
    literal.clear();
    if (name.rfind("header.", 0) == 0) {  // header names compare case-insensitively
      for (char& ch : name) ch = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch;
    }
    t.pieces_.push_back({true, std::move(name)});
    i = close;
  }
  if (!literal.empty()) t.pieces_.push_back({false, std::move(literal)});
  return t;
}

bool Template::Render(const RequestValues& values, Missing missing, std::string* out,
                      std::string (*escape)(std::string_view)) const {
  bool complete = true;
  for (const Piece& piece : pieces_) {
    if (!piece.variable) {
      out->append(piece.text);
      continue;
    }
    std::optional<std::string> value = values(piece.text);
    if (!value) {
      if (missing == Missing::kFail) return false;
      if (missing == Missing::kOmit) complete = false;
      continue;  // nothing in its place
    }
    out->append(escape != nullptr ? escape(*value) : *value);
  }
  return complete;
}

bool Template::has_variables() const {
  for (const Piece& piece : pieces_) {
    if (piece.variable) return true;
  }
  return false;
}

std::string PathEscape(std::string_view value) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    if (keep) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace portico::plugins::webhook
