// response_parser.h: ResponseParser, the strict incremental parser of upstream response heads,
// and ResponseHead, what it produces.
//
// Same buffer contract as RequestParser: the caller passes the whole head so far from its first
// byte; each line is parsed once, when its LF has arrived; a moved buffer restarts the parse.
// Every rejection is a 502 (bad upstream response) with a reason for the access log: lines end
// in CRLF; the status line is "HTTP/1.1" or "HTTP/1.0", SP, three digits 100-599, then SP and a
// reason phrase (or nothing); field lines follow ParseFieldLine (no obs-fold, RFC 9112 §5.2's
// "replace with SP" option is not taken); Content-Length fields (or list elements) that differ
// or are not 1*DIGIT; Content-Length with Transfer-Encoding; Transfer-Encoding in HTTP/1.0, not
// exactly one final "chunked", or with another coding (the gateway re-frames bodies and does not
// decode transfer codings); limits of HeadLimits (max_request_line bounds the status line).
// Framing (RFC 9112 §6.3): a response to HEAD, 1xx, 204 and 304 have no body; chunked; then
// Content-Length; else the body runs until close (and keep_alive is false).
//
// Thread-safety: none; one parser per upstream connection. Ownership: ResponseHead holds views
// into the caller's buffer.
#ifndef PORTICO_GATEWAY_HTTP_RESPONSE_PARSER_H_
#define PORTICO_GATEWAY_HTTP_RESPONSE_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gateway/http/header_util.h"
#include "gateway/http/message.h"

namespace portico::gateway::http {

// ResponseHead is a parsed response head.
struct ResponseHead {
  int version_minor = 1;  // HTTP/1.<version_minor>: 0 or 1.
  int status = 0;
  std::string_view reason;  // Reason phrase, possibly empty.
  HeaderList headers;
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;  // With kContentLength.
  // Whether the upstream connection may carry another request after this response.
  bool keep_alive = true;
};

// ResponseParser parses one response head at a time; Reset() before the next one (also after
// a 1xx interim response).
class ResponseParser {
 public:
  explicit ResponseParser(const HeadLimits& limits = {}) : limits_(limits) {}

  // Parse examines `buffer` (the head from its first byte). `head_request` says the request was
  // HEAD, so the response has no body whatever its fields say. Results as RequestParser::Parse.
  ParseResult Parse(std::string_view buffer, bool head_request = false);

  const ResponseHead& head() const { return head_; }
  const HttpError& error() const { return error_; }
  size_t consumed() const { return consumed_; }

  void Reset();

 private:
  void ClearHead();
  ParseResult Fail(std::string_view reason);
  ParseResult ParseStatusLine(std::string_view line);
  ParseResult Finish(bool head_request);

  HeadLimits limits_;
  ResponseHead head_;
  HttpError error_;
  ParseResult state_ = ParseResult::kNeedMore;
  size_t consumed_ = 0;
  const char* base_ = nullptr;
  size_t seen_ = 0;
  size_t line_start_ = 0;
  size_t scan_from_ = 0;
  bool status_line_done_ = false;
};

}  // namespace portico::gateway::http

#endif  // PORTICO_GATEWAY_HTTP_RESPONSE_PARSER_H_
