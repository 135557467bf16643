// request_parser.h: RequestParser, the strict incremental HTTP/1.1 request-head parser of the
// gateway data plane (DESIGN.md §7), and RequestHead, what it produces.
//
// The caller owns one contiguous buffer per connection holding the bytes of the current head
// from its first byte, appends what it reads and calls Parse again with the whole buffer. The
// parser remembers how far it got: a field line is parsed in one SIMD-assisted pass when it is
// complete on first sight, else its LF is looked for in the bytes not yet seen and the line is
// parsed once it has arrived, so a head trickling in byte by byte costs O(n) overall. If the
// buffer moved (reallocated, compacted), Parse notices the new address and restarts from the
// first byte; that is correct, only slower. Whole, split or trickled, a given input gets the
// same answer (tested on mutated inputs). A byte that cannot start a method (a TLS ClientHello,
// binary) is rejected before any line end arrives.
//
// Strictness (each a 400 with the reason in HttpError unless stated): every line ends in CRLF
// (a bare LF or a bare CR is rejected, not tolerated); leading empty lines before the request
// line are skipped (RFC 9112 §2.2); method is a token; exactly one SP between the three parts;
// request-target is origin-form ("/..."), absolute-form ("http://" or "https://", an authority
// IsValidHostPort accepts, so no userinfo, then path and query; Host is then taken from it), or
// "*" for OPTIONS only; a target byte outside 0x21-0x7E (CTL, SP, DEL, raw UTF-8) or '#' is
// rejected, while '"', '<', '>', '\', '^', '`', '{', '|', '}' (outside RFC 3986, but sent raw in
// queries by real clients and harmless to framing) pass, as in nginx; CONNECT (authority-form) is
// answered 501 "connect_not_supported" (the gateway is not a forward proxy); the version is
// exactly HTTP/1.1 or HTTP/1.0, another well-formed HTTP/x.y is 505; field lines follow
// ParseFieldLine (no obs-fold, no whitespace before the colon, no CTL in values); HTTP/1.1 needs
// exactly one Host and HTTP/1.0 at most one, whose value is empty or, by the grammar, uri-host
// [":" port] (IsValidHostPort: a port of digits up to 65535, brackets only around an IP literal,
// valid '%' escapes, no userinfo); Content-Length is one field of 1*DIGIT <= 2^63-1 (a second
// one, equal or not, and a list like "5, 5" are rejected); a Connection field listing
// Content-Length is rejected (a proxy drops what Connection names, which would forward the body
// unframed: "connection_lists_content_length"); Transfer-Encoding with
// Content-Length, in an HTTP/1.0 request, not ending in chunked, or with chunked twice is
// rejected; a chunked request with another coding before it (gzip, unknown) is 501, as nginx
// does; an Expect other than 100-continue is 417. Limits (HeadLimits): a request line longer
// than max_request_line is 414; a field line longer than max_field_line ("header_line_too_long",
// also the final empty line's run: any line after the request line), a head longer than
// max_head_bytes or with more than max_headers fields is 431. Each limit is checked as soon as
// an unfinished line passes it.
//
// Thread-safety: none; one parser per connection (worker thread). Ownership: RequestHead holds
// views into the caller's buffer, valid while those bytes stay where they are.
#ifndef PORTICO_GATEWAY_HTTP_REQUEST_PARSER_H_
#define PORTICO_GATEWAY_HTTP_REQUEST_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gateway/http/header_util.h"
#include "gateway/http/message.h"

namespace portico::gateway::http {

// Method identifies the registered methods the gateway cares about; anything else (including
// lower-case "get", methods are case-sensitive) is kOther and forwarded as sent.
enum class Method : uint8_t {
  kOther,
  kGet,
  kHead,
  kPost,
  kPut,
  kDelete,
  kPatch,
  kOptions,
  kTrace,
  kConnect,
};

// TargetForm is the request-target form (RFC 9112 §3.2); CONNECT's authority-form never
// completes (501).
enum class TargetForm : uint8_t { kOrigin, kAbsolute, kAsterisk };

// RequestHead is a parsed request head; every view points into the parsed buffer (or to a
// static "/" for an absolute-form target without a path).
struct RequestHead {
  std::string_view method;
  Method method_id = Method::kOther;
  std::string_view target;  // As received.
  TargetForm target_form = TargetForm::kOrigin;
  std::string_view scheme;     // Absolute-form only ("http" or "https", case as sent).
  std::string_view authority;  // Absolute-form only.
  std::string_view path;       // Target up to '?' ("*" for the asterisk form).
  std::string_view query;      // After the first '?', without it; empty when absent.
  int version_minor = 1;       // HTTP/1.<version_minor>: 0 or 1.
  HeaderList headers;          // Every field in order, duplicates kept.
  std::string_view host;       // The Host value, or the absolute-form authority.
  BodyFraming framing = BodyFraming::kNone;  // kNone, kContentLength or kChunked.
  uint64_t content_length = 0;               // With kContentLength.
  bool keep_alive = true;        // 1.1 unless "Connection: close"; 1.0 only with "keep-alive".
  bool expect_continue = false;  // "Expect: 100-continue" on HTTP/1.1.
  // The Upgrade field's value when the request asks to switch protocols (HTTP/1.1, with
  // "upgrade" in Connection, RFC 9110 §7.8); empty otherwise, and empty when it offers h2c
  // (never tunnelled: h2c smuggling).
  std::string_view upgrade;
};

// RequestParser parses one request head at a time; Reset() before the next (pipelined) one.
class RequestParser {
 public:
  explicit RequestParser(const HeadLimits& limits = {}) : limits_(limits) {}

  // Parse examines `buffer`, the bytes of the current head from its first byte (earlier calls
  // saw a prefix of them). kComplete: head() is filled and consumed() bytes of `buffer` were the
  // head (the body or the next request follows). kError: error() says why. Once complete or
  // failed, Parse returns the same result until Reset().
  ParseResult Parse(std::string_view buffer);

  const RequestHead& head() const { return head_; }
  const HttpError& error() const { return error_; }
  // consumed: bytes of the head including leading empty lines and the final CRLF.
  size_t consumed() const { return consumed_; }

  // Reset forgets the current head (keeps the header list's capacity).
  void Reset();

 private:
  void ClearHead();
  ParseResult Fail(int status, std::string_view reason);
  ParseResult ParseRequestLine(std::string_view line, const char* readable_end);
  ParseResult ParseTarget();
  ParseResult Finish();
  bool PartialRequestLineIsValid(const char* begin, const char* end);

  HeadLimits limits_;
  RequestHead head_;
  HttpError error_;
  ParseResult state_ = ParseResult::kNeedMore;
  size_t consumed_ = 0;
  // Resumption: the buffer address last seen, where the next unparsed line starts, where the
  // LF search resumes, and how much of an unfinished request line was checked.
  const char* base_ = nullptr;
  size_t seen_ = 0;
  size_t line_start_ = 0;
  size_t scan_from_ = 0;
  size_t method_checked_ = 0;
  bool method_done_ = false;
  bool request_line_done_ = false;
};

}  // namespace portico::gateway::http

#endif  // PORTICO_GATEWAY_HTTP_REQUEST_PARSER_H_
