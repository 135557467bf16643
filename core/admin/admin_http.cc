#include "core/admin/admin_http.h"

#include "core/common/percent_encoding.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace portico::core::admin {

Status ParseTarget(std::string_view target, std::string* path,
                   std::map<std::string, std::string, std::less<>>* query) {
  if (target.empty() || target.front() != '/') {
    return InvalidArgumentError("request target must start with '/'");
  }
  size_t question = target.find('?');
  std::string_view raw_path = target.substr(0, question);
  // Path segments are decoded one by one by the router's splitting; here the whole path is
  // decoded, and an encoded '/' inside a name is refused (names never contain one).
  if (raw_path.find("%2F") != std::string_view::npos ||
      raw_path.find("%2f") != std::string_view::npos) {
    return InvalidArgumentError("encoded '/' in the request path");
  }
  PORTICO_ASSIGN_OR_RETURN(*path, core::PercentDecode(raw_path, false));
  query->clear();
  if (question == std::string_view::npos) return OkStatus();
  std::string_view rest = target.substr(question + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      PORTICO_ASSIGN_OR_RETURN(std::string key, core::PercentDecode(pair.substr(0, eq), true));
      std::string value;
      if (eq != std::string_view::npos) {
        PORTICO_ASSIGN_OR_RETURN(value, core::PercentDecode(pair.substr(eq + 1), true));
      }
      (*query)[key] = value;
    }
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return OkStatus();
}

AdminResponse JsonResponse(int status, std::string body) {
  AdminResponse response;
  response.status = status;
  response.body = std::move(body);
  if (response.body.empty() || response.body.back() != '\n') response.body.push_back('\n');
  return response;
}

AdminResponse ErrorResponse(int status, std::string_view message) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("error");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  w.Key("reason");
  std::string_view reason = ReasonFor(status);
  w.String(reason.data(), static_cast<rapidjson::SizeType>(reason.size()));
  w.Key("code");
  w.Int(status);
  w.EndObject();
  return JsonResponse(status, std::string(buffer.GetString(), buffer.GetSize()));
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 422;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kFailedPrecondition:
      return 412;
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kResourceExhausted:
      return 413;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string_view ReasonFor(int status) {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 412:
      return "PreconditionFailed";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 431:
      return "RequestHeaderFieldsTooLarge";
    case 501:
      return "NotImplemented";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return status >= 500 ? "InternalError" : "BadRequest";
  }
}

AdminResponse ErrorFor(const Status& status) {
  return ErrorResponse(HttpStatusFor(status.code()), status.message());
}

}  // namespace portico::core::admin
