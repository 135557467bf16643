// percent_encoding.h: PercentEncode and PercentDecode, the URL escaping shared by the admin
// API server and its clients (portico-ctl).
//
// Thread-safety: pure functions.
#ifndef PORTICO_CORE_COMMON_PERCENT_ENCODING_H_
#define PORTICO_CORE_COMMON_PERCENT_ENCODING_H_

#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::core {

// PercentEncode escapes everything but RFC 3986 unreserved characters (path segments, query
// values).
std::string PercentEncode(std::string_view text);

// PercentDecode decodes %XX escapes (and '+' as space when `plus_is_space`); a malformed escape
// is INVALID_ARGUMENT.
StatusOr<std::string> PercentDecode(std::string_view text, bool plus_is_space);

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_PERCENT_ENCODING_H_
