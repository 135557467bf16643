// mirrors.h: Mirrors, one worker's mirrored requests in flight (the Gateway API RequestMirror
// filter). A mirrored request is a copy of the request as forwarded (head after the route's
// filters, and its whole body), sent to an endpoint of the mirror's backend. Its response is
// read (framing parsed, body thrown away): the client never waits for it, and its failure
// (refused, reset, timed out) only counts in the counters.
//
// Connections are kept alive: after a complete response that allows it, the connection is
// parked (per worker, per address, at most kMaxIdlePerAddress, for at most kIdleMs) and the next
// copy to that address takes it, after checking it is still open. A copy whose reused
// connection closes before any response byte is sent again once on a fresh connection.
//
// Each copy holds at most kMaxBytes (the caller gives up larger bodies) and a worker keeps at
// most kMaxInFlight copies in flight (more are dropped and counted), so a slow mirror cannot
// eat the worker's memory. A copy ends with its response, on an error, or after `timeout_ms`
// in all.
//
// Thread-safety: none; owned and driven by one Worker. Ownership: owns its copies and its idle
// connections.
#ifndef PORTICO_GATEWAY_SERVER_MIRRORS_H_
#define PORTICO_GATEWAY_SERVER_MIRRORS_H_

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gateway/server/event_loop.h"

namespace portico::gateway::server {

class Mirrors {
 public:
  static constexpr size_t kMaxBytes = 1 << 20;
  static constexpr size_t kMaxInFlight = 1024;
  static constexpr size_t kMaxIdlePerAddress = 32;
  static constexpr uint64_t kIdleMs = 30'000;

  Mirrors(EventLoop* loop, uint64_t timeout_ms);
  Mirrors(const Mirrors&) = delete;
  Mirrors& operator=(const Mirrors&) = delete;
  ~Mirrors();

  // Send starts sending `request` to `address`. False (and counted as failed) when too many
  // copies are in flight or the connect fails at once.
  bool Send(const sockaddr_storage& address, socklen_t length, std::string request);
  // CountDropped counts a copy given up before Send (body too large, backend gone).
  void CountDropped() { ++failed_; }
  // Roll says whether a request is mirrored at `percent` (0-100, fractional allowed).
  bool Roll(double percent);

  size_t in_flight() const { return copies_.size(); }
  uint64_t sent() const { return sent_; }          // copies written in full
  uint64_t failed() const { return failed_; }      // dropped, refused, reset or timed out unsent
  uint64_t connects() const { return connects_; }  // connections opened

 private:
  class Copy;
  struct Idle {
    int fd;
    uint64_t since_ms;
  };
  // Connect starts a non-blocking connect; -1 when it fails at once.
  int Connect(const sockaddr_storage& address, socklen_t length);
  // TakeIdle returns a parked connection to `key` that is still open, or -1.
  int TakeIdle(const std::string& key);
  void Park(const std::string& key, int fd);
  // Finish ends `copy`; `reusable`: its connection is parked instead of closed.
  void Finish(Copy* copy, bool reusable);

  EventLoop* loop_;
  uint64_t timeout_ms_;
  uint64_t rng_;
  uint64_t sent_ = 0;
  uint64_t failed_ = 0;
  uint64_t connects_ = 0;
  std::unordered_map<Copy*, std::unique_ptr<Copy>> copies_;
  std::unordered_map<std::string, std::vector<Idle>> idle_;  // key: the sockaddr's bytes
};

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_MIRRORS_H_
