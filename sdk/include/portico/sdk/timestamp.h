// timestamp.h: ParseTimestampUnixMs, the RFC 3339 times of Kubernetes metadata
// (metadata.creationTimestamp: "2020-09-08T01:02:03Z"; fractional seconds and numeric offsets
// allowed) as Unix milliseconds, for kinds that order objects by age (Gateway API precedence,
// policy conflicts).
//
// Header-only, std only. Thread-safety: pure functions.
#ifndef PORTICO_SDK_TIMESTAMP_H_
#define PORTICO_SDK_TIMESTAMP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::sdk {

namespace detail {

// Civil date to days since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
inline int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace detail

// ParseTimestampUnixMs parses an RFC 3339 time into Unix milliseconds (fractions below a
// millisecond are dropped); InvalidArgument quoting the text otherwise.
inline StatusOr<int64_t> ParseTimestampUnixMs(std::string_view text) {
  auto bad = [&] {
    return InvalidArgumentError("\"" + std::string(text) + "\" is not an RFC 3339 time");
  };
  // Digits reads `n` decimal digits at `pos`.
  auto digits = [&](size_t pos, size_t n) -> std::optional<int64_t> {
    if (pos + n > text.size()) return std::nullopt;
    int64_t v = 0;
    for (size_t k = pos; k < pos + n; ++k) {
      if (text[k] < '0' || text[k] > '9') return std::nullopt;
      v = v * 10 + (text[k] - '0');
    }
    return v;
  };
  auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  auto hour = digits(11, 2), minute = digits(14, 2), second = digits(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || text[13] != ':' ||
      text[16] != ':') {
    return bad();
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return bad();
  }
  size_t pos = 19;
  int64_t millis = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    size_t start = pos;
    int64_t scale = 100;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      millis += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad();
  }
  int64_t offset_s = 0;
  std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == "z") {
    offset_s = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    auto oh = digits(pos + 1, 2), om = digits(pos + 4, 2);
    if (!oh || !om || *oh > 23 || *om > 59) return bad();
    offset_s = (zone[0] == '-' ? -1 : 1) * (*oh * 3600 + *om * 60);
  } else {
    return bad();
  }
  int64_t seconds = detail::DaysFromCivil(*year, *month, *day) * 86400 + *hour * 3600 +
                    *minute * 60 + *second - offset_s;
  return seconds * 1000 + millis;
}

// kUnknownCreatedUnixMs stands for an object without metadata.creationTimestamp (the controller
// always stamps one): it ranks as the youngest when objects are ordered by age.
inline constexpr int64_t kUnknownCreatedUnixMs = 99999999999999;

// CreatedUnixMs is metadata.creationTimestamp (`stamp`, "" when absent) as the key that orders
// objects by age (policy conflicts: the oldest wins): kUnknownCreatedUnixMs when absent, never
// below 0; InvalidArgument naming the field when it is not an RFC 3339 time.
inline StatusOr<int64_t> CreatedUnixMs(std::string_view stamp) {
  if (stamp.empty()) return kUnknownCreatedUnixMs;
  StatusOr<int64_t> ms = ParseTimestampUnixMs(stamp);
  if (!ms.ok()) return InvalidArgumentError("metadata.creationTimestamp: " + ms.status().message());
  return *ms < 0 ? 0 : *ms;
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_TIMESTAMP_H_
