// flat_index.cc: see flat_index.h.
#include "core/runtime/routing/flat_index.h"

namespace portico::core::routing {

void FlatIndex::Add(uint8_t kind, std::string_view key, uint32_t value) {
  entries_.push_back(Entry{Mix(Hash(key), kind), static_cast<uint32_t>(keys_.size()),
                           static_cast<uint32_t>(key.size()), value, kind});
  keys_.append(key);
}

void FlatIndex::Seal() {
  entries_.shrink_to_fit();
  keys_.shrink_to_fit();
  if (entries_.empty()) {
    slots_.clear();
    slots_.shrink_to_fit();
    return;
  }
  size_t capacity = 4;
  while (capacity < entries_.size() * 2) capacity *= 2;
  slots_.assign(capacity, 0);
  mask_ = capacity - 1;
  for (size_t n = 0; n < entries_.size(); ++n) {
    uint64_t i = entries_[n].hash & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = static_cast<uint32_t>(n + 1);
  }
}

}  // namespace portico::core::routing
