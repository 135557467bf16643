// exchange_filters.cc: ClientConnection as the FilterContext of its exchange (see
// client_connection.h and core/runtime/filter/http_filter.h): what filters read and change of the
// request and the response, local replies, mirrors and outbound calls.
#include <arpa/inet.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "core/runtime/filter/filter_bindings.h"
#include "gateway/server/client_connection.h"
#include "gateway/server/data_plane.h"
#include "gateway/server/worker.h"

namespace portico::gateway::server {

namespace {

using core::filter::Side;
using http::HeaderField;

// ValidField: a name of token characters and a value without CR, LF or NUL (what a filter sets
// is written into a head as is: no header injection).
bool ValidField(std::string_view name, std::string_view value) {
  if (!http::IsToken(name)) return false;
  for (char c : value) {
    if (!http::IsFieldValueChar(c)) return false;
  }
  return true;
}

void RemoveNamed(std::vector<HeaderField>* fields, std::string_view name) {
  fields->erase(
      std::remove_if(fields->begin(), fields->end(),
                     [name](const HeaderField& f) { return http::EqualsIgnoreCase(f.name, name); }),
      fields->end());
}

}  // namespace

std::string_view ClientConnection::matched_prefix() const {
  return action_ != nullptr ? std::string_view(action_->matched_prefix) : std::string_view();
}

std::string_view ClientConnection::route_key() const {
  return action_ != nullptr ? std::string_view(action_->route_key) : std::string_view();
}

std::string_view ClientConnection::rule_name() const {
  return action_ != nullptr ? std::string_view(action_->rule_name) : std::string_view();
}

void ClientConnection::SetPath(std::string_view path) {
  if (path.empty() || path.front() != '/') {
    scratch_.assign("/");
    scratch_.append(path);
    path_.swap(scratch_);
  } else {
    path_.assign(path);
  }
}

void ClientConnection::SetUpstreamHost(std::string_view host) { upstream_host_.assign(host); }

std::string_view ClientConnection::Keep(std::string_view bytes, bool stable) {
  if (stable) return bytes;
  return strings_.emplace_back(bytes);
}

std::vector<HeaderField>* ClientConnection::EditableHeaders(Side side) {
  if (side == Side::kResponse) return resp_headers_open_ ? &resp_headers_ : nullptr;
  if (head_consumed_) return nullptr;  // the request went upstream: too late
  if (!req_headers_edited_) {
    const http::HeaderList& fields = parser_.head().headers;
    req_headers_.assign(fields.begin(), fields.end());
    req_headers_edited_ = true;
  }
  return &req_headers_;
}

size_t ClientConnection::HeaderCount(Side side) const {
  if (side == Side::kResponse) return resp_headers_open_ ? resp_headers_.size() : 0;
  if (head_consumed_) return 0;
  return req_headers_edited_ ? req_headers_.size() : parser_.head().headers.span().size();
}

std::pair<std::string_view, std::string_view> ClientConnection::HeaderAt(Side side,
                                                                         size_t i) const {
  if (i >= HeaderCount(side)) return {};
  const HeaderField& f = side == Side::kResponse ? resp_headers_[i]
                         : req_headers_edited_   ? req_headers_[i]
                                                 : parser_.head().headers.span()[i];
  return {f.name, f.value};
}

std::optional<std::string_view> ClientConnection::Header(Side side, std::string_view name,
                                                         size_t n) const {
  const size_t count = HeaderCount(side);
  for (size_t i = 0; i < count; ++i) {
    auto [field_name, value] = HeaderAt(side, i);
    if (http::EqualsIgnoreCase(field_name, name) && n-- == 0) return value;
  }
  return std::nullopt;
}

void ClientConnection::SetHeader(Side side, std::string_view name, std::string_view value,
                                 bool stable) {
  std::vector<HeaderField>* fields = EditableHeaders(side);
  if (fields == nullptr) return;
  if (!ValidField(name, value)) {
    Log(2, "a filter set an invalid header field; ignored");
    return;
  }
  RemoveNamed(fields, name);
  fields->push_back({Keep(name, stable), Keep(value, stable)});
}

void ClientConnection::AddHeader(Side side, std::string_view name, std::string_view value,
                                 bool stable) {
  std::vector<HeaderField>* fields = EditableHeaders(side);
  if (fields == nullptr) return;
  if (!ValidField(name, value)) {
    Log(2, "a filter added an invalid header field; ignored");
    return;
  }
  fields->push_back({Keep(name, stable), Keep(value, stable)});
}

void ClientConnection::RemoveHeader(Side side, std::string_view name) {
  if (std::vector<HeaderField>* fields = EditableHeaders(side)) RemoveNamed(fields, name);
}

void ClientConnection::Respond(int status, std::string_view body,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               std::string_view reason) {
  reply_headers_.clear();
  for (const auto& [name, value] : headers) {
    if (!ValidField(name, value) || http::IsHopByHopHeader(name) ||
        http::EqualsIgnoreCase(name, "content-length")) {
      continue;  // framing is the gateway's
    }
    reply_headers_.push_back({Keep(name, false), Keep(value, false)});
  }
  if (status < 200 || status > 599) status = 500;
  CancelCall();
  RespondLocal(status, reason, Keep(body, false), reply_headers_, /*exact=*/true);
}

void ClientConnection::Mirror(const std::string& backend_key) {
  mirror_keys_.push_back(&backend_key);
}

bool ClientConnection::Roll(double percent) { return worker_->Roll(percent); }

bool ClientConnection::HttpCall(core::filter::OutboundRequest request,
                                core::filter::CallDone* done) {
  if (call_ != nullptr || done == nullptr) return false;
  sockaddr_storage address{};
  socklen_t length = 0;
  std::string host = request.host;
  std::shared_ptr<const core::tls::UpstreamTls> tls;  // the target backend's BackendTLSPolicy
  if (!request.backend_key.empty()) {
    const core::routing::Backend* backend = pin_->snapshot->backends->Find(request.backend_key);
    if (backend == nullptr || backend->endpoints.empty()) return false;
    if (const auto* found =
            pin_->snapshot->upstream_tls->Find(*backend, listener_address_, listener_port_)) {
      tls = *found;
    }
    upstream::EndpointPool* endpoint = worker_->PickEndpoint(*backend, request.backend_key);
    if (endpoint == nullptr) return false;
    address = endpoint->address();
    length = endpoint->address_length();
    if (host.empty()) host = endpoint->name();
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    if (inet_pton(AF_INET, request.address.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(request.port);
      length = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, request.address.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(request.port);
      length = sizeof(sockaddr_in6);
    } else {
      Log(2, "http_call: the target must be an IP address or a backend");
      return false;
    }
    if (host.empty()) host = request.address + ":" + std::to_string(request.port);
  }
  std::string bytes;
  bytes.reserve(256 + request.body.size());
  bytes.append(request.method).append(" ").append(request.target).append(" HTTP/1.1\r\n");
  bytes.append("Host: ").append(host).append("\r\n");
  for (const auto& [name, value] : request.headers) {
    if (!ValidField(name, value) || http::IsHopByHopHeader(name) ||
        http::EqualsIgnoreCase(name, "host") || http::EqualsIgnoreCase(name, "content-length")) {
      continue;
    }
    bytes.append(name).append(": ").append(value).append("\r\n");
  }
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
      request.method == "PATCH") {
    bytes.append("Content-Length: ").append(std::to_string(request.body.size())).append("\r\n");
  }
  bytes.append("\r\n").append(request.body);
  call_ = worker_->http_client().Start(upstream::HttpClient::Purpose::kFilter, address, length,
                                       std::move(bytes), request.timeout_ms, this, std::move(tls));
  if (call_ == nullptr) return false;
  call_done_ = done;
  // The client's own timeout ends the call first; this one is the exchange's safety net.
  call_deadline_ = worker_->loop().now_ms() + request.timeout_ms + 1000;
  return true;
}

const core::filter::HttpFilter* ClientConnection::FindBinding(std::string_view id) const {
  return pin_ != nullptr && pin_->snapshot->bindings != nullptr ? pin_->snapshot->bindings->Find(id)
                                                                : nullptr;
}

void ClientConnection::Log(int level, std::string_view message) {
  const auto spd = level >= 3   ? spdlog::level::err
                   : level == 2 ? spdlog::level::warn
                   : level == 1 ? spdlog::level::info
                                : spdlog::level::debug;
  spdlog::log(spd, "filter on route {} rule {}: {}", route_key(), rule_name(), message);
}

}  // namespace portico::gateway::server
