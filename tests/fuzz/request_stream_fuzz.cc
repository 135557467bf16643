// request_stream_fuzz: the request parser and the chunked decoder on a client's byte stream.
// The first input byte picks a piece size (1-16 bytes); the rest is the stream. The transcript
// of the stream fed whole must equal the one fed in pieces, and neither may crash.
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
  std::string whole = portico::fuzz::RequestStreamTranscript(input, input.size());
  std::string split = portico::fuzz::RequestStreamTranscript(input, piece);
  FUZZ_CHECK(whole == split, "fed whole:\n%s\nfed in %zu-byte pieces:\n%s", whole.c_str(), piece,
             split.c_str());
  return 0;
}
