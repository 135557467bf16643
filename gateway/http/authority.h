// authority.h: IsValidHostPort, the grammar check the request parser gives a Host field value and
// the authority of an absolute-form request-target (RFC 9112 §3.2, RFC 3986 §3.2.2-3.2.3).
//
// Thread-safety: a pure function. Ownership: it reads `text` during the call only.
#ifndef PORTICO_GATEWAY_HTTP_AUTHORITY_H_
#define PORTICO_GATEWAY_HTTP_AUTHORITY_H_

#include <string_view>

namespace portico::gateway::http {

// IsValidHostPort reports whether `text` is uri-host [":" port] with a non-empty uri-host:
//   uri-host   = IP-literal / IPv4address / reg-name
//   IP-literal = "[" IPv6address "]" (checked by inet_pton: no zone id) or
//                "[" "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) "]" (IPvFuture)
//   reg-name   = *( unreserved / pct-encoded / sub-delims ), a '%' followed by two hex digits;
//                an IPv4address is a reg-name as far as the syntax goes
//   port       = *DIGIT (empty after ':' too) whose value is at most 65535.
// So no userinfo ('@', which RFC 9110 §4.2.4 forbids in http(s) URIs), no brackets around a
// reg-name, no whitespace or CTL. The empty host is refused because an http(s) URI with one is
// invalid (RFC 9110 §4.2.1); an empty Host field value (a target without authority) is the
// caller's case to allow. A reg-name and the port take one pass; an IPv6 literal is copied to a
// stack buffer for inet_pton. Nothing is allocated.
bool IsValidHostPort(std::string_view text);

}  // namespace portico::gateway::http

#endif  // PORTICO_GATEWAY_HTTP_AUTHORITY_H_
