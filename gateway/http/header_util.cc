// header_util.cc: see header_util.h.
#include "gateway/http/header_util.h"

#include "gateway/http/message.h"
#include "gateway/http/scan.h"

namespace portico::gateway::http {

bool IsToken(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

const HeaderField* HeaderList::Find(std::string_view name) const {
  for (const HeaderField& field : *this) {
    if (EqualsIgnoreCase(field.name, name)) return &field;
  }
  return nullptr;
}

size_t HeaderList::Count(std::string_view name) const {
  size_t count = 0;
  for (const HeaderField& field : *this) count += EqualsIgnoreCase(field.name, name) ? 1 : 0;
  return count;
}

std::string_view ParseFieldLine(std::string_view line, HeaderField* field) {
  return internal::ParseFieldLine(line, line.data() + line.size(), field);
}

namespace internal {

std::string_view ParseFieldLine(std::string_view line, const char* readable_end,
                                HeaderField* field) {
  const char* p = line.data();
  const char* const end = p + line.size();
  const char* const name = p;
  if (readable_end > end && !IsTokenChar(*end)) {
    // *end (the parsers' CR) stops the scan: no bounds check per byte.
    while (IsTokenChar(p[0]) && IsTokenChar(p[1]) && IsTokenChar(p[2]) && IsTokenChar(p[3])) {
      p += 4;
    }
    while (IsTokenChar(*p)) ++p;
  } else {
    while (p < end && IsTokenChar(*p)) ++p;
  }
  if (p >= end) return p == name ? "invalid_header_name" : "missing_colon";
  if (*p != ':') {
    if (*p == ' ' || *p == '\t') return p == name ? "obs_fold" : "whitespace_before_colon";
    if (*p == '\r') return "bare_cr";
    return "invalid_header_name";
  }
  if (p == name) return "invalid_header_name";
  const size_t name_size = static_cast<size_t>(p - name);
  ++p;
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  const char* const value = p;
  p = FindInvalidValueByte(p, end, readable_end);
  if (p != end) return *p == '\r' ? "bare_cr" : "invalid_header_value";
  const char* value_end = end;
  while (value_end > value && (value_end[-1] == ' ' || value_end[-1] == '\t')) --value_end;
  field->name = std::string_view(name, name_size);
  field->value = std::string_view(value, static_cast<size_t>(value_end - value));
  return {};
}

const char* TryFieldLine(const char* p, const char* end, HeaderField* field) {
  const char* const name = p;
  while (end - p >= 4 && IsTokenChar(p[0]) && IsTokenChar(p[1]) && IsTokenChar(p[2]) &&
         IsTokenChar(p[3])) {
    p += 4;
  }
  while (p < end && IsTokenChar(*p)) ++p;
  if (p == name || p == end || *p != ':') return nullptr;
  const size_t name_size = static_cast<size_t>(p - name);
  ++p;
  if (p < end && *p == ' ') ++p;  // The usual single SP.
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  const char* const value = p;
  // Stops at the first CTL: the CR of a well-formed line (an LF cannot come earlier).
  p = FindInvalidValueByte(p, end, end);
  if (end - p < 2 || p[0] != '\r' || p[1] != '\n') return nullptr;
  const char* value_end = p;
  while (value_end > value && (value_end[-1] == ' ' || value_end[-1] == '\t')) --value_end;
  field->name = std::string_view(name, name_size);
  field->value = std::string_view(value, static_cast<size_t>(value_end - value));
  return p + 2;
}

}  // namespace internal

bool ParseContentLength(std::string_view value, uint64_t* length) {
  if (value.empty()) return false;
  uint64_t result = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (result > (kMaxBodyLength - digit) / 10) return false;
    result = result * 10 + digit;
  }
  *length = result;
  return true;
}

bool ListContainsToken(std::string_view value, std::string_view token) {
  return !ForEachListElement(
      value, [&](std::string_view element) { return !EqualsIgnoreCase(element, token); });
}

bool IsHopByHopHeader(std::string_view name) {
  switch (name.size()) {
    case 2:
      return EqualsIgnoreCase(name, "te");
    case 7:
      return EqualsIgnoreCase(name, "trailer") || EqualsIgnoreCase(name, "upgrade");
    case 10:
      return EqualsIgnoreCase(name, "connection") || EqualsIgnoreCase(name, "keep-alive");
    case 16:
      return EqualsIgnoreCase(name, "proxy-connection");
    case 17:
      return EqualsIgnoreCase(name, "transfer-encoding");
    default:
      return false;
  }
}

HopByHopFilter::HopByHopFilter(std::span<const HeaderField> headers) : headers_(headers) {
  for (const HeaderField& field : headers_) {
    if (field.name.size() != 10 || !EqualsIgnoreCase(field.name, "connection")) continue;
    ForEachListElement(field.value, [&](std::string_view element) {
      if (!EqualsIgnoreCase(element, "close") && !IsHopByHopHeader(element)) {
        has_extra_names_ = true;
        return false;
      }
      return true;
    });
    if (has_extra_names_) return;
  }
}

bool HopByHopFilter::Drops(std::string_view name) const {
  if (IsHopByHopHeader(name)) return true;
  if (!has_extra_names_) return false;
  for (const HeaderField& field : headers_) {
    if (field.name.size() == 10 && EqualsIgnoreCase(field.name, "connection") &&
        ListContainsToken(field.value, name)) {
      return true;
    }
  }
  return false;
}

}  // namespace portico::gateway::http
