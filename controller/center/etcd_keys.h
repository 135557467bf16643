// etcd_keys.h: how Portico's resources are laid out in etcd (the etcd config center, ctl import
// and export share it).
//
//   key   = <prefix>/<group>/<kind>/<namespace>/<name>
//           group "core" for the core group (Secret, Service, Namespace...); namespace "_" for
//           cluster-scoped kinds (GatewayClass, Namespace), which no namespace name can be
//           ("_" is not a DNS label). e.g. /portico/gateway.networking.k8s.io/HTTPRoute/default/web
//   value = the object as one YAML or JSON document (writers store compact JSON), without
//           metadata.resourceVersion (that is the key's mod revision, added when read).
//
// A value must hold exactly one document whose identity is the key's; anything else is a
// ConfigError naming the key.
//
// Reserved keys: <prefix>/_<name>... belong to the controllers, not to resources (no API group
// starts with '_'): <prefix>/_leader (the leader election, etcd_leader_election.h) and
// <prefix>/_status/<group>/<kind>/<namespace>/<name> (objects' status written by the leader,
// etcd_status_writer.h). The center and export skip them.
//
// Thread-safety: pure functions (`identifier` must be thread-safe).
#ifndef PORTICO_CONTROLLER_CENTER_ETCD_KEYS_H_
#define PORTICO_CONTROLLER_CENTER_ETCD_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "controller/center/config_center.h"
#include "controller/center/file_documents.h"
#include "controller/center/yaml_to_json.h"
#include "portico/sdk/json.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

inline constexpr std::string_view kEtcdCoreGroup = "core";
inline constexpr std::string_view kEtcdClusterScope = "_";

// EtcdKey is `ref`'s key below `prefix` (given with or without a trailing '/').
std::string EtcdKey(std::string_view prefix, const sdk::ObjectRef& ref);
// EtcdPrefixDir is `prefix` with exactly one trailing '/': the range every key lies in.
std::string EtcdPrefixDir(std::string_view prefix);

// EtcdReservedKey tells whether `key` (below `prefix`) is a controllers' key, not a resource.
bool EtcdReservedKey(std::string_view prefix, std::string_view key);
// EtcdLeaderKey: <prefix>/_leader.
std::string EtcdLeaderKey(std::string_view prefix);
// EtcdStatusPrefix: <prefix>/_status/ ; EtcdStatusKey: where `ref`'s status is written.
std::string EtcdStatusPrefix(std::string_view prefix);
std::string EtcdStatusKey(std::string_view prefix, const sdk::ObjectRef& ref);

// EtcdKeyRef is the identity a key names (the reverse of EtcdKey); INVALID_ARGUMENT when the
// key is not <prefix>/<group>/<kind>/<namespace>/<name>.
StatusOr<sdk::ObjectRef> EtcdKeyRef(std::string_view prefix, std::string_view key);

// ParseEtcdValue reads the value of `key`: one document, a valid identity equal to the key's.
// Errors name the key: "etcd key /portico/...: document has no metadata.name".
StatusOr<ParsedDocument> ParseEtcdValue(std::string_view prefix, const std::string& key,
                                        std::string_view value, const ObjectIdentifier& identifier,
                                        const YamlLimits& limits);

// EtcdStoredValue is what writers store for `doc`: compact JSON without
// metadata.resourceVersion.
std::string EtcdStoredValue(const rapidjson::Value& doc);

// ResourceVersionOf reads metadata.resourceVersion (a decimal string, or a number): nullopt when
// absent; INVALID_ARGUMENT naming `what` when it is not a revision.
StatusOr<std::optional<int64_t>> ResourceVersionOf(const rapidjson::Value& doc,
                                                   std::string_view what);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_ETCD_KEYS_H_
