// response_parser_test.cc: ResponseParser: framing per status and method, keep-alive,
// strictness (502 reasons), incremental parsing.
#include "gateway/http/response_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace portico::gateway::http {
namespace {

struct Parsed {
  ParseResult result;
  BodyFraming framing;
  uint64_t content_length;
  bool keep_alive;
  std::string reason;  // HttpError reason on error.
};

Parsed ParseOnce(std::string_view response, bool head_request = false) {
  ResponseParser parser;
  ParseResult result = parser.Parse(response, head_request);
  return Parsed{result, parser.head().framing, parser.head().content_length,
                parser.head().keep_alive, std::string(parser.error().reason)};
}

TEST(ResponseParserTest, ParsesStatusLineAndFields) {
  constexpr std::string_view kResponse =
      "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nnot found";
  ResponseParser parser;
  ASSERT_EQ(parser.Parse(kResponse), ParseResult::kComplete);
  EXPECT_EQ(parser.head().version_minor, 1);
  EXPECT_EQ(parser.head().status, 404);
  EXPECT_EQ(parser.head().reason, "Not Found");
  ASSERT_EQ(parser.head().headers.size(), 2u);
  EXPECT_EQ(parser.head().headers[0].value, "text/plain");
  EXPECT_EQ(parser.head().framing, BodyFraming::kContentLength);
  EXPECT_EQ(parser.head().content_length, 9u);
  EXPECT_TRUE(parser.head().keep_alive);
  EXPECT_EQ(kResponse.substr(parser.consumed()), "not found");
}

TEST(ResponseParserTest, ReasonPhraseMayBeEmptyOrAbsent) {
  ResponseParser parser;
  ASSERT_EQ(parser.Parse("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().reason, "");
  parser.Reset();
  ASSERT_EQ(parser.Parse("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().reason, "");
  parser.Reset();
  ASSERT_EQ(parser.Parse("HTTP/1.1 299 Very \tOK\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().reason, "Very \tOK");
}

TEST(ResponseParserTest, Framing) {
  struct Case {
    std::string_view response;
    bool head_request;
    BodyFraming framing;
    bool keep_alive;
  };
  const Case cases[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", false, BodyFraming::kContentLength, true},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false, BodyFraming::kChunked, true},
      {"HTTP/1.1 200 OK\r\n\r\n", false, BodyFraming::kUntilClose, false},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true, BodyFraming::kNone, true},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", true, BodyFraming::kNone, true},
      {"HTTP/1.1 204 No Content\r\n\r\n", false, BodyFraming::kNone, true},
      {"HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n", false, BodyFraming::kNone, true},
      {"HTTP/1.1 100 Continue\r\n\r\n", false, BodyFraming::kNone, true},
      {"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n", false, BodyFraming::kNone, true},
      {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
       false, BodyFraming::kNone, true},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n", false,
       BodyFraming::kContentLength, false},
      {"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\n", false, BodyFraming::kContentLength, false},
      {"HTTP/1.0 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n", false,
       BodyFraming::kContentLength, true},
      {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", false, BodyFraming::kUntilClose, false},
      // Identical repeats are one value (RFC 9110 §8.6).
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", false,
       BodyFraming::kContentLength, true},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", false, BodyFraming::kContentLength, true},
  };
  for (const Case& c : cases) {
    Parsed parsed = ParseOnce(c.response, c.head_request);
    ASSERT_EQ(parsed.result, ParseResult::kComplete) << c.response << parsed.reason;
    EXPECT_EQ(parsed.framing, c.framing) << c.response;
    EXPECT_EQ(parsed.keep_alive, c.keep_alive) << c.response;
  }
}

TEST(ResponseParserTest, Rejections) {
  struct Case {
    std::string_view response;
    std::string_view reason;
  };
  const Case cases[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
       "conflicting_content_length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", "conflicting_content_length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "invalid_content_length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", "invalid_content_length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", "invalid_content_length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
       "content_length_with_transfer_encoding"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "transfer_encoding_not_chunked"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
       "transfer_encoding_not_chunked"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
       "unsupported_transfer_coding"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", "chunked_repeated"},
      {"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "transfer_encoding_in_http10"},
      {"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", "obs_fold"},
      {"HTTP/1.1 200 OK\r\nX : a\r\n\r\n", "whitespace_before_colon"},
      {"HTTP/1.1 200 OK\r\nX: a\x01\r\n\r\n", "invalid_header_value"},
      {"HTTP/1.1 200 OK\nX: a\r\n\r\n", "bare_lf"},
      {"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "bare_cr"},
      {"HTTP/1.1 20 OK\r\n\r\n", "invalid_status_code"},
      {"HTTP/1.1 2000 OK\r\n\r\n", "invalid_status_line"},
      {"HTTP/1.1 abc OK\r\n\r\n", "invalid_status_code"},
      {"HTTP/1.1 099 Low\r\n\r\n", "invalid_status_code"},
      {"HTTP/1.1 600 High\r\n\r\n", "invalid_status_code"},
      {"HTTP/2.0 200 OK\r\n\r\n", "invalid_status_line"},
      {"HTTP/1.1  200 OK\r\n\r\n", "invalid_status_code"},
      {"http/1.1 200 OK\r\n\r\n", "invalid_status_line"},
      {"HTTP/1.1 200 O\x7fK\r\n\r\n", "invalid_reason_phrase"},
  };
  for (const Case& c : cases) {
    ResponseParser parser;
    ASSERT_EQ(parser.Parse(c.response), ParseResult::kError) << c.response;
    EXPECT_EQ(parser.error().status, 502) << c.response;
    EXPECT_EQ(parser.error().reason, c.reason) << c.response;
  }
}

TEST(ResponseParserTest, Limits) {
  HeadLimits limits;
  limits.max_headers = 2;
  limits.max_head_bytes = 200;
  limits.max_request_line = 40;
  ResponseParser parser(limits);
  EXPECT_EQ(parser.Parse("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"), ParseResult::kError);
  EXPECT_EQ(parser.error().reason, "too_many_headers");
  parser.Reset();
  EXPECT_EQ(parser.Parse("HTTP/1.1 200 OK\r\nA: " + std::string(200, 'a')), ParseResult::kError);
  EXPECT_EQ(parser.error().reason, "header_section_too_large");
  parser.Reset();
  EXPECT_EQ(parser.Parse("HTTP/1.1 200 " + std::string(40, 'a')), ParseResult::kError);
  EXPECT_EQ(parser.error().reason, "status_line_too_long");
}

TEST(ResponseParserTest, SplitAtEveryByte) {
  const std::string response =
      "HTTP/1.1 200 OK\r\nServer: nginx\r\nTransfer-Encoding: chunked\r\n"
      "Connection: keep-alive\r\nX-Long: " +
      std::string(100, 'x') + "\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
  const size_t head_size = response.find("\r\n\r\n") + 4;
  for (size_t split = 0; split <= head_size; ++split) {
    ResponseParser parser;
    ASSERT_EQ(parser.Parse(std::string_view(response.data(), split)),
              split == head_size ? ParseResult::kComplete : ParseResult::kNeedMore);
    ASSERT_EQ(parser.Parse(response), ParseResult::kComplete);
    EXPECT_EQ(parser.consumed(), head_size);
    EXPECT_EQ(parser.head().framing, BodyFraming::kChunked);
    EXPECT_EQ(parser.head().headers.size(), 4u);
    EXPECT_EQ(parser.head().headers[3].value.size(), 100u);
  }
  ResponseParser parser;
  for (size_t n = 0; n < head_size; ++n) {
    ASSERT_EQ(parser.Parse(std::string_view(response.data(), n)), ParseResult::kNeedMore);
  }
  ASSERT_EQ(parser.Parse(response), ParseResult::kComplete);
  EXPECT_EQ(parser.head().status, 200);
}

TEST(ResponseParserTest, InterimThenFinalResponse) {
  constexpr std::string_view kStream =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n";
  ResponseParser parser;
  ASSERT_EQ(parser.Parse(kStream), ParseResult::kComplete);
  EXPECT_EQ(parser.head().status, 100);
  std::string_view rest = kStream.substr(parser.consumed());
  parser.Reset();
  ASSERT_EQ(parser.Parse(rest), ParseResult::kComplete);
  EXPECT_EQ(parser.head().status, 201);
  EXPECT_EQ(parser.consumed(), rest.size());
}

std::string Outcome(const ResponseParser& parser, ParseResult result) {
  if (result == ParseResult::kNeedMore) return "need-more";
  if (result == ParseResult::kError) return "error " + std::string(parser.error().reason);
  const ResponseHead& head = parser.head();
  std::string out = "complete " + std::to_string(parser.consumed()) + " " +
                    std::to_string(head.status) + " " + std::string(head.reason) + " " +
                    std::to_string(int(head.framing)) + " " + std::to_string(head.content_length) +
                    " " + std::to_string(head.keep_alive);
  for (const HeaderField& field : head.headers) {
    out += " [" + std::string(field.name) + "|" + std::string(field.value) + "]";
  }
  return out;
}

// Mutated responses (seeded) parse alike whole and byte by byte.
TEST(ResponseParserTest, IncrementalParsingAgreesOnMutatedInputs) {
  const std::vector<std::string> seeds = {
      "HTTP/1.1 200 OK\r\nServer: up\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\n",
      "HTTP/1.0 404 Not Found\r\nTransfer-Encoding: chunked\r\nX: a\tb\r\n\r\n",
  };
  constexpr std::string_view kAlphabet("\r\n \t:,\0a1\x7f\x80", 11);
  std::mt19937 rng(5);
  for (int round = 0; round < 2000; ++round) {
    std::string input = seeds[rng() % seeds.size()];
    for (int m = 1 + static_cast<int>(rng() % 3); m > 0; --m) {
      const size_t at = rng() % (input.size() + 1);
      const char c = kAlphabet[rng() % kAlphabet.size()];
      if (rng() % 2 == 0) {
        input.insert(at, 1, c);
      } else if (at < input.size()) {
        input[at] = c;
      }
    }
    ResponseParser whole;
    const std::string expected = Outcome(whole, whole.Parse(input));
    ResponseParser stable;
    ParseResult result = ParseResult::kNeedMore;
    for (size_t n = 0; n <= input.size() && result == ParseResult::kNeedMore; ++n) {
      result = stable.Parse(std::string_view(input.data(), n));
    }
    ASSERT_EQ(Outcome(stable, result), expected) << testing::PrintToString(input);
  }
}

}  // namespace
}  // namespace portico::gateway::http
