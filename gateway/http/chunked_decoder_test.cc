// chunked_decoder_test.cc: ChunkedDecoder (streaming, split anywhere, strictness, trailers,
// huge sizes) and the chunk-framing writers.
#include "gateway/http/chunked_decoder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace portico::gateway::http {
namespace {

using namespace std::string_literals;

// Outcome of decoding an input delivered in pieces.
struct Decoded {
  ParseResult result = ParseResult::kNeedMore;
  std::string body;
  size_t consumed = 0;  // Input bytes consumed in total.
  std::string reason;
};

// Feeds `input` in pieces of `piece` bytes (0: all at once), as a connection would, and keeps
// unconsumed bytes for the next call the way a caller buffer does.
Decoded DecodeInPieces(ChunkedDecoder& decoder, std::string_view input, size_t piece) {
  Decoded out;
  std::string pending;
  size_t offered = 0;
  while (true) {
    if (pending.empty()) {
      if (offered == input.size()) return out;
      const size_t take = piece == 0 ? input.size() : std::min(piece, input.size() - offered);
      pending.assign(input.substr(offered, take));
      offered += take;
    }
    ChunkedStep step = decoder.Decode(pending);
    // Data always lies within the consumed prefix of what was given.
    EXPECT_LE(step.data.size(), step.consumed);
    if (!step.data.empty()) {
      EXPECT_GE(step.data.data(), pending.data());
      EXPECT_LE(step.data.data() + step.data.size(), pending.data() + step.consumed);
    }
    out.body.append(step.data);
    out.consumed += step.consumed;
    pending.erase(0, step.consumed);
    out.result = step.result;
    if (step.result == ParseResult::kError) out.reason = std::string(decoder.error().reason);
    if (step.result != ParseResult::kNeedMore) return out;
  }
}

Decoded DecodeAll(std::string_view input, size_t piece = 0) {
  ChunkedDecoder decoder;
  return DecodeInPieces(decoder, input, piece);
}

TEST(ChunkedDecoderTest, DecodesOneChunk) {
  ChunkedDecoder decoder;
  constexpr std::string_view kBody = "5\r\nhello\r\n0\r\n\r\n";
  ChunkedStep step = decoder.Decode(kBody);
  EXPECT_EQ(step.result, ParseResult::kNeedMore);
  EXPECT_EQ(step.data, "hello");
  EXPECT_EQ(step.consumed, 8u);
  step = decoder.Decode(kBody.substr(8));
  EXPECT_EQ(step.result, ParseResult::kComplete);
  EXPECT_TRUE(step.data.empty());
  EXPECT_EQ(step.consumed, kBody.size() - 8);
  EXPECT_TRUE(decoder.done());
  EXPECT_EQ(decoder.body_bytes(), 5u);
  EXPECT_TRUE(decoder.trailers().empty());
}

TEST(ChunkedDecoderTest, StopsAtTheEndOfTheBody) {
  const std::string input = "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nGET / HTTP/1.1\r\n";
  Decoded decoded = DecodeAll(input);
  EXPECT_EQ(decoded.result, ParseResult::kComplete);
  EXPECT_EQ(decoded.body, "abcde");
  EXPECT_EQ(input.substr(decoded.consumed), "GET / HTTP/1.1\r\n");
}

TEST(ChunkedDecoderTest, EmptyBody) {
  Decoded decoded = DecodeAll("0\r\n\r\n");
  EXPECT_EQ(decoded.result, ParseResult::kComplete);
  EXPECT_EQ(decoded.body, "");
  EXPECT_EQ(decoded.consumed, 5u);
}

std::string RichBody() {
  return "1a;name=value;quoted=\"a b\\\"c\"\r\nabcdefghijklmnopqrstuvwxyz\r\n"
         "A ; ext\r\n0123456789\r\n"
         "000000000000000000001\r\n!\r\n"
         "0;last\r\nX-Checksum: abc123\r\nX-Other:  two words \r\n\r\n";
}

TEST(ChunkedDecoderTest, SplitAtEveryPieceSizeGivesTheSameBody) {
  const std::string input = RichBody();
  const std::string expected = "abcdefghijklmnopqrstuvwxyz0123456789!";
  for (size_t piece = 0; piece <= input.size(); ++piece) {
    ChunkedDecoder decoder;
    Decoded decoded = DecodeInPieces(decoder, input, piece);
    ASSERT_EQ(decoded.result, ParseResult::kComplete) << piece << " " << decoded.reason;
    EXPECT_EQ(decoded.body, expected) << piece;
    EXPECT_EQ(decoded.consumed, input.size()) << piece;
    ASSERT_EQ(decoder.trailers().size(), 2u) << piece;
    EXPECT_EQ(decoder.trailers()[0].name, "X-Checksum");
    EXPECT_EQ(decoder.trailers()[1].value, "two words");
    EXPECT_EQ(decoder.trailer_block(), "X-Checksum: abc123\r\nX-Other:  two words \r\n");
  }
}

TEST(ChunkedDecoderTest, SplitInTwoAtEveryByte) {
  const std::string input = RichBody();
  for (size_t split = 0; split <= input.size(); ++split) {
    ChunkedDecoder decoder;
    std::string body;
    size_t consumed = 0;
    ParseResult result = ParseResult::kNeedMore;
    for (std::string_view part :
         {std::string_view(input).substr(0, split), std::string_view(input).substr(split)}) {
      while (!part.empty() && result == ParseResult::kNeedMore) {
        ChunkedStep step = decoder.Decode(part);
        body.append(step.data);
        part.remove_prefix(step.consumed);
        consumed += step.consumed;
        result = step.result;
      }
    }
    ASSERT_EQ(result, ParseResult::kComplete) << split;
    EXPECT_EQ(body, "abcdefghijklmnopqrstuvwxyz0123456789!");
    EXPECT_EQ(consumed, input.size());
  }
}

TEST(ChunkedDecoderTest, HugeChunkSizes) {
  // The largest size is accepted; its data is then streamed as it comes.
  ChunkedDecoder decoder;
  ChunkedStep step = decoder.Decode("7fffffffffffffff\r\nabc");
  EXPECT_EQ(step.result, ParseResult::kNeedMore);
  EXPECT_EQ(step.data, "abc");
  EXPECT_EQ(step.consumed, 21u);
  EXPECT_EQ(DecodeAll("7FFFFFFFFFFFFFFF\r\n").result, ParseResult::kNeedMore);
  for (std::string_view input : {"8000000000000000\r\n", "ffffffffffffffff\r\n",
                                 "10000000000000000\r\n", "fffffffffffffffffffffffff\r\n"}) {
    Decoded decoded = DecodeAll(input);
    EXPECT_EQ(decoded.result, ParseResult::kError) << input;
    EXPECT_EQ(decoded.reason, "chunk_size_overflow") << input;
  }
}

TEST(ChunkedDecoderTest, Rejections) {
  struct Case {
    std::string input;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"\r\nhello\r\n0\r\n\r\n", "invalid_chunk_size"},
      {"-5\r\nhello\r\n", "invalid_chunk_size"},
      {"+5\r\nhello\r\n", "invalid_chunk_size"},
      {"0x5\r\nhello\r\n", "invalid_chunk_size"},
      {"5g\r\nhello\r\n", "invalid_chunk_size"},
      {" 5\r\nhello\r\n", "invalid_chunk_size"},
      {"5 \r\nhello\r\n", "invalid_chunk_size"},
      {"5 x\r\nhello\r\n", "invalid_chunk_size"},
      {";ext\r\n", "invalid_chunk_size"},
      {"5\nhello\r\n", "bare_lf"},
      {"5;a\nhello\r\n", "bare_lf"},
      {"5 \n", "bare_lf"},
      {"5\rhello\r\n", "bare_cr"},
      {"5;a\rb\r\n", "bare_cr"},
      {"5;a\x01\r\nhello\r\n", "invalid_chunk_extension"},
      {"5;a\0\r\nhello\r\n"s, "invalid_chunk_extension"},
      {"5\r\nhelloX\r\n", "missing_chunk_crlf"},
      {"5\r\nhello\rX", "missing_chunk_crlf"},
      {"5\r\nhello\n0\r\n\r\n", "missing_chunk_crlf"},
      {"5\r\nhello\r\n0\r\n\n", "bare_lf"},
      {"0\r\n\rX", "bare_cr"},
      {"0\r\nX: a\n\r\n", "bare_lf"},
      {"0\r\nX: a\r\n b\r\n\r\n", "obs_fold"},
      {"0\r\nX : a\r\n\r\n", "whitespace_before_colon"},
      {"0\r\nX: a\x7f\r\n\r\n", "invalid_header_value"},
      {"0\r\nX: a\rb\r\n\r\n", "bare_cr"},
      {"0\r\nNoColon\r\n\r\n", "missing_colon"},
  };
  for (const Case& c : cases) {
    for (size_t piece : {size_t{0}, size_t{1}}) {
      Decoded decoded = DecodeAll(c.input, piece);
      EXPECT_EQ(decoded.result, ParseResult::kError) << c.input << " piece " << piece;
      EXPECT_EQ(decoded.reason, c.reason) << c.input << " piece " << piece;
    }
  }
}

TEST(ChunkedDecoderTest, ErrorIsSticky) {
  ChunkedDecoder decoder;
  EXPECT_EQ(decoder.Decode("zz\r\n").result, ParseResult::kError);
  EXPECT_EQ(decoder.error().status, 400);
  EXPECT_EQ(decoder.Decode("5\r\nhello\r\n").result, ParseResult::kError);
  decoder.Reset();
  EXPECT_EQ(decoder.Decode("5\r\nhello\r\n").data, "hello");
}

TEST(ChunkedDecoderTest, ChunkLineLimit) {
  ChunkedLimits limits;
  limits.max_chunk_line = 16;
  ChunkedDecoder ok(limits);
  EXPECT_EQ(DecodeInPieces(ok, "5;" + std::string(14, 'e') + "\r\nhello\r\n0\r\n\r\n", 0).result,
            ParseResult::kComplete);
  for (size_t piece : {size_t{0}, size_t{1}, size_t{5}}) {
    ChunkedDecoder decoder(limits);
    Decoded decoded = DecodeInPieces(decoder, "5;" + std::string(15, 'e') + "\r\n", piece);
    EXPECT_EQ(decoded.result, ParseResult::kError);
    EXPECT_EQ(decoded.reason, "chunk_line_too_long");
    ChunkedDecoder zeros(limits);
    decoded = DecodeInPieces(zeros, std::string(17, '0') + "5\r\n", piece);
    EXPECT_EQ(decoded.reason, "chunk_line_too_long");
  }
}

TEST(ChunkedDecoderTest, TrailerLimits) {
  ChunkedLimits limits;
  limits.max_trailers = 2;
  limits.max_trailer_bytes = 32;
  ChunkedDecoder count(limits);
  Decoded decoded = DecodeInPieces(count, "0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 0);
  EXPECT_EQ(decoded.reason, "too_many_trailers");
  ChunkedDecoder bytes(limits);
  decoded = DecodeInPieces(bytes, "0\r\nA: " + std::string(40, 'a') + "\r\n\r\n", 3);
  EXPECT_EQ(decoded.reason, "trailers_too_large");
  ChunkedDecoder fits(limits);
  decoded = DecodeInPieces(fits, "0\r\nA: 1\r\nB: " + std::string(20, 'b') + "\r\n\r\n", 1);
  EXPECT_EQ(decoded.result, ParseResult::kComplete);
  EXPECT_EQ(fits.trailers().size(), 2u);
}

TEST(ChunkedDecoderTest, ReusedAfterReset) {
  ChunkedDecoder decoder;
  Decoded first = DecodeInPieces(decoder, "0\r\nX: 1\r\n\r\n", 0);
  ASSERT_EQ(first.result, ParseResult::kComplete);
  EXPECT_EQ(decoder.trailers().size(), 1u);
  decoder.Reset();
  Decoded second = DecodeInPieces(decoder, "2\r\nok\r\n0\r\n\r\n", 0);
  ASSERT_EQ(second.result, ParseResult::kComplete);
  EXPECT_EQ(second.body, "ok");
  EXPECT_TRUE(decoder.trailers().empty());
  EXPECT_EQ(decoder.trailer_block(), "");
}

TEST(ChunkWriterTest, WritesHexHeaders) {
  char buffer[kMaxChunkHeaderSize];
  EXPECT_EQ(std::string_view(buffer, WriteChunkHeader(1, buffer)), "1\r\n");
  EXPECT_EQ(std::string_view(buffer, WriteChunkHeader(255, buffer)), "ff\r\n");
  EXPECT_EQ(std::string_view(buffer, WriteChunkHeader(4096, buffer)), "1000\r\n");
  EXPECT_EQ(std::string_view(buffer, WriteChunkHeader(~uint64_t{0}, buffer)),
            "ffffffffffffffff\r\n");
}

TEST(ChunkWriterTest, RoundTripsThroughTheDecoder) {
  std::string encoded;
  const std::string parts[] = {"a", std::string(300, 'b'), std::string(70000, 'c')};
  std::string expected;
  for (const std::string& part : parts) {
    AppendChunkHeader(part.size(), &encoded);
    encoded += part;
    encoded += kChunkEnd;
    expected += part;
  }
  AppendLastChunk("X-Sum: 1\r\n", &encoded);
  Decoded decoded = DecodeAll(encoded, 1000);
  ASSERT_EQ(decoded.result, ParseResult::kComplete);
  EXPECT_EQ(decoded.body, expected);
  EXPECT_EQ(decoded.consumed, encoded.size());
  std::string no_trailers;
  AppendLastChunk("", &no_trailers);
  EXPECT_EQ(no_trailers, kLastChunk);
}

std::string Render(const Decoded& decoded, const ChunkedDecoder& decoder) {
  return std::to_string(int(decoded.result)) + "|" + decoded.body + "|" +
         std::to_string(decoded.consumed) + "|" + decoded.reason + "|" +
         std::string(decoder.trailer_block());
}

// Mutated bodies (seeded) decode to the same body, consumed count, error and trailers however
// the input is split.
TEST(ChunkedDecoderTest, SplitsAgreeOnMutatedInputs) {
  const std::vector<std::string> seeds = {RichBody(), "5\r\nhello\r\n0\r\n\r\nNEXT",
                                          "1;a=b\r\nx\r\n0\r\nT: v\r\n\r\n"};
  constexpr std::string_view kAlphabet("\r\n \t:;=\"\0a0fF\x7f\x80", 15);
  std::mt19937 rng(99);
  int complete = 0;
  int errors = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string input = seeds[rng() % seeds.size()];
    for (int m = 1 + static_cast<int>(rng() % 3); m > 0; --m) {
      const size_t at = rng() % (input.size() + 1);
      const char c = kAlphabet[rng() % kAlphabet.size()];
      switch (rng() % 3) {
        case 0:
          input.insert(at, 1, c);
          break;
        case 1:
          if (at < input.size()) input[at] = c;
          break;
        default:
          if (at < input.size()) input.erase(at, 1);
          break;
      }
    }
    ChunkedDecoder whole;
    const Decoded expected_decoded = DecodeInPieces(whole, input, 0);
    const std::string expected = Render(expected_decoded, whole);
    complete += expected_decoded.result == ParseResult::kComplete ? 1 : 0;
    errors += expected_decoded.result == ParseResult::kError ? 1 : 0;
    for (size_t piece : {size_t{1}, size_t{2}, size_t{1} + rng() % 20}) {
      ChunkedDecoder split;
      ASSERT_EQ(Render(DecodeInPieces(split, input, piece), split), expected)
          << "piece " << piece << ": " << testing::PrintToString(input);
    }
  }
  EXPECT_GT(complete, 300);
  EXPECT_GT(errors, 300);
}

}  // namespace
}  // namespace portico::gateway::http
