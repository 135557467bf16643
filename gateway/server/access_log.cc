// access_log.cc: see access_log.h.
#include "gateway/server/access_log.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace portico::gateway::server {

StatusOr<std::shared_ptr<AccessLogSink>> AccessLogSink::Open(const std::string& setting) {
  if (setting == "off") return std::shared_ptr<AccessLogSink>();
  int fd;
  bool owned = false;
  if (setting == "stderr") {
    fd = STDERR_FILENO;
  } else if (setting == "stdout") {
    fd = STDOUT_FILENO;
  } else if (setting.empty()) {
    return InvalidArgumentError(
        "access_log: empty (use \"off\", \"stderr\", \"stdout\" or a path)");
  } else {
    fd = open(setting.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      return InvalidArgumentError("access_log: cannot open " + setting + ": " +
                                  std::strerror(errno));
    }
    owned = true;
  }
  struct stat st {};
  bool pipe = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode);
  return std::shared_ptr<AccessLogSink>(new AccessLogSink(fd, owned, pipe));
}

AccessLogSink::~AccessLogSink() {
  if (owned_) close(fd_);
}

void AccessLogSink::Write(std::string_view text) {
  while (!text.empty()) {
    size_t n = text.size();
    if (pipe_ && n > PIPE_BUF) {
      // The longest prefix of whole lines within PIPE_BUF (a longer line goes alone).
      size_t cut = text.rfind('\n', PIPE_BUF - 1);
      n = cut == std::string_view::npos ? text.find('\n') + 1 : cut + 1;
      if (n == 0) n = text.size();
    }
    ssize_t written = write(fd_, text.data(), n);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;  // the log is best effort: never block or fail a request over it
    }
    text.remove_prefix(static_cast<size_t>(written));
  }
}

AccessLogBuffer::AccessLogBuffer(std::shared_ptr<AccessLogSink> sink) : sink_(std::move(sink)) {
  buffer_.reserve(kFlushBytes + 4096);
}

uint64_t AccessLogBuffer::FlushDeadlineMs() const {
  return buffer_.empty() ? UINT64_MAX : first_line_ms_ + kFlushIntervalMs;
}

void AccessLogBuffer::Flush() {
  if (buffer_.empty()) return;
  if (sink_ != nullptr) sink_->Write(buffer_);
  buffer_.clear();
}

namespace {

void AppendDigits(uint64_t value, int width, std::string* out) {
  char digits[24];
  char* end = digits + sizeof(digits);
  char* p = end;
  do {
    *--p = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (end - p < width) *--p = '0';
  out->append(p, static_cast<size_t>(end - p));
}

// HasByteToEscape reports whether any of the 8 bytes in `v` is a control character (< 0x20),
// '"', '\\' or DEL (bytes >= 0x80, UTF-8, pass as they are).
inline bool HasByteToEscape(uint64_t v) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  auto has_zero = [](uint64_t x) { return ((x - kOnes) & ~x & kHighs) != 0; };
  const bool has_control = ((v - kOnes * 0x20) & ~v & kHighs) != 0;
  return has_control || has_zero(v ^ (kOnes * '"')) || has_zero(v ^ (kOnes * '\\')) ||
         has_zero(v ^ (kOnes * 0x7f));
}

void AppendNumber(uint64_t value, std::string* out) { AppendDigits(value, 1, out); }

void Put2(char* p, int value) {
  p[0] = static_cast<char>('0' + value / 10);
  p[1] = static_cast<char>('0' + value % 10);
}

}  // namespace

void AccessLogBuffer::AppendTime(int64_t unix_us) {
  int64_t second = unix_us / 1000000;
  if (second != cached_second_) {
    time_t t = static_cast<time_t>(second);
    struct tm tm {};
    gmtime_r(&t, &tm);
    int year = tm.tm_year + 1900;
    char* p = cached_time_;
    Put2(p, year / 100);
    Put2(p + 2, year % 100);
    p[4] = '-';
    Put2(p + 5, tm.tm_mon + 1);
    p[7] = '-';
    Put2(p + 8, tm.tm_mday);
    p[10] = 'T';
    Put2(p + 11, tm.tm_hour);
    p[13] = ':';
    Put2(p + 14, tm.tm_min);
    p[16] = ':';
    Put2(p + 17, tm.tm_sec);
    cached_second_ = second;
  }
  buffer_.append(cached_time_, 19);
  buffer_.push_back('.');
  AppendDigits(static_cast<uint64_t>(unix_us % 1000000) / 1000, 3, &buffer_);
  buffer_.push_back('Z');
}

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  size_t start = 0;
  size_t i = 0;
  // Eight bytes at a time while none needs escaping (nearly always the whole text).
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, sizeof(word));
    if (HasByteToEscape(word)) break;
  }
  for (; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) continue;
    out->append(text.data() + start, i - start);
    start = i + 1;
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out->append(escaped, 6);
    }
  }
  out->append(text.data() + start, text.size() - start);
  out->push_back('"');
}

void AccessLogBuffer::Append(const AccessRecord& r, uint64_t now_ms) {
  if (buffer_.empty()) first_line_ms_ = now_ms;
  std::string& b = buffer_;
  b.append("{\"time\":\"");
  AppendTime(r.time_unix_us);
  b.append("\",\"client\":");
  AppendJsonString(r.client, &b);
  b.append(",\"method\":");
  AppendJsonString(r.method, &b);
  b.append(",\"path\":");
  AppendJsonString(r.path, &b);
  b.append(",\"host\":");
  AppendJsonString(r.host, &b);
  b.append(",\"status\":");
  AppendNumber(static_cast<uint64_t>(r.status), &b);
  b.append(",\"bytes\":");
  AppendNumber(r.bytes, &b);
  b.append(",\"duration_ms\":");
  AppendNumber(r.duration_us / 1000, &b);
  b.push_back('.');
  AppendDigits(r.duration_us % 1000, 3, &b);
  b.append(",\"upstream\":");
  AppendJsonString(r.upstream, &b);
  b.append(",\"route\":");
  AppendJsonString(r.route, &b);
  b.append(",\"rule\":");
  AppendJsonString(r.rule, &b);
  if (!r.reason.empty()) {
    b.append(",\"reason\":");
    AppendJsonString(r.reason, &b);
  }
  b.append("}\n");
  if (b.size() >= kFlushBytes) Flush();
}

}  // namespace portico::gateway::server
