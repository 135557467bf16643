// header_util.h: the building blocks of the HTTP/1.1 codec: character classes (RFC 9110 §5.6),
// case-insensitive comparison, the header list a parsed head holds, field-line parsing shared by
// request heads, response heads and chunked trailers, list-valued fields and hop-by-hop fields.
//
// Thread-safety: pure functions and value types. Ownership: HeaderField and HeaderList hold
// views into a buffer their user owns; they never copy field bytes.
#ifndef PORTICO_GATEWAY_HTTP_HEADER_UTIL_H_
#define PORTICO_GATEWAY_HTTP_HEADER_UTIL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace portico::gateway::http {

namespace internal {

constexpr std::array<bool, 256> MakeTokenTable() {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) table[static_cast<unsigned char>(c)] = true;
  return table;
}

// field-vchar / obs-text / SP / HTAB: what a field value may hold between its ends.
constexpr std::array<bool, 256> MakeFieldValueTable() {
  std::array<bool, 256> table{};
  table['\t'] = true;
  for (int c = 0x20; c <= 0x7e; ++c) table[c] = true;
  for (int c = 0x80; c <= 0xff; ++c) table[c] = true;
  return table;
}

constexpr std::array<char, 256> MakeLowerTable() {
  std::array<char, 256> table{};
  for (int c = 0; c < 256; ++c) {
    table[c] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
  }
  return table;
}

inline constexpr std::array<bool, 256> kTokenTable = MakeTokenTable();
inline constexpr std::array<bool, 256> kFieldValueTable = MakeFieldValueTable();
inline constexpr std::array<char, 256> kLowerTable = MakeLowerTable();

}  // namespace internal

// IsTokenChar: tchar of RFC 9110 §5.6.2 (method, field names, transfer codings).
inline bool IsTokenChar(char c) { return internal::kTokenTable[static_cast<unsigned char>(c)]; }

// IsFieldValueChar: HTAB, SP, VCHAR or obs-text; every other byte (CTLs, DEL, CR, LF, NUL) is
// forbidden inside a field value.
inline bool IsFieldValueChar(char c) {
  return internal::kFieldValueTable[static_cast<unsigned char>(c)];
}

// IsToken: non-empty and only tchar.
bool IsToken(std::string_view text);

inline char AsciiLower(char c) { return internal::kLowerTable[static_cast<unsigned char>(c)]; }

// HexDigitValue returns the value of hex digit `c` (either case), or -1.
inline int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// EqualsIgnoreCase compares ASCII case-insensitively (field names, tokens).
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// TokenEquals compares validated text (a token or field-value bytes, so no CTL) with a
// lower-case literal of letters, digits and '-' (bytes that all have bit 0x20 set),
// case-insensitively, by ORing 0x20 into 4- or 8-byte words: the hot-path check for well-known
// field names and list elements.
inline bool TokenEquals(std::string_view text, std::string_view lower) {
  const size_t n = text.size();
  if (n != lower.size()) return false;
  const char* a = text.data();
  const char* b = lower.data();
  if (n >= 8) {
    constexpr uint64_t kBit = 0x2020202020202020;
    uint64_t x, y;
    for (size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      if ((x | kBit) != y) return false;
    }
    std::memcpy(&x, a + n - 8, 8);
    std::memcpy(&y, b + n - 8, 8);
    return (x | kBit) == y;
  }
  if (n >= 4) {
    constexpr uint32_t kBit = 0x20202020;
    uint32_t x1, y1, x2, y2;
    std::memcpy(&x1, a, 4);
    std::memcpy(&y1, b, 4);
    std::memcpy(&x2, a + n - 4, 4);
    std::memcpy(&y2, b + n - 4, 4);
    return ((x1 | kBit) == y1) & ((x2 | kBit) == y2);
  }
  for (size_t i = 0; i < n; ++i) {
    if ((a[i] | 0x20) != b[i]) return false;
  }
  return true;
}

// HeaderField is one field line: name and value (OWS trimmed) as views into the message buffer.
struct HeaderField {
  std::string_view name;
  std::string_view value;
};

// HeaderList is the ordered field list of a head. The first kInlineCapacity fields live inside
// the object; beyond that they spill to a vector whose capacity clear() keeps, so a list reused
// per connection does not allocate per header. Duplicates are kept in order.
class HeaderList {
 public:
  static constexpr size_t kInlineCapacity = 32;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const HeaderField* data() const { return on_heap_ ? heap_.data() : inline_.data(); }
  const HeaderField* begin() const { return data(); }
  const HeaderField* end() const { return data() + size_; }
  const HeaderField& operator[](size_t i) const { return data()[i]; }
  std::span<const HeaderField> span() const { return {data(), size_}; }

  void push_back(HeaderField field) {
    if (!on_heap_) {
      if (size_ < kInlineCapacity) {
        inline_[size_++] = field;
        return;
      }
      heap_.assign(inline_.begin(), inline_.begin() + size_);
      on_heap_ = true;
    }
    heap_.push_back(field);
    ++size_;
  }
  void clear() {
    size_ = 0;
    on_heap_ = false;
    heap_.clear();
  }

  // Find returns the first field named `name` (case-insensitive), or nullptr.
  const HeaderField* Find(std::string_view name) const;
  // Count returns how many fields are named `name`.
  size_t Count(std::string_view name) const;

 private:
  std::array<HeaderField, kInlineCapacity> inline_;
  std::vector<HeaderField> heap_;
  size_t size_ = 0;
  bool on_heap_ = false;
};

// ParseFieldLine parses one field line `line` (without its CRLF) strictly: a name of tchar, a
// colon right after it, OWS, a value of field-value chars, OWS. Returns an empty reason on
// success (with `field` filled, value trimmed), else the reason: "obs_fold" (line starts with
// SP/HTAB), "whitespace_before_colon", "missing_colon", "invalid_header_name", "bare_cr",
// "invalid_header_value" (NUL, other CTLs, DEL).
std::string_view ParseFieldLine(std::string_view line, HeaderField* field);

namespace internal {
// The same, allowed to load (not judge) bytes up to readable_end >= the line's end: the parsers
// pass their buffer's end so value scans run in whole 16-byte blocks.
std::string_view ParseFieldLine(std::string_view line, const char* readable_end,
                                HeaderField* field);

// TryFieldLine is the parsers' one-pass fast path: when [p, end) starts with a complete field
// line that ParseFieldLine accepts, followed by CRLF, it fills `field` and returns the byte
// after the LF; otherwise (incomplete, malformed) nullptr, and the caller takes the slow path
// (find the LF, then ParseFieldLine) that says precisely what is wrong.
const char* TryFieldLine(const char* p, const char* end, HeaderField* field);
}  // namespace internal

// ParseContentLength accepts 1*DIGIT up to kMaxBodyLength (no sign, no spaces, no list).
bool ParseContentLength(std::string_view value, uint64_t* length);

// ForEachListElement calls fn(element) for each element of a comma-separated field value
// (RFC 9110 §5.6.1), OWS trimmed, empty elements skipped. fn returns false to stop early;
// ForEachListElement returns false when it was stopped.
template <typename Fn>
bool ForEachListElement(std::string_view value, Fn&& fn) {
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t comma = value.find(',', pos);
    if (comma == std::string_view::npos) comma = value.size();
    size_t begin = pos;
    size_t end = comma;
    while (begin < end && (value[begin] == ' ' || value[begin] == '\t')) ++begin;
    while (end > begin && (value[end - 1] == ' ' || value[end - 1] == '\t')) --end;
    if (end > begin && !fn(value.substr(begin, end - begin))) return false;
    pos = comma + 1;
  }
  return true;
}

// ListContainsToken: whether the list value holds `token` (case-insensitive), e.g. "close" in
// Connection.
bool ListContainsToken(std::string_view value, std::string_view token);

// IsHopByHopHeader: Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Transfer-Encoding,
// Upgrade (RFC 9110 §7.6.1) — never forwarded.
bool IsHopByHopHeader(std::string_view name);

// HopByHopFilter decides which fields of a head a proxy drops: the fixed hop-by-hop names plus
// any field named in a Connection field of the same head. Constructing it scans Connection once;
// it keeps a view of `headers`, which must outlive it.
class HopByHopFilter {
 public:
  explicit HopByHopFilter(std::span<const HeaderField> headers);
  // Drops returns true for a field the proxy must not forward.
  bool Drops(std::string_view name) const;

 private:
  std::span<const HeaderField> headers_;
  // True when some Connection element names a field other than the fixed hop-by-hop ones, so
  // Drops must look at the Connection lists (rare: "close" and "keep-alive" are the usual).
  bool has_extra_names_ = false;
};

}  // namespace portico::gateway::http

#endif  // PORTICO_GATEWAY_HTTP_HEADER_UTIL_H_
