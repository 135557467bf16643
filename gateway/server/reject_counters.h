// reject_counters.h: RejectCounters, one worker's counts of the requests the gateway answered
// itself with an error (every local answer of status >= 400: a malformed request's 400, 414,
// 431, 501, 505, a 404 without route, a 408 header timeout, an upstream's bad response 502, ...)
// or ended after its response began, by status and reason (the access log's "reason"). The
// admin API shows their sum over the workers (/api/v1/dataplane "rejected", /metrics
// portico_gateway_rejected_total{code,reason}).
//
// Lock-free: a fixed table of slots, appended to by the owning worker only (a slot is filled,
// then published by a release store of the used count), read by any thread (acquire load, then
// relaxed loads of the counts). Reasons are copied (at most kMaxReason bytes), so a filter's
// reason need not outlive its request. Once kSlots - 1 distinct (status, reason) pairs were
// seen, further new pairs count under (0, "other").
//
// Thread-safety: Count on the owning worker's thread only; AddTo from any thread.
// Ownership: a value owned by the worker's WorkerCounters.
#ifndef PORTICO_GATEWAY_SERVER_REJECT_COUNTERS_H_
#define PORTICO_GATEWAY_SERVER_REJECT_COUNTERS_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace portico::gateway::server {

// (status, reason) -> count, summed over workers (DataPlaneStats::rejected).
using RejectTotals = std::map<std::pair<int, std::string>, uint64_t>;

class RejectCounters {
 public:
  static constexpr size_t kSlots = 128;
  static constexpr size_t kMaxReason = 48;

  // Count adds one to (status, reason). Worker thread only.
  void Count(int status, std::string_view reason);
  // AddTo adds every published count to *totals. Any thread.
  void AddTo(RejectTotals* totals) const;

 private:
  struct Slot {
    std::atomic<uint64_t> count{0};
    int status = 0;
    uint8_t length = 0;
    char reason[kMaxReason] = {};
  };
  Slot* Find(int status, std::string_view reason);

  std::array<Slot, kSlots> slots_;
  std::atomic<size_t> used_{0};
};

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_REJECT_COUNTERS_H_
