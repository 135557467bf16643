// lazy_regex.cc: see lazy_regex.h.
#include "core/runtime/routing/lazy_regex.h"

#include <re2/re2.h>

#include <memory>

namespace portico::core::routing::internal {
namespace {

RE2::Options MatchOptions() {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_never_capture(true);  // matching only: smaller programs
  return options;
}

}  // namespace

LazyRegex::LazyRegex(LazyRegex&& other) noexcept
    : re_(other.re_.exchange(nullptr, std::memory_order_acq_rel)) {}

LazyRegex& LazyRegex::operator=(LazyRegex&& other) noexcept {
  if (this != &other) {
    delete re_.exchange(other.re_.exchange(nullptr, std::memory_order_acq_rel),
                        std::memory_order_acq_rel);
  }
  return *this;
}

LazyRegex::~LazyRegex() { delete re_.load(std::memory_order_acquire); }

Status LazyRegex::Check(const std::string& pattern, const std::string& field) {
  RE2 re(pattern, MatchOptions());
  if (re.ok()) return OkStatus();
  return InvalidArgumentError(field + ": regular expression \"" + pattern +
                              "\" does not compile: " + re.error());
}

const re2::RE2* LazyRegex::Build(const std::string& pattern) const {
  auto built = std::make_unique<const RE2>(pattern, MatchOptions());
  const RE2* expected = nullptr;
  if (re_.compare_exchange_strong(expected, built.get(), std::memory_order_acq_rel)) {
    return built.release();
  }
  return expected;  // another thread installed one first; ours is discarded
}

bool LazyRegex::Matches(std::string_view text, const std::string& pattern) const {
  const RE2* re = re_.load(std::memory_order_acquire);
  if (re == nullptr) re = Build(pattern);
  // Check accepted the pattern with the same options, so the RE2 is ok().
  return re->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::ANCHOR_BOTH,
                   nullptr, 0);
}

}  // namespace portico::core::routing::internal
