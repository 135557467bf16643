// admin_http.h: AdminRequest and AdminResponse, the HTTP exchange between the admin server
// (admin_server.h, sockets and framing) and a router (meaning; controller/admin/admin_router.h),
// plus the helpers both use: target splitting, percent-decoding and JSON error bodies.
//
// Thread-safety: value types and pure functions.
#ifndef PORTICO_CORE_ADMIN_ADMIN_HTTP_H_
#define PORTICO_CORE_ADMIN_ADMIN_HTTP_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::core::admin {

// AdminRequest is a request as the router sees it.
struct AdminRequest {
  std::string method;                                     // "GET", "POST", ...
  std::string path;                                       // percent-decoded path, without the query
  std::map<std::string, std::string, std::less<>> query;  // decoded; the last value wins
  std::string body;
  std::string content_type;
};

// AdminResponse is the router's answer.
struct AdminResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers ("Allow")
};

// ParseTarget splits a request target ("/api/v1/objects/gtw?namespace=a%20b") into the decoded
// path and query. INVALID_ARGUMENT for a bad percent escape or a target not starting with '/'.
Status ParseTarget(std::string_view target, std::string* path,
                   std::map<std::string, std::string, std::less<>>* query);

// JsonResponse builds a response with a JSON body.
AdminResponse JsonResponse(int status, std::string body);

// ErrorResponse builds {"error": message, "reason": <Kubernetes reason>, "code": status}.
AdminResponse ErrorResponse(int status, std::string_view message);

// HttpStatusFor maps a Status code to the HTTP status the admin API answers with.
int HttpStatusFor(StatusCode code);

// ReasonFor names an HTTP status the way Kubernetes does ("NotFound", "Invalid", ...).
std::string_view ReasonFor(int status);

// ErrorFor is ErrorResponse(HttpStatusFor(status.code()), status.message()).
AdminResponse ErrorFor(const Status& status);

}  // namespace portico::core::admin

#endif  // PORTICO_CORE_ADMIN_ADMIN_HTTP_H_
