#include "controller/ctl/server_call.h"

#include "core/admin/admin_auth.h"
#include "core/common/percent_encoding.h"

#include "controller/ctl/http_client.h"

namespace portico::ctl {
namespace {

StatusCode CodeFor(int http_status) {
  switch (http_status) {
    case 400:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 409:
      return StatusCode::kAlreadyExists;
    case 412:
      return StatusCode::kFailedPrecondition;
    case 413:
      return StatusCode::kResourceExhausted;
    case 422:
      return StatusCode::kInvalidArgument;
    case 501:
      return StatusCode::kUnimplemented;
    case 503:
      return StatusCode::kUnavailable;
    case 504:
      return StatusCode::kDeadlineExceeded;
    default:
      return http_status >= 500 ? StatusCode::kInternal : StatusCode::kUnknown;
  }
}

}  // namespace

void AddServerOption(CLI::App& app, ServerOptions* options) {
  app.add_option("-s,--server", options->server, "Admin API of the controller (http://HOST:PORT)")
      ->envname("PORTICO_SERVER")
      ->capture_default_str();
  app.add_option("--token-file", options->token_file,
                 "File holding the admin API's bearer token (mode 0600)")
      ->envname("PORTICO_ADMIN_TOKEN_FILE");
}

StatusOr<rapidjson::Document> CallServer(const ServerOptions& options, std::string_view method,
                                         std::string_view target, std::string_view body,
                                         std::string_view content_type) {
  PORTICO_ASSIGN_OR_RETURN(HttpClient client, HttpClient::Create(options.server));
  if (!options.token_file.empty()) {
    PORTICO_ASSIGN_OR_RETURN(std::string token,
                             core::admin::LoadAdminToken(options.token_file, "--token-file"));
    client.set_bearer_token(std::move(token));
  }
  PORTICO_ASSIGN_OR_RETURN(HttpResponse response, client.Do(method, target, body, content_type));
  StatusOr<rapidjson::Document> doc = json::Parse(response.body, "answer of " + client.Server());
  if (response.status >= 200 && response.status < 300) return doc;
  std::string reason = "Status " + std::to_string(response.status);
  std::string message = response.body;
  if (doc.ok()) {
    std::string r = json::GetString(*doc, "reason");
    if (!r.empty()) reason = r;
    std::string m = json::GetString(*doc, "error");
    if (!m.empty()) message = m;
  }
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return Status(CodeFor(response.status), "Error from server (" + reason + "): " + message);
}

std::string ObjectsPath(std::string_view kind, std::string_view name, std::string_view ns) {
  std::string path = "/api/v1/objects/" + core::PercentEncode(kind);
  if (!name.empty()) path += "/" + core::PercentEncode(name);
  if (!ns.empty()) path += "?namespace=" + core::PercentEncode(ns);
  return path;
}

}  // namespace portico::ctl
