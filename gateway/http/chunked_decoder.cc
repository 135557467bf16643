// chunked_decoder.cc: see chunked_decoder.h.
#include "gateway/http/chunked_decoder.h"

#include <algorithm>
#include <cstring>

namespace portico::gateway::http {

void ChunkedDecoder::Reset() {
  state_ = State::kSize;
  error_ = HttpError();
  size_ = 0;
  size_digits_ = 0;
  line_bytes_ = 0;
  body_bytes_ = 0;
  trailer_line_start_ = 0;
  trailer_count_ = 0;
  trailer_block_.clear();
  trailers_.clear();
}

ChunkedStep ChunkedDecoder::Fail(std::string_view reason, size_t consumed) {
  state_ = State::kError;
  error_ = HttpError{400, reason};
  return ChunkedStep{ParseResult::kError, consumed, {}};
}

ChunkedStep ChunkedDecoder::Decode(std::string_view input) {
  if (state_ == State::kDone) return ChunkedStep{ParseResult::kComplete, 0, {}};
  if (state_ == State::kError) return ChunkedStep{ParseResult::kError, 0, {}};
  const char* const b = input.data();
  const size_t n = input.size();
  size_t i = 0;
  while (i < n) {
    const char c = b[i];
    switch (state_) {
      case State::kData: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(size_, n - i));
        size_ -= take;
        body_bytes_ += take;
        if (size_ == 0) state_ = State::kDataCr;
        return ChunkedStep{ParseResult::kNeedMore, i + take, std::string_view(b + i, take)};
      }
      case State::kSize: {
        const int digit = HexDigitValue(c);
        if (digit >= 0) {
          if (size_ > (kMaxBodyLength >> 4)) return Fail("chunk_size_overflow", i);
          size_ = size_ * 16 + static_cast<uint64_t>(digit);
          ++size_digits_;
        } else if (c == '\n') {
          return Fail("bare_lf", i);
        } else if (size_digits_ == 0) {
          return Fail("invalid_chunk_size", i);
        } else if (c == '\r') {
          state_ = State::kSizeLf;
        } else if (c == ';') {
          state_ = State::kExtension;
        } else if (c == ' ' || c == '\t') {
          state_ = State::kSizeSpace;
        } else {
          return Fail("invalid_chunk_size", i);
        }
        if (++line_bytes_ > limits_.max_chunk_line) return Fail("chunk_line_too_long", i);
        ++i;
        break;
      }
      case State::kSizeSpace:
        // BWS is allowed only before an extension (RFC 9112 §7.1.1).
        if (c == ';') {
          state_ = State::kExtension;
        } else if (c != ' ' && c != '\t') {
          return Fail(c == '\n' ? "bare_lf" : "invalid_chunk_size", i);
        }
        if (++line_bytes_ > limits_.max_chunk_line) return Fail("chunk_line_too_long", i);
        ++i;
        break;
      case State::kExtension: {
        // Extensions are not interpreted (nor forwarded); any field-value bytes pass.
        size_t j = i;
        while (j < n && IsFieldValueChar(b[j])) ++j;
        line_bytes_ += j - i;
        if (line_bytes_ > limits_.max_chunk_line) return Fail("chunk_line_too_long", i);
        i = j;
        if (i == n) break;
        if (b[i] == '\n') return Fail("bare_lf", i);
        if (b[i] != '\r') return Fail("invalid_chunk_extension", i);
        state_ = State::kSizeLf;
        ++i;
        break;
      }
      case State::kSizeLf:
        if (c != '\n') return Fail("bare_cr", i);
        state_ = size_ == 0 ? State::kTrailerStart : State::kData;
        ++i;
        break;
      case State::kDataCr:
        if (c != '\r') return Fail("missing_chunk_crlf", i);
        state_ = State::kDataLf;
        ++i;
        break;
      case State::kDataLf:
        if (c != '\n') return Fail("missing_chunk_crlf", i);
        state_ = State::kSize;
        size_ = 0;
        size_digits_ = 0;
        line_bytes_ = 0;
        ++i;
        break;
      case State::kTrailerStart:
        if (c == '\r') {
          state_ = State::kFinalLf;
          ++i;
        } else if (c == '\n') {
          return Fail("bare_lf", i);
        } else {
          trailer_line_start_ = trailer_block_.size();
          state_ = State::kTrailerLine;
        }
        break;
      case State::kTrailerLine: {
        const void* lf = std::memchr(b + i, '\n', n - i);
        const size_t end = lf ? static_cast<size_t>(static_cast<const char*>(lf) - b) + 1 : n;
        if (trailer_block_.size() + (end - i) > limits_.max_trailer_bytes) {
          return Fail("trailers_too_large", i);
        }
        trailer_block_.append(b + i, end - i);
        i = end;
        if (lf == nullptr) break;
        // The line without its LF must end in CR; the rest is one field line.
        std::string_view line(trailer_block_);
        line = line.substr(trailer_line_start_, line.size() - trailer_line_start_ - 1);
        if (line.empty() || line.back() != '\r') return Fail("bare_lf", i - 1);
        line.remove_suffix(1);
        HeaderField field;
        std::string_view reason = ParseFieldLine(line, &field);
        if (!reason.empty()) return Fail(reason, i - 1);
        if (++trailer_count_ > limits_.max_trailers) return Fail("too_many_trailers", i - 1);
        state_ = State::kTrailerStart;
        break;
      }
      case State::kFinalLf:
        if (c != '\n') return Fail("bare_cr", i);
        FinishTrailers();
        state_ = State::kDone;
        return ChunkedStep{ParseResult::kComplete, i + 1, {}};
      case State::kDone:
      case State::kError:
        break;
    }
  }
  return ChunkedStep{ParseResult::kNeedMore, n, {}};
}

void ChunkedDecoder::FinishTrailers() {
  // Lines were validated as they arrived; the block no longer grows, so views into it hold.
  std::string_view block(trailer_block_);
  while (!block.empty()) {
    size_t crlf = block.find("\r\n");
    HeaderField field;
    if (ParseFieldLine(block.substr(0, crlf), &field).empty()) trailers_.push_back(field);
    block.remove_prefix(crlf + 2);
  }
}

size_t WriteChunkHeader(uint64_t size, char* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  char digits[16];
  size_t count = 0;
  do {
    digits[count++] = kHex[size & 0xf];
    size >>= 4;
  } while (size != 0);
  for (size_t i = 0; i < count; ++i) out[i] = digits[count - 1 - i];
  out[count] = '\r';
  out[count + 1] = '\n';
  return count + 2;
}

void AppendChunkHeader(uint64_t size, std::string* out) {
  char buffer[kMaxChunkHeaderSize];
  out->append(buffer, WriteChunkHeader(size, buffer));
}

void AppendLastChunk(std::string_view trailer_block, std::string* out) {
  out->append("0\r\n");
  out->append(trailer_block);
  out->append("\r\n");
}

}  // namespace portico::gateway::http
