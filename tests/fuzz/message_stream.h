// message_stream.h: StreamTranscript, what the gateway's HTTP/1.1 codec makes of a byte stream
// (a connection's pipeline of requests, or an upstream's responses), fed to it in pieces of a
// chosen size the way a connection's reads would. The fuzz targets compare the transcript of
// one input fed whole with the transcript of the same input fed in small pieces: accept and
// reject must not depend on how the bytes are split (request_parser.h promises it).
//
// Thread-safety: none; one call at a time per transcript. Ownership: value types.
#ifndef PORTICO_TESTS_FUZZ_MESSAGE_STREAM_H_
#define PORTICO_TESTS_FUZZ_MESSAGE_STREAM_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace portico::fuzz {

// RequestStreamTranscript parses `input` as pipelined requests (heads, then Content-Length or
// chunked bodies) reading `piece` bytes at a time, and describes every head, body and the error
// that ended the stream. At most `max_messages` messages are read.
std::string RequestStreamTranscript(std::string_view input, size_t piece, size_t max_messages = 8);

// ResponseStreamTranscript is the same for upstream responses; `head_request` is whether they
// answer HEAD requests (no body).
std::string ResponseStreamTranscript(std::string_view input, size_t piece, bool head_request,
                                     size_t max_messages = 8);

// ChunkedTranscript decodes `input` as one chunked body, `piece` bytes at a time: the body data,
// the trailer block, the bytes consumed, the result and the error.
std::string ChunkedTranscript(std::string_view input, size_t piece);

}  // namespace portico::fuzz

#endif  // PORTICO_TESTS_FUZZ_MESSAGE_STREAM_H_
