// response_stream_fuzz: the upstream response parser and the chunked decoder on an upstream's
// byte stream. The first input byte picks a piece size (1-16 bytes) and, with its high bit,
// whether the responses answer HEAD; the transcript fed whole must equal the one fed in pieces.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/message_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  size_t piece = data[0] % 16 + 1;
  bool head_request = (data[0] & 0x80) != 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string whole = portico::fuzz::ResponseStreamTranscript(input, input.size(), head_request);
  std::string split = portico::fuzz::ResponseStreamTranscript(input, piece, head_request);
  FUZZ_CHECK(whole == split, "fed whole:\n%s\nfed in %zu-byte pieces:\n%s", whole.c_str(), piece,
             split.c_str());
  return 0;
}
