// chunked_decoder_fuzz: one chunked body, decoded whole and in pieces of 1-16 bytes (the first
// input byte picks the size): the same data, trailers, consumed count and verdict, no crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/message_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  size_t piece = data[0] % 16 + 1;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string whole = portico::fuzz::ChunkedTranscript(input, input.size());
  std::string split = portico::fuzz::ChunkedTranscript(input, piece);
  std::string bytewise = portico::fuzz::ChunkedTranscript(input, 1);
  FUZZ_CHECK(whole == split && whole == bytewise, "whole:\n%s\n%zu-byte pieces:\n%s\nbytes:\n%s",
             whole.c_str(), piece, split.c_str(), bytewise.c_str());
  return 0;
}
