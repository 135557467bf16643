// message.h: the vocabulary shared by the HTTP/1.1 codec (gateway/http): parse results, errors,
// body framing and the limits a parser enforces.
//
// Thread-safety: value types; no shared state.
#ifndef PORTICO_GATEWAY_HTTP_MESSAGE_H_
#define PORTICO_GATEWAY_HTTP_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace portico::gateway::http {

// ParseResult is what every incremental parser and decoder step returns.
enum class ParseResult : uint8_t {
  kNeedMore,  // Everything given was examined; call again with more bytes.
  kComplete,  // A head (or a body) is complete; see consumed().
  kError,     // The message is malformed; see error(). Answer error().status and close.
};

// HttpError is why a message was rejected: the status to answer (400, 414, 431, 501, 505 for
// requests; 502 for upstream responses) and a short snake_case reason for the access log.
// `reason` points to a string literal (static storage), so it outlives every parser.
struct HttpError {
  int status = 0;
  std::string_view reason;
};

// BodyFraming is how the body after a head is delimited (RFC 9112 §6.3).
enum class BodyFraming : uint8_t {
  kNone,           // No body (no Content-Length nor Transfer-Encoding; 1xx/204/304/HEAD).
  kContentLength,  // Exactly content_length bytes (possibly 0).
  kChunked,        // Transfer-Encoding: chunked; decode with ChunkedDecoder.
  kUntilClose,     // Responses only: the body runs until the upstream closes.
};

// HeadLimits bounds a request or response head. A request answers 414 when the request line is
// longer than max_request_line, 431 when one field line (name, colon and value, without CRLF) is
// longer than max_field_line, and 431 when the head (start line, fields and the final CRLF) is
// longer than max_head_bytes or holds more than max_headers fields; a response answers 502
// (max_field_line applies to requests only: a response's fields are bounded by the head).
struct HeadLimits {
  size_t max_request_line = 8 * 1024;
  size_t max_field_line = 16 * 1024;
  size_t max_head_bytes = 64 * 1024;
  size_t max_headers = 100;
};

// The largest Content-Length or chunk size accepted (2^63 - 1): consumers may keep sizes signed.
inline constexpr uint64_t kMaxBodyLength = (uint64_t{1} << 63) - 1;

}  // namespace portico::gateway::http

#endif  // PORTICO_GATEWAY_HTTP_MESSAGE_H_
