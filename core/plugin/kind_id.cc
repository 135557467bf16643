#include "core/plugin/kind_id.h"

namespace portico::core {

KindId KindId::Parse(std::string_view ref) {
  size_t dot = ref.find('.');
  if (dot == std::string_view::npos) return KindId{"", std::string(ref)};
  return KindId{std::string(ref.substr(dot + 1)), std::string(ref.substr(0, dot))};
}

std::string KindId::ToString() const { return group.empty() ? kind : kind + "." + group; }

}  // namespace portico::core
