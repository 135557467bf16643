#include "core/common/jitter.h"

#include <algorithm>
#include <cstdint>
#include <random>

namespace portico::core {
namespace {

std::mt19937_64& Engine() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

}  // namespace

std::chrono::milliseconds Jittered(std::chrono::milliseconds base) {
  std::uniform_real_distribution<double> factor(0.8, 1.2);
  return std::chrono::milliseconds(static_cast<int64_t>(base.count() * factor(Engine())) + 1);
}

std::chrono::milliseconds FullJitter(std::chrono::milliseconds cap) {
  return std::chrono::milliseconds(
      std::uniform_int_distribution<int64_t>(0, std::max<int64_t>(cap.count(), 0))(Engine()));
}

}  // namespace portico::core
