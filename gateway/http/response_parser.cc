// response_parser.cc: see response_parser.h.
#include "gateway/http/response_parser.h"

#include <cstring>

namespace portico::gateway::http {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

void ResponseParser::ClearHead() {
  head_.version_minor = 1;
  head_.status = 0;
  head_.reason = {};
  head_.headers.clear();
  head_.framing = BodyFraming::kNone;
  head_.content_length = 0;
  head_.keep_alive = true;
}

void ResponseParser::Reset() {
  ClearHead();
  error_ = HttpError();
  state_ = ParseResult::kNeedMore;
  consumed_ = 0;
  base_ = nullptr;
  seen_ = 0;
  line_start_ = 0;
  scan_from_ = 0;
  status_line_done_ = false;
}

ParseResult ResponseParser::Fail(std::string_view reason) {
  error_ = HttpError{502, reason};
  state_ = ParseResult::kError;
  return state_;
}

ParseResult ResponseParser::Parse(std::string_view buffer, bool head_request) {
  if (state_ != ParseResult::kNeedMore) return state_;
  if (buffer.data() != base_ || buffer.size() < seen_) {
    ClearHead();
    line_start_ = scan_from_ = 0;
    status_line_done_ = false;
  }
  base_ = buffer.data();
  seen_ = buffer.size();
  const char* const b = buffer.data();
  const size_t n = buffer.size();
  while (true) {
    if (status_line_done_ && scan_from_ == line_start_) {
      // Fast path, on a line's first attempt only (so a line trickling in is scanned O(n)):
      // the final CRLF, or a valid field line, in one pass and without looking for the LF.
      const char* const s = b + line_start_;
      if (n - line_start_ >= 2 && s[0] == '\r' && s[1] == '\n') {
        if (line_start_ + 2 > limits_.max_head_bytes) return Fail("header_section_too_large");
        consumed_ = line_start_ + 2;
        return Finish(head_request);
      }
      HeaderField field;
      if (const char* after = internal::TryFieldLine(s, b + n, &field)) {
        const size_t next = static_cast<size_t>(after - b);
        if (next > limits_.max_head_bytes) return Fail("header_section_too_large");
        if (head_.headers.size() >= limits_.max_headers) return Fail("too_many_headers");
        head_.headers.push_back(field);
        line_start_ = scan_from_ = next;
        continue;
      }
    }
    const void* found =
        scan_from_ < n ? std::memchr(b + scan_from_, '\n', n - scan_from_) : nullptr;
    if (found == nullptr) {
      scan_from_ = n;
      if (!status_line_done_ && n - line_start_ > limits_.max_request_line + 1) {
        return Fail("status_line_too_long");
      }
      if (n > limits_.max_head_bytes) return Fail("header_section_too_large");
      return ParseResult::kNeedMore;
    }
    const size_t lf = static_cast<size_t>(static_cast<const char*>(found) - b);
    // The limit checks an unfinished line gets come first, as in RequestParser.
    if (!status_line_done_ && lf - line_start_ > limits_.max_request_line + 1) {
      return Fail("status_line_too_long");
    }
    if (lf > limits_.max_head_bytes) return Fail("header_section_too_large");
    if (lf == line_start_ || b[lf - 1] != '\r') return Fail("bare_lf");
    const size_t next = lf + 1;
    if (next > limits_.max_head_bytes) return Fail("header_section_too_large");
    const std::string_view line(b + line_start_, lf - 1 - line_start_);
    if (!status_line_done_) {
      if (ParseStatusLine(line) == ParseResult::kError) return state_;
      status_line_done_ = true;
    } else if (line.empty()) {
      consumed_ = next;
      return Finish(head_request);
    } else {
      if (head_.headers.size() >= limits_.max_headers) return Fail("too_many_headers");
      HeaderField field;
      std::string_view reason = internal::ParseFieldLine(line, b + n, &field);
      if (!reason.empty()) return Fail(reason);
      head_.headers.push_back(field);
    }
    line_start_ = scan_from_ = next;
  }
}

ParseResult ResponseParser::ParseStatusLine(std::string_view line) {
  // "HTTP/1.x" SP 3DIGIT [SP reason-phrase]
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || (line[7] != '0' && line[7] != '1') ||
      line[8] != ' ') {
    return Fail(line.find('\r') != std::string_view::npos ? "bare_cr" : "invalid_status_line");
  }
  head_.version_minor = line[7] - '0';
  if (!IsDigit(line[9]) || !IsDigit(line[10]) || !IsDigit(line[11])) {
    return Fail("invalid_status_code");
  }
  head_.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  if (head_.status < 100 || head_.status > 599) return Fail("invalid_status_code");
  if (line.size() == 12) return ParseResult::kNeedMore;
  if (line[12] != ' ') return Fail("invalid_status_line");
  std::string_view reason = line.substr(13);
  for (char c : reason) {
    if (!IsFieldValueChar(c)) return Fail(c == '\r' ? "bare_cr" : "invalid_reason_phrase");
  }
  head_.reason = reason;
  return ParseResult::kNeedMore;
}

ParseResult ResponseParser::Finish(bool head_request) {
  bool has_content_length = false;
  bool has_transfer_encoding = false;
  int chunked_count = 0;
  bool last_is_chunked = false;
  bool other_coding = false;
  bool connection_close = false;
  bool connection_keep_alive = false;
  for (const HeaderField& field : head_.headers) {
    const std::string_view name = field.name;
    const std::string_view value = field.value;
    switch (name.size()) {
      case 10:
        if (TokenEquals(name, "connection")) {
          ForEachListElement(value, [&](std::string_view element) {
            if (TokenEquals(element, "close")) connection_close = true;
            if (TokenEquals(element, "keep-alive")) connection_keep_alive = true;
            return true;
          });
        }
        break;
      case 14:
        if (TokenEquals(name, "content-length")) {
          // Identical repeats (separate fields or a list) are one value (RFC 9110 §8.6).
          bool valid = true;
          bool empty = true;
          ForEachListElement(value, [&](std::string_view element) {
            empty = false;
            uint64_t length = 0;
            if (!ParseContentLength(element, &length)) {
              valid = false;
              return false;
            }
            if (has_content_length && length != head_.content_length) {
              valid = false;
              return false;
            }
            has_content_length = true;
            head_.content_length = length;
            return true;
          });
          if (empty) return Fail("invalid_content_length");
          if (!valid) {
            return Fail(has_content_length ? "conflicting_content_length"
                                           : "invalid_content_length");
          }
        }
        break;
      case 17:
        if (TokenEquals(name, "transfer-encoding")) {
          has_transfer_encoding = true;
          last_is_chunked = false;
          ForEachListElement(value, [&](std::string_view coding) {
            if (TokenEquals(coding, "chunked")) {
              ++chunked_count;
              last_is_chunked = true;
            } else {
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
  if (has_transfer_encoding) {
    if (has_content_length) return Fail("content_length_with_transfer_encoding");
    if (head_.version_minor == 0) return Fail("transfer_encoding_in_http10");
    if (chunked_count > 1) return Fail("chunked_repeated");
    if (!last_is_chunked) return Fail("transfer_encoding_not_chunked");
    if (other_coding) return Fail("unsupported_transfer_coding");
  }
  head_.keep_alive = !connection_close && (head_.version_minor == 1 || connection_keep_alive);
  const int status = head_.status;
  if (head_request || status < 200 || status == 204 || status == 304) {
    head_.framing = BodyFraming::kNone;
  } else if (has_transfer_encoding) {
    head_.framing = BodyFraming::kChunked;
  } else if (has_content_length) {
    head_.framing = BodyFraming::kContentLength;
  } else {
    head_.framing = BodyFraming::kUntilClose;
    head_.keep_alive = false;
  }
  state_ = ParseResult::kComplete;
  return state_;
}

}  // namespace portico::gateway::http
