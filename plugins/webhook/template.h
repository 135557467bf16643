// template.h: Template, a Webhook request template ("/check/{path}", "Bearer {header.x-token}",
// "{\"user\":\"{query.user}\"}") parsed once: literal text and variables in braces, "{{" and
// "}}" for literal braces. Variables: method, path (without the query), query (raw), host,
// client_ip, route ("namespace/name"), rule (its name), header.NAME and query.NAME (the first
// value of a request header or query parameter; the only ones that can be absent).
//
// Parse fails naming the field and the offending variable, so a bad template is refused when the
// Webhook is applied (the controller runs the same parser as the gateway). Render fills a
// template from a request through RequestValues; an absent value follows the Missing policy.
//
// Threading: a Template is immutable once parsed; Render is safe from any thread.
#ifndef PORTICO_PLUGINS_WEBHOOK_TEMPLATE_H_
#define PORTICO_PLUGINS_WEBHOOK_TEMPLATE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::plugins::webhook {

// Missing says what an absent header.NAME / query.NAME value does: the templated item is left
// out (kOmit: a header is not sent, a path or body gets nothing in its place), rendered empty
// (kEmpty), or the request fails (kFail).
enum class Missing { kOmit, kEmpty, kFail };

// RequestValues looks a variable up ("method", "header.x-token", ...): nullopt when absent.
using RequestValues = std::function<std::optional<std::string>(std::string_view variable)>;

class Template {
 public:
  static StatusOr<Template> Parse(std::string_view text, const std::string& field);

  // Render appends the filled template to `out`, an absent value contributing nothing. Returns
  // false when a value was absent and the policy is kOmit (a header is then left out; a path or
  // body keeps what was rendered) or kFail (rendering stops; the caller fails the request).
  // `escape`, when set, is applied to every substituted value (percent-encoding in a path).
  bool Render(const RequestValues& values, Missing missing, std::string* out,
              std::string (*escape)(std::string_view) = nullptr) const;

  bool has_variables() const;
  const std::string& source() const { return source_; }

 private:
  struct Piece {
    bool variable = false;
    std::string text;  // literal text, or the variable's name
  };
  std::string source_;
  std::vector<Piece> pieces_;
};

// PathEscape percent-encodes what is not an unreserved character or '/' (a value put into a
// path).
std::string PathEscape(std::string_view value);

}  // namespace portico::plugins::webhook

#endif  // PORTICO_PLUGINS_WEBHOOK_TEMPLATE_H_
