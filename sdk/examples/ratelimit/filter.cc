// filter.cc: see filter.h.
#include "filter.h"

#include <optional>
#include <string>
#include <utility>

#include "bucket_table.h"
#include "portico/sdk/fields.h"
#include "portico/sdk/json.h"

namespace example::ratelimit {
namespace {

namespace json = portico::json;
namespace sdk = portico::sdk;

enum class KeyType { kRoute, kClientAddress, kHeader };

// Seconds rounds milliseconds up to whole seconds (a header never promises earlier than true).
int64_t Seconds(int64_t ms) { return (ms + 999) / 1000; }

// DecisionState carries a request's decision to its response hook.
struct DecisionState final : sdk::RequestState {
  std::optional<Decision> decision;
};

class RateLimitFilter final : public sdk::Filter {
 public:
  RateLimitFilter(std::string name, int64_t requests, int64_t interval_ms, KeyType key,
                  std::string header)
      : buckets_(requests, interval_ms),
        key_(key),
        header_(std::move(header)),
        quoted_name_("\"" + name + "\""),
        policy_field_(quoted_name_ + ";q=" + std::to_string(requests) +
                      ";w=" + std::to_string(Seconds(interval_ms))) {}

  std::unique_ptr<sdk::RequestState> NewState() override {
    return std::make_unique<DecisionState>();
  }

  portico_filter_status OnRequest(const sdk::HttpView& request,
                                  const sdk::FilterHost& host) override {
    const Decision d = buckets_.Take(Key(request), host.NowMonotonicMs());
    if (auto* state = host.State<DecisionState>()) state->decision = d;
    if (d.allowed) return PORTICO_FILTER_CONTINUE;
    request.Respond(429, "rate limit exceeded\n");
    request.ReplyHeader("Retry-After", std::to_string(Seconds(d.retry_after_ms)));
    request.ReplyHeader("RateLimit-Policy", policy_field_);
    request.ReplyHeader("RateLimit", RateLimitField(d));
    return PORTICO_FILTER_RESPOND;
  }

  portico_filter_status OnResponse(const sdk::HttpView& response,
                                   const sdk::FilterHost& host) override {
    auto* state = host.State<DecisionState>();
    if (state == nullptr || !state->decision || !state->decision->allowed) {
      return PORTICO_FILTER_CONTINUE;
    }
    response.SetHeader("RateLimit-Policy", policy_field_);
    response.SetHeader("RateLimit", RateLimitField(*state->decision));
    return PORTICO_FILTER_CONTINUE;
  }

 private:
  std::string_view Key(const sdk::HttpView& request) const {
    switch (key_) {
      case KeyType::kClientAddress:
        return request.ClientAddress();
      case KeyType::kHeader:
        return request.Header(header_).value_or("");
      case KeyType::kRoute:
        break;
    }
    return request.Route();
  }

  std::string RateLimitField(const Decision& d) const {
    return quoted_name_ + ";r=" + std::to_string(d.remaining) +
           ";t=" + std::to_string(Seconds(d.reset_ms));
  }

  BucketTable buckets_;
  const KeyType key_;
  const std::string header_;
  const std::string quoted_name_;  // an sf-string: Kubernetes names need no escaping
  const std::string policy_field_;
};

}  // namespace

portico::StatusOr<std::unique_ptr<sdk::Filter>> CreateRateLimitFilter(std::string_view config) {
  PORTICO_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(config, "RateLimitPolicy config"));
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  auto member = [&](const char* key) -> const rapidjson::Value& {
    const rapidjson::Value* v = json::Find(doc, key);
    return v != nullptr && v->IsObject() ? *v : kEmpty;
  };
  PORTICO_ASSIGN_OR_RETURN(std::string name,
                           sdk::RequiredString(member("metadata"), "name", "metadata"));
  std::optional<int64_t> requests = json::GetInt(doc, "limit.requests");
  std::optional<int64_t> interval = json::GetInt(doc, "limit.intervalMs");
  if (!requests || *requests < 1) return sdk::FieldError("limit.requests", "must be >= 1");
  if (!interval || *interval < 1) return sdk::FieldError("limit.intervalMs", "must be >= 1");
  const std::string type = json::GetString(doc, "key.type", "Route");
  std::string header;
  KeyType key = KeyType::kRoute;
  if (type == "ClientAddress") {
    key = KeyType::kClientAddress;
  } else if (type == "Header") {
    key = KeyType::kHeader;
    PORTICO_ASSIGN_OR_RETURN(header, sdk::RequiredString(member("key"), "header", "key"));
  } else if (type != "Route") {
    return sdk::FieldError("key.type", "unknown key type \"" + type + "\"");
  }
  return std::unique_ptr<sdk::Filter>(
      new RateLimitFilter(std::move(name), *requests, *interval, key, std::move(header)));
}

}  // namespace example::ratelimit
