// event_chunker.h: OutEvent, an event waiting to be sent, and EventChunker, which packs such
// events into ConfigSync messages of at most a byte budget (1 MiB: DESIGN.md §5).
//
// Bodies are the store's shared, immutable JSON strings; an event's body is copied into the
// protobuf only when its chunk is built, and the chunker drops its reference once the event is
// packed, so a stream in the middle of a snapshot holds one chunk of copies at most.
//
// Thread-safety: EventChunker is single-threaded.
#ifndef PORTICO_CONTROLLER_SYNC_EVENT_CHUNKER_H_
#define PORTICO_CONTROLLER_SYNC_EVENT_CHUNKER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/store/store_key.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::controller::sync {

inline constexpr size_t kMaxMessageBytes = size_t{1} << 20;

struct OutEvent {
  portico::sync::v1::Event::Op op = portico::sync::v1::Event::OP_UPSERT;
  core::StoreKey key;
  std::string hash;
  std::shared_ptr<const std::string> json;  // null on delete
  uint64_t version = 0;
};

// ToProtoKey / FromProtoKey convert keys.
portico::sync::v1::ObjectKey ToProtoKey(const core::StoreKey& key);
core::StoreKey FromProtoKey(const portico::sync::v1::ObjectKey& key);

// EventChunker hands out `events` in order, in groups whose encoding (as a repeated message
// field) stays within `budget` bytes; a single event larger than the budget goes alone.
class EventChunker {
 public:
  EventChunker(std::vector<OutEvent> events, size_t budget);

  bool Done() const { return next_ >= events_.size() && !carry_; }
  size_t size() const { return events_.size(); }
  // Fill appends the next group to `out` (at least one event unless Done) and returns how many.
  size_t Fill(google::protobuf::RepeatedPtrField<portico::sync::v1::Event>* out);

 private:
  std::vector<OutEvent> events_;
  size_t budget_;
  size_t next_ = 0;
  std::optional<portico::sync::v1::Event> carry_;  // built, did not fit the previous group
};

// MessageBudget is the budget for the repeated events of a message of `max_bytes` that also
// carries `other_bytes` of other fields: room for the outer tags and lengths is kept.
size_t MessageBudget(size_t max_bytes, size_t other_bytes = 0);

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_EVENT_CHUNKER_H_
