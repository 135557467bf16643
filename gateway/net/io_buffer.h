// io_buffer.h: IoBuffer, the byte buffer each connection reads into and writes from. Allocated
// once per connection and reused for every request on it; it grows (up to a caller-given
// bound) only when one head does not fit. Readable bytes are [data(), data() + size());
// reads append at write_ptr(). Consuming everything rewinds to the start, so the next head
// begins at offset 0 and the codec's buffer address stays stable while it trickles in.
//
// Thread-safety: none (one worker). Ownership: owns its storage.
#ifndef PORTICO_GATEWAY_NET_IO_BUFFER_H_
#define PORTICO_GATEWAY_NET_IO_BUFFER_H_

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace portico::gateway::net {

class IoBuffer {
 public:
  explicit IoBuffer(size_t capacity) : storage_(new char[capacity]), capacity_(capacity) {}

  char* data() { return storage_.get() + begin_; }
  const char* data() const { return storage_.get() + begin_; }
  size_t size() const { return end_ - begin_; }
  bool empty() const { return end_ == begin_; }
  std::string_view view() const { return {data(), size()}; }
  size_t capacity() const { return capacity_; }

  char* write_ptr() { return storage_.get() + end_; }
  size_t writable() const { return capacity_ - end_; }
  void Commit(size_t n) { end_ += n; }

  void Consume(size_t n) {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  void Clear() { begin_ = end_ = 0; }

  // Reserve makes room for at least `want` more bytes at write_ptr(): first by moving the
  // readable bytes to the front, then by growing up to `max_capacity`. Returns the room made
  // (possibly less than `want`, possibly 0 at the bound).
  size_t Reserve(size_t want, size_t max_capacity) {
    if (writable() >= want) return writable();
    if (begin_ > 0) {
      std::memmove(storage_.get(), data(), size());
      end_ -= begin_;
      begin_ = 0;
      if (writable() >= want) return writable();
    }
    if (capacity_ < max_capacity) {
      size_t grown = capacity_ * 2;
      while (grown - end_ < want && grown < max_capacity) grown *= 2;
      if (grown > max_capacity) grown = max_capacity;
      std::unique_ptr<char[]> bigger(new char[grown]);
      std::memcpy(bigger.get(), storage_.get(), end_);
      storage_ = std::move(bigger);
      capacity_ = grown;
    }
    return writable();
  }

 private:
  std::unique_ptr<char[]> storage_;
  size_t capacity_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace portico::gateway::net

#endif  // PORTICO_GATEWAY_NET_IO_BUFFER_H_
