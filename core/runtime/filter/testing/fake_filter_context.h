// fake_filter_context.h: FakeFilterContext, an in-memory FilterContext for testing filters and
// the filter chain without a gateway: the request and response as plain fields, what Respond,
// Mirror and HttpCall were asked, and bindings a test registers. Test-only.
//
// Threading: one test thread. Ownership: borrows the bound filters; owns everything else.
#ifndef PORTICO_CORE_RUNTIME_FILTER_TESTING_FAKE_FILTER_CONTEXT_H_
#define PORTICO_CORE_RUNTIME_FILTER_TESTING_FAKE_FILTER_CONTEXT_H_

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/filter/http_filter.h"

namespace portico::core::filter::testing {

class FakeFilterContext final : public FilterContext {
 public:
  using Fields = std::vector<std::pair<std::string, std::string>>;

  std::string method_ = "GET", path_ = "/", query_, host_ = "example.com", upstream_host_;
  std::string client_ = "192.0.2.1", prefix_, route_ = "default/r", rule_;
  std::string scheme_ = "http";
  uint16_t port_ = 80;
  int status_ = 0;
  Fields request, response;
  // Respond.
  bool responded = false;
  int reply_status = 0;
  std::string reply_body, reply_reason;
  Fields reply_headers;
  std::vector<std::string> mirrors;
  // HttpCall: what was asked, and the completion to run (nullptr: none in flight).
  std::vector<OutboundRequest> calls;
  CallDone* pending = nullptr;
  bool refuse_calls = false;
  std::map<std::string, const HttpFilter*, std::less<>> bindings;
  std::vector<std::string> logs;

  std::string_view method() const override { return method_; }
  std::string_view path() const override { return path_; }
  std::string_view query() const override { return query_; }
  std::string_view host() const override { return host_; }
  std::string_view scheme() const override { return scheme_; }
  uint16_t listener_port() const override { return port_; }
  std::string_view client_address() const override { return client_; }
  std::string_view matched_prefix() const override { return prefix_; }
  std::string_view route_key() const override { return route_; }
  std::string_view rule_name() const override { return rule_; }
  int response_status() const override { return status_; }
  void SetPath(std::string_view path) override { path_.assign(path); }
  void SetUpstreamHost(std::string_view host) override { upstream_host_.assign(host); }
  size_t HeaderCount(Side side) const override { return Of(side).size(); }
  std::pair<std::string_view, std::string_view> HeaderAt(Side side, size_t i) const override {
    return Of(side)[i];
  }
  std::optional<std::string_view> Header(Side side, std::string_view name,
                                         size_t n) const override {
    for (const auto& [k, v] : Of(side)) {
      if (Same(k, name) && n-- == 0) return v;
    }
    return std::nullopt;
  }
  void SetHeader(Side side, std::string_view name, std::string_view value, bool) override {
    RemoveHeader(side, name);
    Of(side).emplace_back(std::string(name), std::string(value));
  }
  void AddHeader(Side side, std::string_view name, std::string_view value, bool) override {
    Of(side).emplace_back(std::string(name), std::string(value));
  }
  void RemoveHeader(Side side, std::string_view name) override {
    std::erase_if(Of(side), [&](const auto& kv) { return Same(kv.first, name); });
  }
  void Respond(int status, std::string_view body, const Fields& headers,
               std::string_view reason) override {
    responded = true;
    reply_status = status;
    reply_body.assign(body);
    reply_headers = headers;
    reply_reason.assign(reason);
  }
  void Mirror(const std::string& key) override { mirrors.push_back(key); }
  bool Roll(double percent) override { return percent >= 100; }
  bool HttpCall(OutboundRequest call, CallDone* done) override {
    if (refuse_calls || pending != nullptr) return false;
    calls.push_back(std::move(call));
    pending = done;
    return true;
  }
  const HttpFilter* FindBinding(std::string_view id) const override {
    auto it = bindings.find(id);
    return it == bindings.end() ? nullptr : it->second;
  }
  void Log(int level, std::string_view message) override { logs.emplace_back(message); }

  // Complete finishes the call in flight with `response` and returns the completion's result.
  FilterResult Complete(const OutboundResponse& response) {
    CallDone* done = pending;
    pending = nullptr;
    return done->OnCallDone(response);
  }

 private:
  static bool Same(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return (x | 0x20) == (y | 0x20);
           });
  }
  Fields& Of(Side side) { return side == Side::kRequest ? request : response; }
  const Fields& Of(Side side) const { return side == Side::kRequest ? request : response; }
};

}  // namespace portico::core::filter::testing

#endif  // PORTICO_CORE_RUNTIME_FILTER_TESTING_FAKE_FILTER_CONTEXT_H_
