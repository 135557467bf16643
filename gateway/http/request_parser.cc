// request_parser.cc: see request_parser.h.
#include "gateway/http/request_parser.h"

#include "gateway/http/authority.h"
#include "gateway/http/scan.h"

#include <cstring>

namespace portico::gateway::http {
namespace {

Method IdentifyMethod(std::string_view method) {
  switch (method.size()) {
    case 3:
      if (method == "GET") return Method::kGet;
      if (method == "PUT") return Method::kPut;
      break;
    case 4:
      if (method == "POST") return Method::kPost;
      if (method == "HEAD") return Method::kHead;
      break;
    case 5:
      if (method == "PATCH") return Method::kPatch;
      if (method == "TRACE") return Method::kTrace;
      break;
    case 6:
      if (method == "DELETE") return Method::kDelete;
      break;
    case 7:
      if (method == "OPTIONS") return Method::kOptions;
      if (method == "CONNECT") return Method::kConnect;
      break;
    default:
      break;
  }
  return Method::kOther;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

void RequestParser::ClearHead() {
  // Field by field: assigning a fresh RequestHead would copy the inline header array.
  head_.method = {};
  head_.method_id = Method::kOther;
  head_.target = {};
  head_.target_form = TargetForm::kOrigin;
  head_.scheme = {};
  head_.authority = {};
  head_.path = {};
  head_.query = {};
  head_.version_minor = 1;
  head_.headers.clear();
  head_.host = {};
  head_.framing = BodyFraming::kNone;
  head_.content_length = 0;
  head_.keep_alive = true;
  head_.expect_continue = false;
  head_.upgrade = {};
}

void RequestParser::Reset() {
  ClearHead();
  error_ = HttpError();
  state_ = ParseResult::kNeedMore;
  consumed_ = 0;
  base_ = nullptr;
  seen_ = 0;
  line_start_ = 0;
  scan_from_ = 0;
  method_checked_ = 0;
  method_done_ = false;
  request_line_done_ = false;
}

ParseResult RequestParser::Fail(int status, std::string_view reason) {
  error_ = HttpError{status, reason};
  state_ = ParseResult::kError;
  return state_;
}

ParseResult RequestParser::Parse(std::string_view buffer) {
  if (state_ != ParseResult::kNeedMore) return state_;
  if (buffer.data() != base_ || buffer.size() < seen_) {
    // First call, or the buffer moved: parse from the first byte.
    ClearHead();
    line_start_ = scan_from_ = method_checked_ = 0;
    method_done_ = request_line_done_ = false;
  }
  base_ = buffer.data();
  seen_ = buffer.size();
  const char* const b = buffer.data();
  const size_t n = buffer.size();
  while (true) {
    if (request_line_done_ && scan_from_ == line_start_) {
      // Fast path, on a line's first attempt only (so a line trickling in is scanned O(n)):
      // the final CRLF, or a valid field line, in one pass and without looking for the LF.
      const char* const s = b + line_start_;
      if (n - line_start_ >= 2 && s[0] == '\r' && s[1] == '\n') {
        if (line_start_ + 2 > limits_.max_head_bytes) return Fail(431, "header_section_too_large");
        consumed_ = line_start_ + 2;
        return Finish();
      }
      HeaderField field;
      if (const char* after = internal::TryFieldLine(s, b + n, &field)) {
        const size_t next = static_cast<size_t>(after - b);
        if (next - line_start_ - 1 > limits_.max_field_line + 1) {
          return Fail(431, "header_line_too_long");
        }
        if (next > limits_.max_head_bytes) return Fail(431, "header_section_too_large");
        if (head_.headers.size() >= limits_.max_headers) return Fail(431, "too_many_headers");
        head_.headers.push_back(field);
        line_start_ = scan_from_ = next;
        continue;
      }
    }
    const void* found =
        scan_from_ < n ? std::memchr(b + scan_from_, '\n', n - scan_from_) : nullptr;
    if (found == nullptr) {
      scan_from_ = n;
      if (!request_line_done_) {
        // Reject garbage (a TLS ClientHello, binary) without waiting for a line end.
        if (!PartialRequestLineIsValid(b + line_start_, b + n)) return state_;
        if (n - line_start_ > limits_.max_request_line + 1) {
          return Fail(414, "request_line_too_long");
        }
      } else if (n - line_start_ > limits_.max_field_line + 1) {
        return Fail(431, "header_line_too_long");
      }
      if (n > limits_.max_head_bytes) return Fail(431, "header_section_too_large");
      return ParseResult::kNeedMore;
    }
    const size_t lf = static_cast<size_t>(static_cast<const char*>(found) - b);
    // The checks an unfinished line gets come first and in the same order, so the answer does
    // not depend on how the bytes were split.
    if (!request_line_done_) {
      if (!PartialRequestLineIsValid(b + line_start_, b + lf)) return state_;
      if (lf - line_start_ > limits_.max_request_line + 1) {
        return Fail(414, "request_line_too_long");
      }
    } else if (lf - line_start_ > limits_.max_field_line + 1) {
      return Fail(431, "header_line_too_long");
    }
    if (lf > limits_.max_head_bytes) return Fail(431, "header_section_too_large");
    if (lf == line_start_ || b[lf - 1] != '\r') return Fail(400, "bare_lf");
    const size_t next = lf + 1;
    if (next > limits_.max_head_bytes) return Fail(431, "header_section_too_large");
    const std::string_view line(b + line_start_, lf - 1 - line_start_);
    if (!request_line_done_) {
      if (!line.empty()) {
        if (ParseRequestLine(line, b + n) == ParseResult::kError) return state_;
        request_line_done_ = true;
      }
      // An empty line before the request line is skipped (RFC 9112 §2.2).
    } else if (line.empty()) {
      consumed_ = next;
      return Finish();
    } else {
      if (head_.headers.size() >= limits_.max_headers) return Fail(431, "too_many_headers");
      HeaderField field;
      std::string_view reason = internal::ParseFieldLine(line, b + n, &field);
      if (!reason.empty()) return Fail(400, reason);
      head_.headers.push_back(field);
    }
    line_start_ = scan_from_ = next;
    method_checked_ = 0;
    method_done_ = false;
  }
}

bool RequestParser::PartialRequestLineIsValid(const char* begin, const char* end) {
  if (method_done_) return true;
  const char* p = begin + method_checked_;
  // Before the first SP only tchar may come. A CR (an empty line, or a bare CR) is left to the
  // complete line, so that both paths give one answer.
  while (p < end && IsTokenChar(*p)) ++p;
  if (p < end) {
    if (*p == '\r' || (*p == ' ' && p != begin)) {
      method_done_ = true;
    } else {
      Fail(400, "invalid_method");
      return false;
    }
  }
  method_checked_ = static_cast<size_t>(p - begin);
  return true;
}

ParseResult RequestParser::ParseRequestLine(std::string_view line, const char* readable_end) {
  const char* p = line.data();
  const char* const end = p + line.size();
  const char* const method = p;
  while (p < end && IsTokenChar(*p)) ++p;
  if (p == method || p == end || *p != ' ') {
    return Fail(400, p < end && *p == '\r' ? "bare_cr" : "invalid_method");
  }
  head_.method = std::string_view(method, static_cast<size_t>(p - method));
  head_.method_id = IdentifyMethod(head_.method);
  const char* const target = ++p;
  p = internal::FindInvalidTargetByte(p, end, readable_end);
  if (p == end) return Fail(400, "invalid_request_line");
  if (*p != ' ' || p == target) return Fail(400, *p == '\r' ? "bare_cr" : "invalid_target");
  head_.target = std::string_view(target, static_cast<size_t>(p - target));
  const std::string_view version(p + 1, static_cast<size_t>(end - p - 1));
  if (version == "HTTP/1.1") {
    head_.version_minor = 1;
  } else if (version == "HTTP/1.0") {
    head_.version_minor = 0;
  } else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" && IsDigit(version[5]) &&
             version[6] == '.' && IsDigit(version[7])) {
    return Fail(505, "http_version_not_supported");
  } else {
    return Fail(400, version.find('\r') != std::string_view::npos ? "bare_cr" : "invalid_version");
  }
  if (head_.method_id == Method::kConnect) return Fail(501, "connect_not_supported");
  return ParseTarget();
}

ParseResult RequestParser::ParseTarget() {
  std::string_view target = head_.target;
  if (target[0] == '/') {
    head_.target_form = TargetForm::kOrigin;
  } else if (target == "*") {
    if (head_.method_id != Method::kOptions) return Fail(400, "invalid_target");
    head_.target_form = TargetForm::kAsterisk;
    head_.path = target;
    return ParseResult::kNeedMore;
  } else {
    // absolute-form: scheme "://" authority [path-abempty] ["?" query].
    size_t colon = target.find(':');
    if (colon == std::string_view::npos) return Fail(400, "invalid_target");
    std::string_view scheme = target.substr(0, colon);
    if (!TokenEquals(scheme, "http") && !TokenEquals(scheme, "https"))
      return Fail(400, "invalid_target");
    if (target.substr(colon, 3) != "://") return Fail(400, "invalid_target");
    std::string_view rest = target.substr(colon + 3);
    size_t authority_end = rest.find_first_of("/?");
    if (authority_end == std::string_view::npos) authority_end = rest.size();
    std::string_view authority = rest.substr(0, authority_end);
    if (!IsValidHostPort(authority)) return Fail(400, "invalid_target");
    head_.target_form = TargetForm::kAbsolute;
    head_.scheme = scheme;
    head_.authority = authority;
    target = rest.substr(authority_end);
    if (target.empty() || target[0] == '?') {
      static constexpr char kRoot[] = "/";
      head_.path = std::string_view(kRoot, 1);
      if (!target.empty()) head_.query = target.substr(1);
      return ParseResult::kNeedMore;
    }
  }
  size_t question = target.find('?');
  if (question == std::string_view::npos) {
    head_.path = target;
  } else {
    head_.path = target.substr(0, question);
    head_.query = target.substr(question + 1);
  }
  return ParseResult::kNeedMore;
}

ParseResult RequestParser::Finish() {
  int host_count = 0;
  bool has_content_length = false;
  bool has_transfer_encoding = false;
  int chunked_count = 0;
  bool last_is_chunked = false;
  bool other_coding = false;
  bool bad_coding = false;
  bool connection_close = false;
  bool connection_keep_alive = false;
  bool connection_upgrade = false;
  bool connection_lists_content_length = false;
  for (const HeaderField& field : head_.headers) {
    const std::string_view name = field.name;
    const std::string_view value = field.value;
    switch (name.size()) {
      case 4:
        if (TokenEquals(name, "host")) {
          ++host_count;
          // Empty is what a client sends for a target URI without authority (RFC 9112 §3.2).
          if (!value.empty() && !IsValidHostPort(value)) return Fail(400, "invalid_host");
          head_.host = value;
        }
        break;
      case 6:
        if (TokenEquals(name, "expect")) {
          if (!TokenEquals(value, "100-continue")) return Fail(417, "unsupported_expectation");
          head_.expect_continue = head_.version_minor == 1;
        }
        break;
      case 7:
        if (TokenEquals(name, "upgrade") && head_.upgrade.empty()) head_.upgrade = value;
        break;
      case 10:
        if (TokenEquals(name, "connection")) {
          ForEachListElement(value, [&](std::string_view element) {
            if (TokenEquals(element, "close")) connection_close = true;
            if (TokenEquals(element, "keep-alive")) connection_keep_alive = true;
            if (TokenEquals(element, "upgrade")) connection_upgrade = true;
            if (TokenEquals(element, "content-length")) connection_lists_content_length = true;
            return true;
          });
        }
        break;
      case 14:
        if (TokenEquals(name, "content-length")) {
          if (has_content_length) return Fail(400, "duplicate_content_length");
          has_content_length = true;
          if (!ParseContentLength(value, &head_.content_length)) {
            return Fail(400, "invalid_content_length");
          }
        }
        break;
      case 17:
        if (TokenEquals(name, "transfer-encoding")) {
          has_transfer_encoding = true;
          // Codings accumulate over every Transfer-Encoding line (one list, RFC 9110 §5.3).
          last_is_chunked = false;
          ForEachListElement(value, [&](std::string_view coding) {
            if (TokenEquals(coding, "chunked")) {
              ++chunked_count;
              last_is_chunked = true;
            } else {
              // Anything else, including "chunked;param" or a non-token, before or after.
              if (!IsToken(coding.substr(0, coding.find(';')))) bad_coding = true;
              other_coding = true;
              last_is_chunked = false;
            }
            return true;
          });
        }
        break;
      default:
        break;
    }
  }
  // A proxy drops the fields Connection names (RFC 9110 §7.6.1): with Content-Length among them
  // the body would go upstream without its framing, to be read there as the next request.
  if (connection_lists_content_length) return Fail(400, "connection_lists_content_length");
  if (has_transfer_encoding) {
    if (has_content_length) return Fail(400, "content_length_with_transfer_encoding");
    if (head_.version_minor == 0) return Fail(400, "transfer_encoding_in_http10");
    if (bad_coding) return Fail(400, "invalid_transfer_encoding");
    if (chunked_count > 1) return Fail(400, "chunked_repeated");
    if (!last_is_chunked) return Fail(400, "transfer_encoding_not_chunked");
    if (other_coding) return Fail(501, "unsupported_transfer_coding");
    head_.framing = BodyFraming::kChunked;
  } else if (has_content_length) {
    head_.framing = BodyFraming::kContentLength;
  }
  if (host_count > 1) return Fail(400, "multiple_host");
  if (host_count == 0 && head_.version_minor == 1) return Fail(400, "missing_host");
  if (head_.target_form == TargetForm::kAbsolute) head_.host = head_.authority;
  head_.keep_alive = !connection_close && (head_.version_minor == 1 || connection_keep_alive);
  if (!connection_upgrade || head_.version_minor == 0) head_.upgrade = {};
  // HTTP/2 over cleartext by Upgrade (deprecated by RFC 9113 §3.1) is never a tunnel: an
  // upstream accepting it would take every later request on the connection straight from the
  // client, past routing and filters (h2c smuggling). Served as a plain request, as Envoy does.
  if (!head_.upgrade.empty()) {
    ForEachListElement(head_.upgrade, [&](std::string_view protocol) {
      if (TokenEquals(protocol.substr(0, protocol.find('/')), "h2c")) head_.upgrade = {};
      return !head_.upgrade.empty();
    });
  }
  state_ = ParseResult::kComplete;
  return state_;
}

}  // namespace portico::gateway::http
