// head_writer.h: serializers of the heads the gateway sends: the forwarded request (to the
// upstream) and the forwarded or locally generated response (to the client), plus the standard
// reason phrases.
//
// They append to a caller-owned std::string (reuse one per connection: with its capacity kept,
// a write is one size computation, one resize and memcpys; no allocation per header).
// Field names and values are written as given: callers pass parsed fields (already validated)
// or configuration the controller validated (no CR/LF), never raw client bytes.
//
// Thread-safety: pure functions.
#ifndef PORTICO_GATEWAY_HTTP_HEAD_WRITER_H_
#define PORTICO_GATEWAY_HTTP_HEAD_WRITER_H_

#include <span>
#include <string>
#include <string_view>

#include "gateway/http/header_util.h"
#include "gateway/http/message.h"

namespace portico::gateway::http {

// ForwardedRequest describes the HTTP/1.1 request head a proxy sends upstream.
struct ForwardedRequest {
  std::string_view method;
  std::string_view target;  // Origin-form, possibly rewritten ("/path?query").
  std::string_view host;    // Written first as "Host: <host>"; client Host fields are dropped.
  // The client's fields: hop-by-hop ones (fixed list and those named by Connection) are dropped,
  // as are Host, X-Forwarded-For and X-Forwarded-Proto when replaced below.
  std::span<const HeaderField> headers;
  // Written after `headers` as given (filters' additions).
  std::span<const HeaderField> extra_headers;
  // When not empty: the client's X-Forwarded-For values are joined into one field with
  // client_address appended ("a, b, client"). When empty, X-Forwarded-For passes untouched.
  std::string_view client_address;
  // When not empty: "X-Forwarded-Proto: <value>" replaces the client's.
  std::string_view forwarded_proto;
  // kChunked writes "Transfer-Encoding: chunked" (the body is re-framed) and drops any
  // Content-Length; otherwise Content-Length passes through with `headers` (it is end-to-end).
  BodyFraming framing = BodyFraming::kNone;
  // When not empty: "Connection: upgrade" and "Upgrade: <value>" are written (the client asked
  // to switch protocols; its own Connection and Upgrade fields are hop-by-hop and dropped).
  std::string_view upgrade;
};

// AppendForwardedRequest appends "METHOD target HTTP/1.1\r\n", the fields and the final CRLF.
void AppendForwardedRequest(const ForwardedRequest& request, std::string* out);

// ResponseHeadOut describes a response head sent to the client.
struct ResponseHeadOut {
  int status = 200;
  std::string_view reason;  // Empty: StatusReason(status).
  int version_minor = 1;    // Status-line version: answer an HTTP/1.0 client in HTTP/1.0.
  // Upstream fields (hop-by-hop dropped as for requests) or the gateway's own.
  std::span<const HeaderField> headers;
  std::span<const HeaderField> extra_headers;
  // kChunked writes "Transfer-Encoding: chunked" and drops any Content-Length of `headers`;
  // kContentLength writes "Content-Length: N" unless `headers` already carries Content-Length
  // (forwarded responses keep theirs); otherwise `headers` pass as they are (a 304 or a HEAD
  // response keeps its Content-Length).
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;
  // When not empty: "Connection: <value>" ("close", or "keep-alive" for an HTTP/1.0 client).
  std::string_view connection;
};

// AppendResponseHead appends the status line, the fields and the final CRLF.
void AppendResponseHead(const ResponseHeadOut& response, std::string* out);

// StatusReason is the RFC 9110 reason phrase of `status` ("" when unknown).
std::string_view StatusReason(int status);

}  // namespace portico::gateway::http

#endif  // PORTICO_GATEWAY_HTTP_HEAD_WRITER_H_
