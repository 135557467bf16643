// flat_index.h: FlatIndex, a compact open-addressing hash index from (kind, bytes) keys to uint32
// values, built once and then only read. The hash is incremental FNV-1a, so a caller scanning a
// path byte by byte holds the hash of every prefix and probes several prefixes for the price of
// one pass (path_index.h).
//
// Thread-safety: Add and Seal from one thread; after Seal, Find may be called from any number of
// threads (const, no allocation). Ownership: keys are copied into the index.
#ifndef PORTICO_CORE_RUNTIME_ROUTING_FLAT_INDEX_H_
#define PORTICO_CORE_RUNTIME_ROUTING_FLAT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace portico::core::routing {

class FlatIndex {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;
  static constexpr uint64_t kSeed = 14695981039346656037ull;  // FNV-1a offset basis

  // Step extends the hash of a key by one byte; Hash hashes a whole key.
  static uint64_t Step(uint64_t h, unsigned char c) { return (h ^ c) * 1099511628211ull; }
  static uint64_t Hash(std::string_view key) {
    uint64_t h = kSeed;
    for (char c : key) h = Step(h, static_cast<unsigned char>(c));
    return h;
  }

  // Add records (kind, key) -> value. Keys must be unique per kind (the caller groups first).
  void Add(uint8_t kind, std::string_view key, uint32_t value);
  // Seal builds the hash slots; call once after the last Add, before any Find.
  void Seal();

  // Find returns the value of (kind, key), or kNotFound. FindHashed takes Hash(key) (or the
  // running Step hash of it) when the caller already has it.
  uint32_t Find(uint8_t kind, std::string_view key) const {
    return FindHashed(kind, key, Hash(key));
  }
  uint32_t FindHashed(uint8_t kind, std::string_view key, uint64_t key_hash) const {
    if (slots_.empty()) return kNotFound;
    const uint64_t h = Mix(key_hash, kind);
    for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
      const uint32_t slot = slots_[i];
      if (slot == 0) return kNotFound;
      const Entry& e = entries_[slot - 1];
      if (e.hash == h && e.kind == kind && e.key_len == key.size() &&
          std::string_view(keys_.data() + e.key_offset, e.key_len) == key) {
        return e.value;
      }
    }
  }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // MemoryBytes is the heap the index holds (capacity of its arrays).
  size_t MemoryBytes() const {
    return entries_.capacity() * sizeof(Entry) + slots_.capacity() * sizeof(uint32_t) +
           keys_.capacity();
  }

 private:
  struct Entry {
    uint64_t hash;  // Mix(Hash(key), kind)
    uint32_t key_offset;
    uint32_t key_len;
    uint32_t value;
    uint8_t kind;
  };

  // Mix folds the kind in and spreads FNV's bits to the low end the mask keeps (murmur3 fmix64).
  static uint64_t Mix(uint64_t h, uint8_t kind) {
    h ^= (uint64_t{kind} + 1) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
  }

  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;  // entry index + 1; 0 = empty; a power of two, <= 50% full
  std::string keys_;
  uint64_t mask_ = 0;
};

}  // namespace portico::core::routing

#endif  // PORTICO_CORE_RUNTIME_ROUTING_FLAT_INDEX_H_
