// fake_http.h: FakeHttpExchange, an in-memory request/response for running a plugin's filter
// hooks under test, and the portico_http_view adapter over it. Part of the SDK's testing
// package; header-only, std only.
//
// Ownership: FakeHttpView borrows a FakeHttpExchange, which must outlive it. Not thread-safe: one
// exchange is used by one test thread.
#ifndef PORTICO_SDK_TESTING_FAKE_HTTP_H_
#define PORTICO_SDK_TESTING_FAKE_HTTP_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portico/sdk/abi.h"
#include "portico/sdk/types.h"

namespace portico::sdk::testing {

// FakeHttpExchange is the request (or, with `status` set, the response) a filter sees, plus the
// local response the filter produced, if any.
struct FakeHttpExchange {
  std::string method = "GET";
  std::string path = "/";
  std::string authority = "example.com";
  std::string query;  // without '?'; query_param reads it (exact names, no decoding)
  std::string client_address = "192.0.2.1";
  std::string route = "default/route";
  std::string rule_name;
  int status = 0;  // response status; 0 on the request side
  std::vector<std::pair<std::string, std::string>> headers;

  bool responded = false;  // set when the filter called respond()
  int respond_status = 0;
  std::string respond_body;
  std::vector<std::pair<std::string, std::string>> reply_headers;  // reply_header() calls

  // Header returns the first value of `name` (case-insensitive), or nullptr.
  const std::string* Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (EqualsIgnoreCase(n, name)) return &v;
    }
    return nullptr;
  }

  static bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
      char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
      if (x != y) return false;
    }
    return true;
  }
};

// FakeHttpView exposes a FakeHttpExchange through the ABI's portico_http_view.
class FakeHttpView {
 public:
  explicit FakeHttpView(FakeHttpExchange* exchange) : exchange_(exchange) {
    view_.struct_size = sizeof(portico_http_view);
    view_.host = exchange_;
    view_.method = [](void* h) { return Str(Ex(h)->method); };
    view_.path = [](void* h) { return Str(Ex(h)->path); };
    view_.authority = [](void* h) { return Str(Ex(h)->authority); };
    view_.status = [](void* h) { return Ex(h)->status; };
    view_.header = [](void* h, portico_str name, size_t n, portico_str* value) -> int {
      for (const auto& [k, v] : Ex(h)->headers) {
        if (!FakeHttpExchange::EqualsIgnoreCase(k, View(name))) continue;
        if (n-- == 0) {
          *value = Str(v);
          return 1;
        }
      }
      return 0;
    };
    view_.set_header = [](void* h, portico_str name, portico_str value) {
      RemoveAll(Ex(h), View(name));
      Ex(h)->headers.emplace_back(std::string(View(name)), std::string(View(value)));
    };
    view_.add_header = [](void* h, portico_str name, portico_str value) {
      Ex(h)->headers.emplace_back(std::string(View(name)), std::string(View(value)));
    };
    view_.remove_header = [](void* h, portico_str name) { RemoveAll(Ex(h), View(name)); };
    view_.set_path = [](void* h, portico_str path) { Ex(h)->path = std::string(View(path)); };
    view_.set_authority = [](void* h, portico_str a) { Ex(h)->authority = std::string(View(a)); };
    view_.respond = [](void* h, int status, portico_str body) {
      Ex(h)->responded = true;
      Ex(h)->respond_status = status;
      Ex(h)->respond_body = std::string(View(body));
    };
    view_.header_count = [](void* h) { return Ex(h)->headers.size(); };
    view_.header_at = [](void* h, size_t i, portico_str* name, portico_str* value) -> int {
      if (i >= Ex(h)->headers.size()) return 0;
      *name = Str(Ex(h)->headers[i].first);
      *value = Str(Ex(h)->headers[i].second);
      return 1;
    };
    view_.query = [](void* h) { return Str(Ex(h)->query); };
    view_.query_param = [](void* h, portico_str name, size_t n, portico_str* value) -> int {
      std::string_view rest = Ex(h)->query;
      while (!rest.empty()) {
        size_t amp = rest.find('&');
        std::string_view pair = rest.substr(0, amp);
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
        size_t eq = pair.find('=');
        if (pair.substr(0, eq) != View(name) || n-- > 0) continue;
        *value = Str(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
        return 1;
      }
      return 0;
    };
    view_.client_address = [](void* h) { return Str(Ex(h)->client_address); };
    view_.route = [](void* h) { return Str(Ex(h)->route); };
    view_.rule_name = [](void* h) { return Str(Ex(h)->rule_name); };
    view_.reply_header = [](void* h, portico_str name, portico_str value) {
      Ex(h)->reply_headers.emplace_back(std::string(View(name)), std::string(View(value)));
    };
  }
  FakeHttpView(const FakeHttpView&) = delete;
  FakeHttpView& operator=(const FakeHttpView&) = delete;

  const portico_http_view* view() const { return &view_; }

 private:
  static FakeHttpExchange* Ex(void* host) { return static_cast<FakeHttpExchange*>(host); }
  static void RemoveAll(FakeHttpExchange* ex, std::string_view name) {
    std::erase_if(ex->headers, [&](const auto& kv) {
      return FakeHttpExchange::EqualsIgnoreCase(kv.first, name);
    });
  }

  FakeHttpExchange* exchange_;
  portico_http_view view_{};
};

}  // namespace portico::sdk::testing

#endif  // PORTICO_SDK_TESTING_FAKE_HTTP_H_
