// chunked_decoder.h: ChunkedDecoder, the streaming decoder of chunked message bodies
// (RFC 9112 §7.1), and the chunk-framing helpers of the encoding side.
//
// The decoder never copies body bytes: each Decode call consumes a prefix of the bytes it is
// given and hands back the body data in that prefix as a view into them. It keeps its position
// in the framing between calls, so input may be split anywhere.
//
// Strictness (every rejection is HttpError{400, reason}; a caller decoding an upstream body
// answers 502 instead): chunk-size is 1*HEXDIG up to 2^63-1 ("chunk_size_overflow"), followed
// by CRLF or by BWS ";" extensions, which are accepted (field-value bytes, not forwarded) but
// bounded with the size by max_chunk_line; chunk data is followed by exactly CRLF; bare LF and
// bare CR are rejected everywhere; trailer fields follow ParseFieldLine and are bounded by
// max_trailer_bytes and max_trailers.
//
// Thread-safety: none; one decoder per body. Ownership: data views point into the caller's
// input; trailers() views point into the decoder (do not move it after completion).
#ifndef PORTICO_GATEWAY_HTTP_CHUNKED_DECODER_H_
#define PORTICO_GATEWAY_HTTP_CHUNKED_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/http/header_util.h"
#include "gateway/http/message.h"

namespace portico::gateway::http {

// ChunkedLimits bounds the framing a chunked body may carry.
struct ChunkedLimits {
  size_t max_chunk_line = 4096;  // chunk-size plus extensions, without CRLF.
  size_t max_trailer_bytes = 16 * 1024;
  size_t max_trailers = 64;
};

// ChunkedStep is the outcome of one ChunkedDecoder::Decode call.
struct ChunkedStep {
  // kNeedMore: the body goes on; call Decode again with input[consumed:] and, once that is
  // empty, with newly read bytes. kComplete: the last chunk and trailers ended; input[consumed:]
  // belongs to the next message. kError: see ChunkedDecoder::error().
  ParseResult result = ParseResult::kNeedMore;
  size_t consumed = 0;    // Bytes of input used, framing and data.
  std::string_view data;  // Body bytes within the consumed prefix; possibly empty.
};

// ChunkedDecoder decodes one chunked body; Reset() before the next.
class ChunkedDecoder {
 public:
  explicit ChunkedDecoder(const ChunkedLimits& limits = {}) : limits_(limits) {}

  // Decode consumes framing up to the next body data and returns that data (at most one span
  // per call, ending where a chunk or the input ends).
  ChunkedStep Decode(std::string_view input);

  bool done() const { return state_ == State::kDone; }
  const HttpError& error() const { return error_; }
  // Body bytes returned so far (for body-size limits and the access log).
  uint64_t body_bytes() const { return body_bytes_; }
  // The trailer fields, valid after completion.
  const HeaderList& trailers() const { return trailers_; }
  // The trailer section as received ("name: value\r\n" lines, no final CRLF), for forwarding.
  std::string_view trailer_block() const { return trailer_block_; }

  void Reset();

 private:
  enum class State : uint8_t {
    kSize,
    kSizeSpace,
    kExtension,
    kSizeLf,
    kData,
    kDataCr,
    kDataLf,
    kTrailerStart,
    kTrailerLine,
    kFinalLf,
    kDone,
    kError,
  };

  ChunkedStep Fail(std::string_view reason, size_t consumed);
  void FinishTrailers();

  ChunkedLimits limits_;
  State state_ = State::kSize;
  HttpError error_;
  uint64_t size_ = 0;       // Chunk size being read, then bytes left in the chunk.
  size_t size_digits_ = 0;  // Hex digits read on this size line.
  size_t line_bytes_ = 0;   // Bytes of this size line so far.
  uint64_t body_bytes_ = 0;
  size_t trailer_line_start_ = 0;  // Offset in trailer_block_ of the line being read.
  size_t trailer_count_ = 0;
  std::string trailer_block_;  // Allocated only when trailers arrive.
  HeaderList trailers_;
};

// kMaxChunkHeaderSize: the longest chunk header WriteChunkHeader writes (16 hex digits, CRLF).
inline constexpr size_t kMaxChunkHeaderSize = 18;
// kChunkEnd follows each chunk's data; kLastChunk ends a body that has no trailers.
inline constexpr std::string_view kChunkEnd = "\r\n";
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// WriteChunkHeader writes "<size in hex>\r\n" to `out` (room for kMaxChunkHeaderSize bytes)
// and returns its length. `size` must not be 0 (that is the last chunk).
size_t WriteChunkHeader(uint64_t size, char* out);
// AppendChunkHeader appends the same to `out`.
void AppendChunkHeader(uint64_t size, std::string* out);
// AppendLastChunk appends "0\r\n", the trailer block (field lines each ending in CRLF, as
// ChunkedDecoder::trailer_block() gives them) and the final CRLF.
void AppendLastChunk(std::string_view trailer_block, std::string* out);

}  // namespace portico::gateway::http

#endif  // PORTICO_GATEWAY_HTTP_CHUNKED_DECODER_H_
