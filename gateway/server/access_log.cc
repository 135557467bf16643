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

namespace {

// kLongestNumber: the digits of a uint64_t.
constexpr size_t kLongestNumber = 20;

// WriteDigits writes `value` in decimal, zero-padded to `width`; returns the end.
char* WriteDigits(uint64_t value, int width, char* p) {
  char digits[24];
  char* end = digits + sizeof(digits);
  char* d = end;
  do {
    *--d = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (end - d < width) *--d = '0';
  const size_t n = static_cast<size_t>(end - d);
  std::memcpy(p, d, n);
  return p + n;
}

char* WriteLiteral(std::string_view text, char* p) {
  std::memcpy(p, text.data(), text.size());
  return p + text.size();
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

// JsonStringBound: the most bytes WriteJsonString writes for `text`.
constexpr size_t JsonStringBound(std::string_view text) { return 6 * text.size() + 2; }

// WriteJsonString writes `text` as a JSON string literal (quotes included) at `p`, which has
// room for JsonStringBound(text) bytes; returns the end.
char* WriteJsonString(std::string_view text, char* p) {
  *p++ = '"';
  size_t i = 0;
  // Eight bytes at a time while none needs escaping (nearly always the whole text).
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, sizeof(word));
    if (HasByteToEscape(word)) break;
    std::memcpy(p, &word, sizeof(word));
    p += sizeof(word);
  }
  for (; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {
      *p++ = static_cast<char>(c);
    } else if (c == '"' || c == '\\') {
      *p++ = '\\';
      *p++ = static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      const char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      std::memcpy(p, escaped, sizeof(escaped));
      p += sizeof(escaped);
    }
  }
  *p++ = '"';
  return p;
}

// WriteStringField writes `name` (the JSON punctuation and key) and `value` as a JSON string.
char* WriteStringField(std::string_view name, std::string_view value, char* p) {
  return WriteJsonString(value, WriteLiteral(name, p));
}

void Put2(char* p, int value) {
  p[0] = static_cast<char>('0' + value / 10);
  p[1] = static_cast<char>('0' + value % 10);
}

}  // namespace

AccessLogBuffer::AccessLogBuffer(std::shared_ptr<AccessLogSink> sink)
    : sink_(std::move(sink)), data_(new char[kFlushBytes + 4096]), capacity_(kFlushBytes + 4096) {}

uint64_t AccessLogBuffer::FlushDeadlineMs() const {
  return size_ == 0 ? UINT64_MAX : first_line_ms_ + kFlushIntervalMs;
}

void AccessLogBuffer::Flush() {
  if (size_ == 0) return;
  if (sink_ != nullptr) sink_->Write(pending());
  size_ = 0;
}

char* AccessLogBuffer::WriteTime(int64_t unix_us, char* p) {
  int64_t second = unix_us / 1000000;
  if (second != cached_second_) {
    time_t t = static_cast<time_t>(second);
    struct tm tm {};
    gmtime_r(&t, &tm);
    int year = tm.tm_year + 1900;
    char* c = cached_time_;
    Put2(c, year / 100);
    Put2(c + 2, year % 100);
    c[4] = '-';
    Put2(c + 5, tm.tm_mon + 1);
    c[7] = '-';
    Put2(c + 8, tm.tm_mday);
    c[10] = 'T';
    Put2(c + 11, tm.tm_hour);
    c[13] = ':';
    Put2(c + 14, tm.tm_min);
    c[16] = ':';
    Put2(c + 17, tm.tm_sec);
    cached_second_ = second;
  }
  std::memcpy(p, cached_time_, 19);
  p[19] = '.';
  p = WriteDigits(static_cast<uint64_t>(unix_us % 1000000) / 1000, 3, p + 20);
  *p++ = 'Z';
  return p;
}

void AppendJsonString(std::string_view text, std::string* out) {
  const size_t old = out->size();
  out->resize(old + JsonStringBound(text));
  char* end = WriteJsonString(text, out->data() + old);
  out->resize(static_cast<size_t>(end - out->data()));
}

void AccessLogBuffer::Append(const AccessRecord& r, uint64_t now_ms) {
  // The longest the line can be: the field names and punctuation (under 260 bytes), the time
  // (24), four numbers, and every string escaped at worst.
  const size_t bound =
      260 + 24 + 4 * kLongestNumber + JsonStringBound(r.client) + JsonStringBound(r.method) +
      JsonStringBound(r.path) + JsonStringBound(r.host) + JsonStringBound(r.upstream) +
      JsonStringBound(r.route) + JsonStringBound(r.rule) + JsonStringBound(r.reason) +
      JsonStringBound(r.tls_version) + JsonStringBound(r.sni) +
      JsonStringBound(r.client_cert_sha256) + JsonStringBound(r.client_cert_subject);
  if (size_ + bound > capacity_) {
    Flush();
    if (bound > capacity_) {  // a line longer than the whole buffer (a huge target)
      data_.reset(new char[bound]);
      capacity_ = bound;
    }
  }
  if (size_ == 0) first_line_ms_ = now_ms;
  char* p = data_.get() + size_;
  p = WriteLiteral("{\"time\":\"", p);
  p = WriteTime(r.time_unix_us, p);
  p = WriteLiteral("\"", p);
  p = WriteStringField(",\"client\":", r.client, p);
  p = WriteStringField(",\"method\":", r.method, p);
  p = WriteStringField(",\"path\":", r.path, p);
  p = WriteStringField(",\"host\":", r.host, p);
  p = WriteLiteral(",\"status\":", p);
  p = WriteDigits(static_cast<uint64_t>(r.status), 1, p);
  p = WriteLiteral(",\"bytes\":", p);
  p = WriteDigits(r.bytes, 1, p);
  p = WriteLiteral(",\"duration_ms\":", p);
  p = WriteDigits(r.duration_us / 1000, 1, p);
  *p++ = '.';
  p = WriteDigits(r.duration_us % 1000, 3, p);
  p = WriteStringField(",\"upstream\":", r.upstream, p);
  p = WriteStringField(",\"route\":", r.route, p);
  p = WriteStringField(",\"rule\":", r.rule, p);
  if (!r.reason.empty()) p = WriteStringField(",\"reason\":", r.reason, p);
  if (!r.tls_version.empty()) {
    p = WriteStringField(",\"tls\":", r.tls_version, p);
    p = WriteStringField(",\"sni\":", r.sni, p);
  }
  if (!r.client_cert_sha256.empty()) {
    p = WriteStringField(",\"client_cert\":", r.client_cert_sha256, p);
    p = WriteStringField(",\"client_subject\":", r.client_cert_subject, p);
  }
  p = WriteLiteral("}\n", p);
  size_ = static_cast<size_t>(p - data_.get());
  if (size_ >= kFlushBytes) Flush();
}

}  // namespace portico::gateway::server
