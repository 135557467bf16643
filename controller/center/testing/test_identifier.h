// test_identifier.h: TestIdentifier, the ObjectIdentifier the center tests use instead of the
// reconciler's: the group from apiVersion; Namespace and GatewayClass cluster-scoped, every other
// kind in metadata.namespace or "default"; kind "Unknown" rejected.
//
// Thread-safety: a pure function.
#ifndef PORTICO_CONTROLLER_CENTER_TESTING_TEST_IDENTIFIER_H_
#define PORTICO_CONTROLLER_CENTER_TESTING_TEST_IDENTIFIER_H_

#include <string>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller::testing {

inline StatusOr<sdk::ObjectRef> TestIdentifier(const rapidjson::Value& doc) {
  std::string api = json::GetString(doc, "apiVersion");
  std::string kind = json::GetString(doc, "kind");
  if (kind == "Unknown") return InvalidArgumentError("unknown kind \"Unknown\"");
  size_t slash = api.find('/');
  sdk::ObjectRef ref;
  ref.group = slash == std::string::npos ? "" : api.substr(0, slash);
  ref.kind = kind;
  ref.name = json::GetString(doc, "metadata.name");
  if (kind != "Namespace" && kind != "GatewayClass") {
    ref.ns = json::GetString(doc, "metadata.namespace", "default");
  }
  return ref;
}

}  // namespace portico::controller::testing

#endif  // PORTICO_CONTROLLER_CENTER_TESTING_TEST_IDENTIFIER_H_
