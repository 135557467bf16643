// fake_filter.h: FakeFilter, one instance of a plugin's filter type as the fake host runs it
// (FakeHost::CreateFilter), kept across requests as a gateway keeps it for as long as a
// configuration uses it, so state such as a rate limiter's buckets carries over from one Run to
// the next. Its hooks get a portico_filter_host whose monotonic clock is the FakeHost's fake
// clock (SetNowUnixMs, AdvanceMs) and whose outbound calls the FakeHost's responder answers.
// Part of the SDK's testing package; header-only, std + SDK headers.
//
// Threading and ownership: not thread-safe, one test thread. A FakeFilter owns its instance
// (destroyed with it) and borrows its FakeHost's responder, clock and log (FakeFilterEnv), so the
// FakeHost must outlive it.
#ifndef PORTICO_SDK_TESTING_FAKE_FILTER_H_
#define PORTICO_SDK_TESTING_FAKE_FILTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"
#include "portico/sdk/testing/fake_http.h"
#include "portico/sdk/testing/plugin_library.h"
#include "portico/sdk/types.h"

namespace portico::sdk::testing {

// FakeHttpResponse is what a test's responder answers to a filter's outbound call.
struct FakeHttpResponse {
  int status = 200;  // 0: the call failed (reason in body)
  std::string headers;
  std::string body;
};

// FilterOutcome is the result of running one filter hook (and its outbound calls, if any).
struct FilterOutcome {
  Status status;  // create() failure
  portico_filter_status result = PORTICO_FILTER_CONTINUE;
  FakeHttpExchange exchange;       // the exchange after the hooks
  FakeHttpExchange response;       // Run's `response` after the response hook
  std::vector<std::string> calls;  // "METHOD url" of each outbound call
  std::vector<std::string> logs;
};

// FakeFilterEnv is what a FakeFilter borrows from its FakeHost.
struct FakeFilterEnv {
  const std::function<FakeHttpResponse(const portico_http_call&)>* responder;
  const int64_t* now_ms;           // the fake clock
  std::vector<std::string>* logs;  // the host's log of every call
};

class FakeFilter {
 public:
  // Takes ownership of `instance`, which `type`'s create() made.
  FakeFilter(FakeFilterEnv env, const RegisteredFilterType* type, void* instance)
      : env_(env), type_(type), instance_(instance) {}
  FakeFilter(const FakeFilter&) = delete;
  FakeFilter& operator=(const FakeFilter&) = delete;
  ~FakeFilter() {
    if (type_->destroy != nullptr) type_->destroy(type_->user, instance_);
  }

  // Run runs one request through the instance: its request hook (or its response hook when
  // `exchange.status` != 0), outbound calls completed through the responder; with `response`,
  // a request that went on (continue) then has its response hook run on `response`, with the
  // same request state (ABI 1.2), as the gateway would.
  FilterOutcome Run(FakeHttpExchange exchange,
                    std::optional<FakeHttpExchange> response = std::nullopt) {
    FilterOutcome out;
    out.exchange = std::move(exchange);
    const RegisteredFilterType* f = type_;
    Call call{this, &out, {}};
    void* state = f->request_create != nullptr ? f->request_create(instance_) : nullptr;
    portico_filter_host fh{sizeof(portico_filter_host), &call, &OnHttpCall, &OnLog, state, &OnNow};
    FakeHttpView view(&out.exchange);
    bool response_side = out.exchange.status != 0;
    auto hook = response_side ? f->on_response : f->on_request;
    out.result = hook != nullptr ? hook(instance_, view.view(), &fh) : PORTICO_FILTER_CONTINUE;
    while (out.result == PORTICO_FILTER_PENDING && !call.pending.empty()) {
      Pending pending = std::move(call.pending.front());
      call.pending.erase(call.pending.begin());
      FakeHttpResponse answer = pending.response;
      out.result = pending.done(pending.cookie, answer.status, Str(answer.headers),
                                Str(answer.body), view.view());
    }
    // A call still pending (no responder answer left) is cancelled, as a gateway would.
    for (Pending& pending : call.pending) {
      if (f->cancel != nullptr) f->cancel(instance_, state, pending.cookie);
    }
    if (response && out.result == PORTICO_FILTER_CONTINUE && !response_side &&
        f->on_response != nullptr) {
      out.response = std::move(*response);
      FakeHttpView response_view(&out.response);
      f->on_response(instance_, response_view.view(), &fh);
    }
    if (f->request_destroy != nullptr) f->request_destroy(instance_, state);
    return out;
  }

 private:
  struct Pending {
    portico_http_done_fn done;
    void* cookie;
    FakeHttpResponse response;
  };
  // Call is the host pointer of one Run's portico_filter_host.
  struct Call {
    FakeFilter* self;
    FilterOutcome* out;
    std::vector<Pending> pending;
  };

  static portico_code OnHttpCall(void* host, const portico_http_call* c, portico_http_done_fn done,
                                 void* cookie) {
    auto* call = static_cast<Call*>(host);
    call->out->calls.push_back(std::string(View(c->method)) + " " + std::string(View(c->url)));
    FakeHttpResponse response{0, "", "no responder set in the fake host"};
    const auto& responder = *call->self->env_.responder;
    if (responder) response = responder(*c);
    call->pending.push_back(Pending{done, cookie, std::move(response)});
    return PORTICO_OK;
  }
  static void OnLog(void* host, portico_log_level level, portico_str message) {
    auto* call = static_cast<Call*>(host);
    std::string line = std::string(detail::LevelName(level)) + " " + std::string(View(message));
    call->out->logs.push_back(line);
    call->self->env_.logs->push_back(std::move(line));
  }
  static int64_t OnNow(void* host) { return *static_cast<Call*>(host)->self->env_.now_ms; }

  FakeFilterEnv env_;
  const RegisteredFilterType* type_;
  void* instance_;
};

}  // namespace portico::sdk::testing

#endif  // PORTICO_SDK_TESTING_FAKE_FILTER_H_
