// validate.h: the BackendTLSPolicy model (gateway.networking.k8s.io/v1) and the rules its JSON
// Schema cannot express: the CRD's CEL rules (targetRefs distinct: a target named twice needs a
// sectionName on both, and different ones; exactly one of validation.caCertificateRefs and
// validation.wellKnownCACertificates; a subjectAltName carries the field of its type and not
// the other). ParseBackendTlsPolicy returns errors naming the field
// ("spec.validation: must not contain both caCertificateRefs and wellKnownCACertificates"); the
// caller prefixes the object. The model owns copies of its strings.
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_BACKENDTLSPOLICY_VALIDATE_H_
#define PORTICO_PLUGINS_BACKENDTLSPOLICY_VALIDATE_H_

#include <string>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::plugins::backendtlspolicy {

inline constexpr char kGroup[] = "gateway.networking.k8s.io";

// TargetRef is a spec.targetRefs entry (LocalPolicyTargetReferenceWithSectionName).
struct TargetRef {
  std::string group;
  std::string kind;
  std::string name;
  std::string section_name;  // empty: the whole Service

  bool IsService() const { return group.empty() && kind == "Service"; }
};

// CaRef is a validation.caCertificateRefs entry (LocalObjectReference: the policy's namespace).
struct CaRef {
  std::string group;
  std::string kind;
  std::string name;
};

// SubjectAltName is a validation.subjectAltNames entry: `value` is the hostname or the URI.
struct SubjectAltName {
  std::string type;  // "Hostname" or "URI"
  std::string value;
};

struct BackendTlsPolicySpec {
  std::vector<TargetRef> targets;
  std::vector<CaRef> ca_refs;
  std::string well_known;  // "System" or empty
  std::string hostname;
  std::vector<SubjectAltName> subject_alt_names;
  std::vector<std::string> options;  // spec.options keys, sorted
};

StatusOr<BackendTlsPolicySpec> ParseBackendTlsPolicy(const rapidjson::Value& spec);

}  // namespace portico::plugins::backendtlspolicy

#endif  // PORTICO_PLUGINS_BACKENDTLSPOLICY_VALIDATE_H_
