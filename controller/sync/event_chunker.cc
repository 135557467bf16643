#include "controller/sync/event_chunker.h"

#include <utility>

namespace portico::controller::sync {
namespace {

size_t VarintSize(size_t value) {
  size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

portico::sync::v1::Event ToProto(OutEvent& event) {
  portico::sync::v1::Event out;
  out.set_op(event.op);
  *out.mutable_key() = ToProtoKey(event.key);
  out.set_hash(std::move(event.hash));
  if (event.json != nullptr) out.set_body(*event.json);
  out.set_version(event.version);
  event.json.reset();  // the chunk holds the copy now
  return out;
}

}  // namespace

portico::sync::v1::ObjectKey ToProtoKey(const core::StoreKey& key) {
  portico::sync::v1::ObjectKey out;
  out.set_group(key.group);
  out.set_kind(key.kind);
  out.set_namespace_(key.ns);
  out.set_name(key.name);
  return out;
}

core::StoreKey FromProtoKey(const portico::sync::v1::ObjectKey& key) {
  return core::StoreKey{key.group(), key.kind(), key.namespace_(), key.name()};
}

size_t MessageBudget(size_t max_bytes, size_t other_bytes) {
  // Outer envelope: a oneof tag and a length (<= 1 + 5 bytes) around the repeated field's
  // message, plus the fields beside it.
  size_t reserve = 16 + other_bytes;
  return max_bytes > reserve ? max_bytes - reserve : 1;
}

EventChunker::EventChunker(std::vector<OutEvent> events, size_t budget)
    : events_(std::move(events)), budget_(budget) {}

size_t EventChunker::Fill(google::protobuf::RepeatedPtrField<portico::sync::v1::Event>* out) {
  size_t used = 0;
  size_t added = 0;
  while (carry_ || next_ < events_.size()) {
    portico::sync::v1::Event event = carry_ ? std::move(*carry_) : ToProto(events_[next_]);
    if (carry_) {
      carry_.reset();
    } else {
      ++next_;
    }
    size_t bytes = event.ByteSizeLong();
    size_t cost = 1 + VarintSize(bytes) + bytes;
    if (added > 0 && used + cost > budget_) {
      carry_ = std::move(event);
      break;
    }
    *out->Add() = std::move(event);
    used += cost;
    ++added;
  }
  if (next_ >= events_.size()) {
    events_.clear();
    events_.shrink_to_fit();
    next_ = 0;
  }
  return added;
}

}  // namespace portico::controller::sync
