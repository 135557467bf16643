// validate.cc: see validate.h.
#include "validate.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "portico/sdk/fields.h"

namespace portico::plugins::backendtlspolicy {
namespace {

using sdk::FieldError;

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

const rapidjson::Value* Array(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* a = json::Find(v, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

Status ParseTargets(const rapidjson::Value& spec, BackendTlsPolicySpec& out) {
  const rapidjson::Value* refs = Array(spec, "targetRefs");
  if (refs == nullptr || refs->Empty()) {
    return FieldError("spec.targetRefs", "at least one target is required");
  }
  // (group, kind, name) -> sectionName of its first entry and that entry's index.
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<std::string, size_t>> seen;
  for (rapidjson::SizeType i = 0; i < refs->Size(); ++i) {
    const rapidjson::Value& r = (*refs)[i];
    std::string field = "spec.targetRefs[" + std::to_string(i) + "]";
    TargetRef t{json::GetString(r, "group"), json::GetString(r, "kind"), json::GetString(r, "name"),
                json::GetString(r, "sectionName")};
    if (t.name.empty()) return FieldError(field + ".name", "is required");
    auto [it, fresh] =
        seen.emplace(std::make_tuple(t.group, t.kind, t.name), std::make_pair(t.section_name, i));
    if (!fresh) {
      const auto& [first_section, first] = it->second;
      // CEL: sectionName must be specified when targetRefs includes 2 or more references to
      // the same target, and unique.
      if (first_section.empty() || t.section_name.empty()) {
        return FieldError(field + ".sectionName",
                          "must be specified when targetRefs includes 2 or more references to "
                          "the same target (also spec.targetRefs[" +
                              std::to_string(first) + "])");
      }
      for (rapidjson::SizeType j = 0; j < i; ++j) {
        const rapidjson::Value& o = (*refs)[j];
        if (json::GetString(o, "group") == t.group && json::GetString(o, "kind") == t.kind &&
            json::GetString(o, "name") == t.name &&
            json::GetString(o, "sectionName") == t.section_name) {
          return FieldError(field + ".sectionName",
                            "must be unique when targetRefs includes 2 or more references to the "
                            "same target (repeats spec.targetRefs[" +
                                std::to_string(j) + "])");
        }
      }
    }
    out.targets.push_back(std::move(t));
  }
  return OkStatus();
}

Status ParseValidation(const rapidjson::Value& spec, BackendTlsPolicySpec& out) {
  const std::string field = "spec.validation";
  const rapidjson::Value* v = json::Find(spec, "validation");
  if (v == nullptr || !v->IsObject()) return FieldError(field, "is required");
  out.hostname = json::GetString(*v, "hostname");
  if (out.hostname.empty()) return FieldError(field + ".hostname", "is required");
  out.well_known = json::GetString(*v, "wellKnownCACertificates");
  if (const rapidjson::Value* refs = Array(*v, "caCertificateRefs")) {
    for (rapidjson::SizeType i = 0; i < refs->Size(); ++i) {
      const rapidjson::Value& r = (*refs)[i];
      CaRef ref{json::GetString(r, "group"), json::GetString(r, "kind"),
                json::GetString(r, "name")};
      if (ref.name.empty() || ref.kind.empty()) {
        return FieldError(field + ".caCertificateRefs[" + std::to_string(i) + "]",
                          "kind and name are required");
      }
      out.ca_refs.push_back(std::move(ref));
    }
  }
  // CEL: exactly one of caCertificateRefs and wellKnownCACertificates.
  if (!out.ca_refs.empty() && !out.well_known.empty()) {
    return FieldError(field, "must not contain both caCertificateRefs and wellKnownCACertificates");
  }
  if (out.ca_refs.empty() && out.well_known.empty()) {
    return FieldError(field, "must specify either caCertificateRefs or wellKnownCACertificates");
  }
  if (const rapidjson::Value* sans = Array(*v, "subjectAltNames")) {
    for (rapidjson::SizeType i = 0; i < sans->Size(); ++i) {
      const rapidjson::Value& s = (*sans)[i];
      std::string sub = field + ".subjectAltNames[" + std::to_string(i) + "]";
      SubjectAltName san{json::GetString(s, "type"), ""};
      std::string hostname = json::GetString(s, "hostname");
      std::string uri = json::GetString(s, "uri");
      // CEL: the field of the type is set, the other is not.
      if (san.type == "Hostname") {
        if (hostname.empty()) return FieldError(sub, "must contain hostname, as type is Hostname");
        if (!uri.empty()) return FieldError(sub, "must not contain uri, as type is Hostname");
        san.value = std::move(hostname);
      } else if (san.type == "URI") {
        if (uri.empty()) return FieldError(sub, "must contain uri, as type is URI");
        if (!hostname.empty()) return FieldError(sub, "must not contain hostname, as type is URI");
        san.value = std::move(uri);
      } else {
        return FieldError(sub + ".type", Quoted(san.type) + " is not Hostname or URI");
      }
      out.subject_alt_names.push_back(std::move(san));
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<BackendTlsPolicySpec> ParseBackendTlsPolicy(const rapidjson::Value& spec) {
  BackendTlsPolicySpec out;
  PORTICO_RETURN_IF_ERROR(ParseTargets(spec, out));
  PORTICO_RETURN_IF_ERROR(ParseValidation(spec, out));
  if (const rapidjson::Value* options = json::Find(spec, "options");
      options != nullptr && options->IsObject()) {
    for (const auto& m : options->GetObject()) out.options.emplace_back(m.name.GetString());
    std::sort(out.options.begin(), out.options.end());
  }
  return out;
}

}  // namespace portico::plugins::backendtlspolicy
