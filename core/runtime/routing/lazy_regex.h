// lazy_regex.h: LazyRegex, an RE2 regular expression checked when the route is compiled and
// built for matching on its first use. An RE2 object holds about 2 KB (its parsed tree and
// program); a table of 10,000 regex routes of which a few ever see traffic then holds the
// patterns only (routing_bench prints both figures). The pattern itself is not stored here: the
// owner (a rule's path value, a header match's value) passes it to every call.
//
// Thread-safety: Matches may run on any number of threads at once. The first callers may each
// build the RE2; one installs it (compare-exchange) and the others discard theirs, so the only
// allocation on the request path is that first build. Ownership: owns the RE2 it installed.
#ifndef PORTICO_CORE_RUNTIME_ROUTING_LAZY_REGEX_H_
#define PORTICO_CORE_RUNTIME_ROUTING_LAZY_REGEX_H_

#include <atomic>
#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace re2 {
class RE2;
}

namespace portico::core::routing::internal {

class LazyRegex {
 public:
  LazyRegex() = default;
  // Moves only while the owner is being built (one thread, no concurrent Matches).
  LazyRegex(LazyRegex&& other) noexcept;
  LazyRegex& operator=(LazyRegex&& other) noexcept;
  ~LazyRegex();

  // Check compiles `pattern` once and reports RE2's error, naming `field`; nothing is kept.
  static Status Check(const std::string& pattern, const std::string& field);

  // Matches reports whether `pattern` (the one Check accepted) matches all of `text`.
  bool Matches(std::string_view text, const std::string& pattern) const;
  // built says whether the RE2 exists yet (tests).
  bool built() const { return re_.load(std::memory_order_acquire) != nullptr; }

 private:
  const re2::RE2* Build(const std::string& pattern) const;

  mutable std::atomic<const re2::RE2*> re_{nullptr};
};

}  // namespace portico::core::routing::internal

#endif  // PORTICO_CORE_RUNTIME_ROUTING_LAZY_REGEX_H_
