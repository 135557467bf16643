#include "core/common/time_format.h"

#include <chrono>
#include <ctime>

namespace portico::core {

std::string FormatRfc3339(int64_t unix_ms) {
  int64_t seconds = unix_ms / 1000;
  if (unix_ms < 0 && unix_ms % 1000 != 0) --seconds;  // floor, not truncation
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  size_t n = std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buffer, n);
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace portico::core
