#include "core/store/store_key.h"

#include <array>

namespace portico::core {

std::string StoreKey::ToString() const {
  std::string out;
  out.reserve(group.size() + kind.size() + ns.size() + name.size() + 3);
  out.append(group).append("/").append(kind).append("/").append(ns).append("/").append(name);
  return out;
}

StatusOr<StoreKey> StoreKey::Parse(std::string_view text) {
  std::array<std::string_view, 4> parts;
  size_t start = 0;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    size_t slash = text.find('/', start);
    if (slash == std::string_view::npos) {
      return InvalidArgumentError("store key \"" + std::string(text) +
                                  "\": want group/kind/namespace/name");
    }
    parts[i] = text.substr(start, slash - start);
    start = slash + 1;
  }
  parts[3] = text.substr(start);  // a further '/' stays in the name and fails Validate
  StoreKey key{std::string(parts[0]), std::string(parts[1]), std::string(parts[2]),
               std::string(parts[3])};
  PORTICO_RETURN_IF_ERROR(key.Validate());
  return key;
}

Status StoreKey::Validate() const {
  if (kind.empty()) return InvalidArgumentError("store key \"" + ToString() + "\": empty kind");
  if (name.empty()) return InvalidArgumentError("store key \"" + ToString() + "\": empty name");
  for (const std::string* part : {&group, &kind, &ns, &name}) {
    if (part->find('/') != std::string::npos) {
      return InvalidArgumentError("store key part \"" + *part + "\" contains '/'");
    }
  }
  return OkStatus();
}

size_t StoreKeyHash::operator()(const StoreKey& key) const noexcept {
  std::hash<std::string> h;
  size_t seed = 0;
  for (const std::string* part : {&key.group, &key.kind, &key.ns, &key.name}) {
    seed ^= h(*part) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);  // boost hash_combine
  }
  return seed;
}

}  // namespace portico::core
