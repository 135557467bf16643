// admin_auth.h: the admin APIs' access rules (issue 15 item 10). An admin API binds to loopback
// by default; it may carry a bearer token, read from a file, and must carry one when it is bound
// to any other address. /healthz and /readyz stay open (probes carry no credentials and the
// answers reveal nothing); every other path answers 401 without the token.
//
// Thread-safety: pure functions and an immutable value; safe from any thread.
#ifndef PORTICO_CORE_ADMIN_ADMIN_AUTH_H_
#define PORTICO_CORE_ADMIN_ADMIN_AUTH_H_

#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::core::admin {

// IsLoopbackAddress: 127.0.0.0/8, ::1, ::ffff:127.x.y.z and "localhost".
bool IsLoopbackAddress(std::string_view address);

// LoadAdminToken reads a token file: the token is its content without surrounding whitespace.
// INVALID_ARGUMENT naming `setting` and the file when it cannot be read, is empty, holds
// whitespace inside the token, or is readable by group or others (chmod 600, like ssh keys).
StatusOr<std::string> LoadAdminToken(const std::string& path, std::string_view setting);

// CheckAdminExposure refuses an admin API bound to a non-loopback address without a token:
// INVALID_ARGUMENT naming `address_setting` and `token_setting`.
Status CheckAdminExposure(std::string_view address, bool has_token,
                          std::string_view address_setting, std::string_view token_setting);

// IsOpenAdminPath: the paths served without a token (/healthz, /readyz).
bool IsOpenAdminPath(std::string_view path);

// BearerTokenMatches compares an Authorization header value with "Bearer <token>" in time that
// does not depend on where they differ. An empty `token` matches everything (no token set).
bool BearerTokenMatches(std::string_view authorization, std::string_view token);

}  // namespace portico::core::admin

#endif  // PORTICO_CORE_ADMIN_ADMIN_AUTH_H_
