// access_log.h: the data plane's access log: one JSON line per request,
//
//   {"time":"2024-05-01T12:00:00.123Z","client":"10.0.0.1","method":"GET","path":"/a?b=1",
//    "host":"example.com","status":200,"bytes":1234,"duration_ms":0.412,
//    "upstream":"10.0.0.7:3000","route":"httproute/infra/web","rule":"0.0"}
//
// ("reason" is added for requests the gateway answered itself with an error: "no_route",
// "bad_upstream_response", the codec's reason, ...; over TLS "tls" (the version) and "sni", and
// with a client certificate "client_cert" (SHA-256 fingerprint) and "client_subject"). `path` is
// the request target as received (path and query), `bytes` what was sent to the client (head and
// body), `time` the moment the request head was complete.
//
// AccessLogSink is the destination shared by every worker (a file opened O_APPEND, or
// stderr/stdout); AccessLogBuffer is one worker's buffer in front of it, written with one
// write(2) when it holds kFlushBytes or when its oldest line is kFlushIntervalMs old, so logging
// costs no syscall per request. Whole lines are written at once (on a pipe, in pieces of at most
// PIPE_BUF, cut at line ends), so lines of several workers never interleave.
//
// Thread-safety: AccessLogSink::Write is safe from any thread (one write(2) per call); an
// AccessLogBuffer belongs to one worker. Ownership: a buffer shares its sink.
#ifndef PORTICO_GATEWAY_SERVER_ACCESS_LOG_H_
#define PORTICO_GATEWAY_SERVER_ACCESS_LOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::gateway::server {

class AccessLogSink {
 public:
  // Open reads the `access_log` setting: "off" (nullptr, no logging), "stderr", "stdout", or a
  // file path (created 0644 if absent, appended to).
  static StatusOr<std::shared_ptr<AccessLogSink>> Open(const std::string& setting);
  AccessLogSink(const AccessLogSink&) = delete;
  AccessLogSink& operator=(const AccessLogSink&) = delete;
  ~AccessLogSink();

  // Write writes whole lines (`text` ends with '\n').
  void Write(std::string_view text);

 private:
  AccessLogSink(int fd, bool owned, bool pipe) : fd_(fd), owned_(owned), pipe_(pipe) {}
  int fd_;
  bool owned_;
  bool pipe_;  // not a regular file: keep each write within PIPE_BUF
};

// AccessRecord is what one line says.
struct AccessRecord {
  int64_t time_unix_us = 0;
  std::string_view client;
  std::string_view method;
  std::string_view path;
  std::string_view host;
  int status = 0;
  uint64_t bytes = 0;
  uint64_t duration_us = 0;
  std::string_view upstream;  // "ip:port", empty when none was used
  std::string_view route;     // the matched route's key, empty when none
  std::string_view rule;      // the matched rule entry's id
  std::string_view reason;    // empty unless the gateway answered an error itself
  // TLS connections: the version, the SNI, and the client certificate's fingerprint and
  // subject (empty without one).
  std::string_view tls_version;
  std::string_view sni;
  std::string_view client_cert_sha256;
  std::string_view client_cert_subject;
};

class AccessLogBuffer {
 public:
  static constexpr size_t kFlushBytes = 32 * 1024;
  static constexpr uint64_t kFlushIntervalMs = 100;

  explicit AccessLogBuffer(std::shared_ptr<AccessLogSink> sink);
  ~AccessLogBuffer() { Flush(); }

  // Append formats one line; it writes the buffer out when it reaches kFlushBytes.
  void Append(const AccessRecord& record, uint64_t now_ms);
  // MaybeFlush writes the buffer out when its oldest line is kFlushIntervalMs old.
  void MaybeFlush(uint64_t now_ms) {
    if (size_ != 0 && now_ms >= first_line_ms_ + kFlushIntervalMs) Flush();
  }
  void Flush();
  // FlushDeadlineMs: when MaybeFlush will write (UINT64_MAX when empty).
  uint64_t FlushDeadlineMs() const;
  std::string_view pending() const { return {data_.get(), size_}; }

 private:
  char* WriteTime(int64_t unix_us, char* p);

  std::shared_ptr<AccessLogSink> sink_;
  // The pending lines: data_[0, size_). A line is written in place after checking the room for
  // its longest form, so formatting checks no capacity per piece.
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
  uint64_t first_line_ms_ = 0;
  int64_t cached_second_ = -1;  // the second whose "YYYY-MM-DDTHH:MM:SS" is cached
  char cached_time_[20] = {};
};

// AppendJsonString appends `text` as a JSON string literal (quotes included).
void AppendJsonString(std::string_view text, std::string* out);

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_ACCESS_LOG_H_
