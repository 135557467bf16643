// path_normalize.h: NormalizePath, the request path as the gateway routes and forwards it, in the
// normal form Envoy Gateway applies by default (RFC 3986 §6.2.2), so that "/v2/../admin",
// "/admin/./" and "//admin" cannot slip past a route or a policy written for "/admin":
//  - percent-encoded unreserved characters (ALPHA DIGIT - . _ ~) are decoded ("%7E" -> "~"), and
//    the hex digits of the remaining escapes upper-cased ("%2f" -> "%2F": an encoded slash stays
//    encoded, so it never splits a segment);
//  - a backslash is a slash ("/a\\b" -> "/a/b"), as Envoy's normaliser (Chromium's URL path
//    canonicaliser) makes it;
//  - runs of '/' are merged into one;
//  - "." and ".." segments are removed (RFC 3986 §5.2.4; ".." never climbs above the root).
//
// Escaped slashes ("%2F", "%5C", any case) are a policy of their own (EscapedSlashes, Envoy
// Gateway's ClientTrafficPolicy path.escapedSlashesAction): kept encoded, rejected, or decoded
// (UnescapeSlashes) before NormalizePath, and then forwarded or redirected to.
//
// Thread-safety: pure function. Allocation: writes into the caller's string (capacity reused).
#ifndef PORTICO_GATEWAY_HTTP_PATH_NORMALIZE_H_
#define PORTICO_GATEWAY_HTTP_PATH_NORMALIZE_H_

#include <optional>
#include <string>
#include <string_view>

namespace portico::gateway::http {

// NormalizePath writes the normal form of `path` (an origin-form path starting with '/', no
// query) to *out. It returns false, leaving *out unspecified, when `path` does not start with
// '/' or holds a malformed escape ('%' not followed by two hex digits): answer 400.
bool NormalizePath(std::string_view path, std::string* out);

// EscapedSlashes is what a path holding "%2F" or "%5C" gets.
enum class EscapedSlashes {
  kKeepUnchanged,        // routed and forwarded encoded (never splits a segment)
  kRejectRequest,        // 400
  kUnescapeAndForward,   // decoded ('/' and '\\', a slash too), normalized, routed, forwarded
  kUnescapeAndRedirect,  // 307 to the decoded, normalized path (Envoy Gateway's default)
};

// ParseEscapedSlashes reads Envoy Gateway's names: "KeepUnchanged", "RejectRequest",
// "UnescapeAndForward", "UnescapeAndRedirect"; nullopt for anything else.
std::optional<EscapedSlashes> ParseEscapedSlashes(std::string_view name);

// HasEscapedSlash reports whether `path` holds "%2F" or "%5C" (any case).
bool HasEscapedSlash(std::string_view path);
// UnescapeSlashes writes `path` to *out with "%2F" decoded to '/' and "%5C" to '\\' (other
// escapes untouched; NormalizePath handles them).
void UnescapeSlashes(std::string_view path, std::string* out);

}  // namespace portico::gateway::http

#endif  // PORTICO_GATEWAY_HTTP_PATH_NORMALIZE_H_
