#include "gateway/http/path_normalize.h"

#include <cstring>

#include "gateway/http/header_util.h"

namespace portico::gateway::http {
namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// IsSlash: '/' or '\\', which Envoy's normaliser (Chromium's path canonicaliser) turns into '/'.
bool IsSlash(char c) { return c == '/' || c == '\\'; }

// NeedsWork reports whether `path` holds an escape, a backslash, an empty segment or a dot
// segment: paths without any (nearly all) are copied as they are.
bool NeedsWork(std::string_view path) {
  for (size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '%' || c == '\\') return true;
    if (c != '/' || i + 1 >= path.size()) continue;
    char next = path[i + 1];
    if (next == '/') return true;
    if (next == '.') {
      // "/." or "/.." followed by '/' or the end is a dot segment.
      size_t end = i + 2;
      if (end < path.size() && path[end] == '.') ++end;
      if (end == path.size() || path[end] == '/') return true;
    }
  }
  return false;
}

}  // namespace

bool NormalizePath(std::string_view path, std::string* out) {
  if (path.empty() || path[0] != '/') return false;
  out->clear();
  if (!NeedsWork(path)) {
    out->append(path);
    return true;
  }
  // One pass over the segments: each is decoded into `out` after a '/', then dropped (".") or
  // dropped with the previous one ("..") when it is a dot segment. Dot segments are recognised
  // after decoding ("%2E%2E" is ".."), as RFC 3986 §6.2.2 orders it.
  size_t i = 0;
  while (i < path.size()) {
    // IsSlash(path[i]): skip the run of slashes, then decode one segment.
    while (i < path.size() && IsSlash(path[i])) ++i;
    size_t segment_start = out->size();
    out->push_back('/');
    while (i < path.size() && !IsSlash(path[i])) {
      char c = path[i];
      if (c != '%') {
        out->push_back(c);
        ++i;
        continue;
      }
      if (i + 2 >= path.size()) return false;  // '%' needs two more bytes
      int hi = HexDigitValue(path[i + 1]);
      int lo = HexDigitValue(path[i + 2]);
      if (hi < 0 || lo < 0) return false;
      unsigned char decoded = static_cast<unsigned char>(hi * 16 + lo);
      if (IsUnreserved(decoded)) {
        out->push_back(static_cast<char>(decoded));
      } else {
        static constexpr char kHex[] = "0123456789ABCDEF";
        out->push_back('%');
        out->push_back(kHex[hi]);
        out->push_back(kHex[lo]);
      }
      i += 3;
    }
    std::string_view segment(out->data() + segment_start + 1, out->size() - segment_start - 1);
    bool last = i >= path.size();
    if (segment == ".") {
      out->resize(segment_start);
      if (last) out->push_back('/');  // "/a/." -> "/a/"
    } else if (segment == "..") {
      out->resize(segment_start);
      size_t parent = out->rfind('/');
      out->resize(parent == std::string::npos ? 0 : parent);
      out->push_back('/');  // "/a/b/.." -> "/a/"; then the next segment follows this slash
      if (!last) out->pop_back();
    }
  }
  if (out->empty()) out->push_back('/');
  return true;
}

std::optional<EscapedSlashes> ParseEscapedSlashes(std::string_view name) {
  if (name == "KeepUnchanged") return EscapedSlashes::kKeepUnchanged;
  if (name == "RejectRequest") return EscapedSlashes::kRejectRequest;
  if (name == "UnescapeAndForward") return EscapedSlashes::kUnescapeAndForward;
  if (name == "UnescapeAndRedirect") return EscapedSlashes::kUnescapeAndRedirect;
  return std::nullopt;
}

namespace {

// EscapedSlashAt is the character "%2F"/"%5C" at path[i] stands for, or 0.
char EscapedSlashAt(std::string_view path, size_t i) {
  if (path[i] != '%' || i + 2 >= path.size()) return 0;
  const char hi = path[i + 1];
  const char lo = static_cast<char>(path[i + 2] | 0x20);  // lower-case a letter
  if (hi == '2' && lo == 'f') return '/';
  if (hi == '5' && lo == 'c') return '\\';
  return 0;
}

}  // namespace

bool HasEscapedSlash(std::string_view path) {
  for (const char* p = static_cast<const char*>(std::memchr(path.data(), '%', path.size()));
       p != nullptr;) {
    const size_t i = static_cast<size_t>(p - path.data());
    if (EscapedSlashAt(path, i) != 0) return true;
    p = static_cast<const char*>(std::memchr(p + 1, '%', path.size() - i - 1));
  }
  return false;
}

void UnescapeSlashes(std::string_view path, std::string* out) {
  out->clear();
  out->reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (char c = EscapedSlashAt(path, i); c != 0) {
      out->push_back(c);
      i += 2;
    } else {
      out->push_back(path[i]);
    }
  }
}

}  // namespace portico::gateway::http
