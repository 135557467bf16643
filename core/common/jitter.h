// jitter.h: the randomized delays of Portico's retry loops (etcd reconnects, the leader
// election, ConfigSync failover), so that many peers that failed together do not retry together.
//
// Thread-safety: any thread (each thread has its own random engine).
#ifndef PORTICO_CORE_COMMON_JITTER_H_
#define PORTICO_CORE_COMMON_JITTER_H_

#include <chrono>

namespace portico::core {

// Jittered is `base` +-20%, at least 1 ms.
std::chrono::milliseconds Jittered(std::chrono::milliseconds base);
// FullJitter is uniform in [0, cap] (AWS's "full jitter").
std::chrono::milliseconds FullJitter(std::chrono::milliseconds cap);

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_JITTER_H_
