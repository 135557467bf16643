// request_parser_test.cc: RequestParser: valid heads, every strict rule (including what
// Boost.Beast 1.74 lets through), limits, incremental and pipelined parsing.
#include "gateway/http/request_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace portico::gateway::http {
namespace {

using namespace std::string_literals;

constexpr std::string_view kTypical =
    "GET /api/v1/users/42?fields=name,email&x=1 HTTP/1.1\r\n"
    "Host: api.example.com\r\n"
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n"
    "Accept: application/json, text/plain;q=0.9\r\n"
    "Accept-Encoding: gzip, deflate\r\n"
    "Connection: keep-alive\r\n"
    "X-Request-Id: 5f2b1c3e-8d7a-4e1b-9c2d-1a2b3c4d5e6f\r\n"
    "Cookie: session=abc123; theme=dark\r\n"
    "\r\n";

// A flattened, buffer-independent rendering of everything a head says.
std::string Describe(const RequestHead& head) {
  std::string out;
  out += "method=" + std::string(head.method) + " id=" + std::to_string(int(head.method_id));
  out += " target=" + std::string(head.target) + " form=" + std::to_string(int(head.target_form));
  out += " scheme=" + std::string(head.scheme) + " authority=" + std::string(head.authority);
  out += " path=" + std::string(head.path) + " query=" + std::string(head.query);
  out += " v=1." + std::to_string(head.version_minor) + " host=" + std::string(head.host);
  out += " framing=" + std::to_string(int(head.framing));
  out += " cl=" + std::to_string(head.content_length);
  out +=
      " ka=" + std::to_string(head.keep_alive) + " expect=" + std::to_string(head.expect_continue);
  out += " upgrade=" + std::string(head.upgrade);
  for (const HeaderField& field : head.headers) {
    out += " [" + std::string(field.name) + "|" + std::string(field.value) + "]";
  }
  return out;
}

TEST(RequestParserTest, ParsesTypicalGet) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse(kTypical), ParseResult::kComplete);
  const RequestHead& head = parser.head();
  EXPECT_EQ(parser.consumed(), kTypical.size());
  EXPECT_EQ(head.method, "GET");
  EXPECT_EQ(head.method_id, Method::kGet);
  EXPECT_EQ(head.target, "/api/v1/users/42?fields=name,email&x=1");
  EXPECT_EQ(head.target_form, TargetForm::kOrigin);
  EXPECT_EQ(head.path, "/api/v1/users/42");
  EXPECT_EQ(head.query, "fields=name,email&x=1");
  EXPECT_EQ(head.version_minor, 1);
  EXPECT_EQ(head.host, "api.example.com");
  EXPECT_EQ(head.framing, BodyFraming::kNone);
  EXPECT_TRUE(head.keep_alive);
  EXPECT_FALSE(head.expect_continue);
  EXPECT_EQ(head.upgrade, "");
  ASSERT_EQ(head.headers.size(), 7u);
  EXPECT_EQ(head.headers[0].name, "Host");
  EXPECT_EQ(head.headers[2].value, "application/json, text/plain;q=0.9");
  EXPECT_EQ(head.headers[6].value, "session=abc123; theme=dark");
  // Views point into the caller's buffer.
  EXPECT_EQ(head.method.data(), kTypical.data());
}

TEST(RequestParserTest, TrimsOptionalWhitespaceAroundValues) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost:\t a.b \t\r\nX-Empty:\r\nX-In: a  b\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().host, "a.b");
  EXPECT_EQ(parser.head().headers[1].value, "");
  EXPECT_EQ(parser.head().headers[2].value, "a  b");
}

TEST(RequestParserTest, ContentLengthFraming) {
  constexpr std::string_view kRequest =
      "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 1234\r\n\r\nbody";
  RequestParser parser;
  ASSERT_EQ(parser.Parse(kRequest), ParseResult::kComplete);
  EXPECT_EQ(parser.head().method_id, Method::kPost);
  EXPECT_EQ(parser.head().framing, BodyFraming::kContentLength);
  EXPECT_EQ(parser.head().content_length, 1234u);
  EXPECT_EQ(kRequest.substr(parser.consumed()), "body");
}

TEST(RequestParserTest, LargestContentLength) {
  RequestParser parser;
  ASSERT_EQ(
      parser.Parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775807\r\n\r\n"),
      ParseResult::kComplete);
  EXPECT_EQ(parser.head().content_length, 9223372036854775807u);
  parser.Reset();
  ASSERT_EQ(parser.Parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 007\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().content_length, 7u);
}

TEST(RequestParserTest, ChunkedFraming) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: ChunKed\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().framing, BodyFraming::kChunked);
  // Empty list elements are allowed (RFC 9110 §5.6.1).
  parser.Reset();
  ASSERT_EQ(parser.Parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked ,\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().framing, BodyFraming::kChunked);
}

TEST(RequestParserTest, KeepAliveDecisions) {
  struct Case {
    std::string_view request;
    bool keep_alive;
  };
  const Case cases[] = {
      {"GET / HTTP/1.1\r\nHost: h\r\n\r\n", true},
      {"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false},
      {"GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, CLOSE\r\n\r\n", false},
      {"GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nConnection: close\r\n\r\n", false},
      {"GET / HTTP/1.0\r\n\r\n", false},
      {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true},
      {"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false},
  };
  for (const Case& c : cases) {
    RequestParser parser;
    ASSERT_EQ(parser.Parse(c.request), ParseResult::kComplete) << c.request;
    EXPECT_EQ(parser.head().keep_alive, c.keep_alive) << c.request;
  }
}

TEST(RequestParserTest, Http10WithoutHost) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("GET /x HTTP/1.0\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().version_minor, 0);
  EXPECT_EQ(parser.head().host, "");
}

TEST(RequestParserTest, ExpectAndUpgrade) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\n"
                         "Content-Length: 3\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_TRUE(parser.head().expect_continue);
  EXPECT_EQ(parser.head().upgrade, "websocket");
  // HTTP/1.0 requests' 100-continue is ignored (RFC 9110 §10.1.1).
  parser.Reset();
  ASSERT_EQ(parser.Parse("PUT /f HTTP/1.0\r\nExpect: 100-continue\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_FALSE(parser.head().expect_continue);
}

TEST(RequestParserTest, H2cUpgradeIsAPlainRequest) {
  for (std::string_view upgrade : {"h2c", "websocket, H2C", "h2c/1"}) {
    RequestParser parser;
    ASSERT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                           "Upgrade: " +
                           std::string(upgrade) + "\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"),
              ParseResult::kComplete);
    EXPECT_EQ(parser.head().upgrade, "") << upgrade;
  }
}

TEST(RequestParserTest, UpgradeNeedsConnectionUpgradeAndHttp11) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\n"
                         "Upgrade: websocket\r\nUpgrade: other\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().upgrade, "websocket");  // the first field
  parser.Reset();
  ASSERT_EQ(parser.Parse("GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().upgrade, "");  // no "upgrade" in Connection: not a request to switch
  parser.Reset();
  ASSERT_EQ(parser.Parse("GET /ws HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().upgrade, "");  // ignored in HTTP/1.0 (RFC 9110 §7.8)
}

TEST(RequestParserTest, AbsoluteFormTakesHostFromTarget) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("GET HTTP://Example.com:8080/a/b?q=1 HTTP/1.1\r\nHost: other\r\n\r\n"),
            ParseResult::kComplete);
  const RequestHead& head = parser.head();
  EXPECT_EQ(head.target_form, TargetForm::kAbsolute);
  EXPECT_EQ(head.scheme, "HTTP");
  EXPECT_EQ(head.authority, "Example.com:8080");
  EXPECT_EQ(head.host, "Example.com:8080");
  EXPECT_EQ(head.path, "/a/b");
  EXPECT_EQ(head.query, "q=1");
  parser.Reset();
  ASSERT_EQ(parser.Parse("GET https://h.io?x HTTP/1.1\r\nHost: h.io\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().path, "/");
  EXPECT_EQ(parser.head().query, "x");
  parser.Reset();
  ASSERT_EQ(parser.Parse("GET http://[::1]:80 HTTP/1.1\r\nHost: x\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().host, "[::1]:80");
  EXPECT_EQ(parser.head().path, "/");
}

TEST(RequestParserTest, HostByTheGrammar) {
  for (std::string_view host : {"a.test", "a.test:80", "a.test:", "[::1]:8080", "[v1.x]",
                                "127.0.0.1", "%41.test", "!$&'()*+,;=:1"}) {
    RequestParser parser;
    const std::string request = "GET / HTTP/1.1\r\nHost: " + std::string(host) + "\r\n\r\n";
    ASSERT_EQ(parser.Parse(request), ParseResult::kComplete)
        << host << ": " << parser.error().reason;
    EXPECT_EQ(parser.head().host, host);
  }
  // An empty Host is what a client sends for a target without authority (RFC 9112 §3.2).
  RequestParser parser;
  ASSERT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost:\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().host, "");
  parser.Reset();
  ASSERT_EQ(parser.Parse("GET http://[v1.x]:/a HTTP/1.1\r\nHost: [::1]\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().host, "[v1.x]:");
}

TEST(RequestParserTest, TargetAcceptsUnwiseButHarmlessBytes) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("GET /a/%7E/b?q={\"x\"}|<y>^`\\&z=1 HTTP/1.1\r\nHost: h\r\n\r\n"),
            ParseResult::kComplete);
  EXPECT_EQ(parser.head().path, "/a/%7E/b");
  EXPECT_EQ(parser.head().query, "q={\"x\"}|<y>^`\\&z=1");
}

TEST(RequestParserTest, AsteriskFormForOptions) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().target_form, TargetForm::kAsterisk);
  EXPECT_EQ(parser.head().path, "*");
  EXPECT_EQ(parser.head().method_id, Method::kOptions);
}

TEST(RequestParserTest, MethodsAreCaseSensitiveTokens) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("get / HTTP/1.1\r\nHost: h\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().method_id, Method::kOther);
  parser.Reset();
  ASSERT_EQ(parser.Parse("PROPFIND / HTTP/1.1\r\nHost: h\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().method, "PROPFIND");
  for (std::string_view method : {"HEAD", "PUT", "DELETE", "PATCH", "TRACE", "OPTIONS"}) {
    parser.Reset();
    std::string request = std::string(method) + " / HTTP/1.1\r\nHost: h\r\n\r\n";
    ASSERT_EQ(parser.Parse(request), ParseResult::kComplete);
    EXPECT_NE(parser.head().method_id, Method::kOther) << method;
  }
}

TEST(RequestParserTest, SkipsLeadingEmptyLines) {
  RequestParser parser;
  constexpr std::string_view kRequest = "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n";
  ASSERT_EQ(parser.Parse(kRequest), ParseResult::kComplete);
  EXPECT_EQ(parser.consumed(), kRequest.size());
  EXPECT_EQ(parser.head().path, "/");
}

TEST(RequestParserTest, IncompleteHeadNeedsMore) {
  RequestParser parser;
  EXPECT_EQ(parser.Parse(""), ParseResult::kNeedMore);
  EXPECT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: h\r\n"), ParseResult::kNeedMore);
  EXPECT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: h\r\n\r"), ParseResult::kNeedMore);
}

TEST(RequestParserTest, PipelinedRequests) {
  const std::string buffer = std::string(kTypical) +
                             "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok" +
                             "DELETE /c HTTP/1.1\r\nHost: h\r\n\r\nGET /partial HT";
  RequestParser parser;
  std::string_view rest = buffer;
  ASSERT_EQ(parser.Parse(rest), ParseResult::kComplete);
  EXPECT_EQ(parser.head().path, "/api/v1/users/42");
  rest.remove_prefix(parser.consumed());
  parser.Reset();
  ASSERT_EQ(parser.Parse(rest), ParseResult::kComplete);
  EXPECT_EQ(parser.head().path, "/b");
  rest.remove_prefix(parser.consumed());
  EXPECT_EQ(rest.substr(0, 2), "ok");
  rest.remove_prefix(parser.head().content_length);
  parser.Reset();
  ASSERT_EQ(parser.Parse(rest), ParseResult::kComplete);
  EXPECT_EQ(parser.head().method_id, Method::kDelete);
  rest.remove_prefix(parser.consumed());
  parser.Reset();
  EXPECT_EQ(parser.Parse(rest), ParseResult::kNeedMore);
  EXPECT_EQ(rest, "GET /partial HT");
}

TEST(RequestParserTest, ResultIsStickyUntilReset) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), ParseResult::kComplete);
  EXPECT_EQ(parser.Parse("garbage"), ParseResult::kComplete);
  EXPECT_EQ(parser.head().host, "a");
  parser.Reset();
  EXPECT_EQ(parser.Parse("GET / HTTP/1.1\nHost: a\r\n\r\n"), ParseResult::kError);
  EXPECT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), ParseResult::kError);
}

std::string RichRequest() {
  return "POST http://api.example.com/v2/orders?id=7&x=%20y HTTP/1.1\r\n"
         "Host: api.example.com\r\n"
         "User-Agent: curl/7.88.1\r\n"
         "Accept: */*\r\n"
         "Transfer-Encoding: chunked\r\n"
         "Expect: 100-continue\r\n"
         "Connection: keep-alive, X-Hop\r\n"
         "X-Hop: 1\r\n"
         "X-Obs-Text: caf\xc3\xa9\r\n"
         "X-Empty:\r\n"
         "\r\n";
}

TEST(RequestParserTest, SplitAtEveryByteInStableBuffer) {
  const std::string request = RichRequest();
  RequestParser whole;
  ASSERT_EQ(whole.Parse(request), ParseResult::kComplete);
  const std::string expected = Describe(whole.head());
  // The caller's buffer keeps its address; it grows one byte per call.
  RequestParser parser;
  for (size_t n = 0; n < request.size(); ++n) {
    ASSERT_EQ(parser.Parse(std::string_view(request.data(), n)), ParseResult::kNeedMore) << n;
  }
  ASSERT_EQ(parser.Parse(request), ParseResult::kComplete);
  EXPECT_EQ(Describe(parser.head()), expected);
  EXPECT_EQ(parser.consumed(), request.size());
}

TEST(RequestParserTest, SplitInTwoAtEveryByte) {
  const std::string request = RichRequest() + "5\r\nhello\r\n0\r\n\r\n";
  const size_t head_size = RichRequest().size();
  RequestParser whole;
  ASSERT_EQ(whole.Parse(request), ParseResult::kComplete);
  const std::string expected = Describe(whole.head());
  for (size_t split = 0; split <= head_size; ++split) {
    RequestParser parser;
    const ParseResult first = parser.Parse(std::string_view(request.data(), split));
    ASSERT_EQ(first, split == head_size ? ParseResult::kComplete : ParseResult::kNeedMore);
    ASSERT_EQ(parser.Parse(request), ParseResult::kComplete) << split;
    EXPECT_EQ(Describe(parser.head()), expected) << split;
    EXPECT_EQ(parser.consumed(), head_size);
  }
}

TEST(RequestParserTest, MovedBufferRestartsFromItsFirstByte) {
  const std::string request = RichRequest();
  RequestParser whole;
  ASSERT_EQ(whole.Parse(request), ParseResult::kComplete);
  const std::string expected = Describe(whole.head());
  // Each call gets a fresh copy (a new address), as after a reallocation.
  RequestParser parser;
  std::vector<std::string> copies;
  for (size_t n = 1; n <= request.size(); n += 7) {
    copies.push_back(request.substr(0, n));
    ASSERT_EQ(parser.Parse(copies.back()), ParseResult::kNeedMore);
  }
  std::string last = request;
  ASSERT_EQ(parser.Parse(last), ParseResult::kComplete);
  EXPECT_EQ(Describe(parser.head()), expected);
  EXPECT_EQ(parser.head().method.data(), last.data());
}

TEST(RequestParserTest, ManyHeadersSpillPastInlineCapacity) {
  std::string request = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 99; ++i)
    request += "X-" + std::to_string(i) + ": v" + std::to_string(i) + "\r\n";
  request += "\r\n";
  RequestParser parser;
  ASSERT_EQ(parser.Parse(request), ParseResult::kComplete);
  ASSERT_EQ(parser.head().headers.size(), 100u);
  EXPECT_EQ(parser.head().headers[99].name, "X-98");
  EXPECT_EQ(parser.head().headers[99].value, "v98");
  // Reused after Reset: the same result.
  parser.Reset();
  ASSERT_EQ(parser.Parse(request), ParseResult::kComplete);
  EXPECT_EQ(parser.head().headers.size(), 100u);
}

TEST(RequestParserTest, LimitsAtTheBoundaryPass) {
  HeadLimits limits;
  limits.max_request_line = 30;
  limits.max_headers = 2;
  const std::string line = "GET /" + std::string(30 - 5 - 9, 'a') + " HTTP/1.1";
  ASSERT_EQ(line.size(), 30u);
  const std::string request = line + "\r\nHost: h\r\nX: y\r\n\r\n";
  limits.max_head_bytes = request.size();
  RequestParser parser(limits);
  EXPECT_EQ(parser.Parse(request), ParseResult::kComplete);
}

// A request rejected with a status and a reason.
struct RejectCase {
  std::string name;
  std::string request;
  int status;
  std::string reason;
};

std::ostream& operator<<(std::ostream& os, const RejectCase& c) { return os << c.name; }

std::string Req(std::string_view fields) {
  return "POST / HTTP/1.1\r\nHost: h\r\n" + std::string(fields) + "\r\n";
}

std::vector<RejectCase> RejectCases() {
  return {
      // Ambiguous framing.
      {"ClWithTe", Req("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"), 400,
       "content_length_with_transfer_encoding"},
      {"TeWithCl", Req("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"), 400,
       "content_length_with_transfer_encoding"},
      {"DuplicateClDiffering", Req("Content-Length: 5\r\nContent-Length: 6\r\n"), 400,
       "duplicate_content_length"},
      // A proxy drops the fields Connection names: dropping Content-Length would forward a
      // body without its framing (the upstream would read it as the next request).
      {"ConnectionListsContentLength",
       Req("Connection: close, Content-Length\r\nContent-Length: 5\r\n"), 400,
       "connection_lists_content_length"},
      {"ConnectionListsContentLengthWithoutOne", Req("Connection: CONTENT-LENGTH\r\n"), 400,
       "connection_lists_content_length"},
      // Beast 1.74 accepts repeated equal Content-Length.
      {"DuplicateClEqual", Req("Content-Length: 5\r\nContent-Length: 5\r\n"), 400,
       "duplicate_content_length"},
      {"ClCommaList", Req("Content-Length: 5, 5\r\n"), 400, "invalid_content_length"},
      {"ClPlusSign", Req("Content-Length: +5\r\n"), 400, "invalid_content_length"},
      {"ClMinusSign", Req("Content-Length: -5\r\n"), 400, "invalid_content_length"},
      {"ClHex", Req("Content-Length: 0x5\r\n"), 400, "invalid_content_length"},
      {"ClTrailingLetter", Req("Content-Length: 5a\r\n"), 400, "invalid_content_length"},
      {"ClInnerSpace", Req("Content-Length: 5 5\r\n"), 400, "invalid_content_length"},
      {"ClEmpty", Req("Content-Length: \r\n"), 400, "invalid_content_length"},
      {"ClOverflow", Req("Content-Length: 99999999999999999999999\r\n"), 400,
       "invalid_content_length"},
      {"ClTwoToThe63", Req("Content-Length: 9223372036854775808\r\n"), 400,
       "invalid_content_length"},
      // Beast 1.74 accepts a Transfer-Encoding not ending in chunked.
      {"TeChunkedThenGzip", Req("Transfer-Encoding: chunked, gzip\r\n"), 400,
       "transfer_encoding_not_chunked"},
      {"TeGzipOnly", Req("Transfer-Encoding: gzip\r\n"), 400, "transfer_encoding_not_chunked"},
      {"TeIdentity", Req("Transfer-Encoding: identity\r\n"), 400, "transfer_encoding_not_chunked"},
      {"TeEmpty", Req("Transfer-Encoding: \r\n"), 400, "transfer_encoding_not_chunked"},
      {"TeChunkedWithParameter", Req("Transfer-Encoding: chunked;q=1\r\n"), 400,
       "transfer_encoding_not_chunked"},
      {"TeLaterLineNotChunked", Req("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n"),
       400, "transfer_encoding_not_chunked"},
      {"TeChunkedTwice", Req("Transfer-Encoding: chunked, chunked\r\n"), 400, "chunked_repeated"},
      {"TeChunkedTwoLines", Req("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"),
       400, "chunked_repeated"},
      {"TeInvalidCoding", Req("Transfer-Encoding: g{z}ip, chunked\r\n"), 400,
       "invalid_transfer_encoding"},
      {"TeGzipThenChunked", Req("Transfer-Encoding: gzip, chunked\r\n"), 501,
       "unsupported_transfer_coding"},
      {"TeUnknownThenChunked", Req("Transfer-Encoding: foo, chunked\r\n"), 501,
       "unsupported_transfer_coding"},
      {"TeInHttp10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
       "transfer_encoding_in_http10"},
      // Field syntax. Beast 1.74 accepts obs-fold.
      {"ObsFoldSpace", Req("X-A: a\r\n b\r\n"), 400, "obs_fold"},
      {"ObsFoldTab", Req("X-A: a\r\n\tb\r\n"), 400, "obs_fold"},
      {"WhitespaceLineAfterRequestLine", "GET / HTTP/1.1\r\n Host: h\r\n\r\n", 400, "obs_fold"},
      {"SpaceBeforeColon", Req("Content-Length : 5\r\n"), 400, "whitespace_before_colon"},
      {"TabBeforeColon", Req("X-A\t: 5\r\n"), 400, "whitespace_before_colon"},
      {"MissingColon", Req("X-A\r\n"), 400, "missing_colon"},
      {"EmptyFieldName", Req(": v\r\n"), 400, "invalid_header_name"},
      {"InvalidNameChar", Req("X@A: v\r\n"), 400, "invalid_header_name"},
      {"NonAsciiName", Req("X-\xc3\xa9: v\r\n"), 400, "invalid_header_name"},
      {"NulInValue", Req("X-A: a\0b\r\n"s), 400, "invalid_header_value"},
      {"CtlInValue",
       Req("X-A: a\x01"
           "b\r\n"),
       400, "invalid_header_value"},
      {"VerticalTabInValue",
       Req("X-A: a\x0b"
           "b\r\n"),
       400, "invalid_header_value"},
      {"DelInValue",
       Req("X-A: a\x7f"
           "b\r\n"),
       400, "invalid_header_value"},
      {"EscInValue", Req("X-A: \x1b[31m\r\n"), 400, "invalid_header_value"},
      // Line endings.
      {"BareLfEverywhere", "GET / HTTP/1.1\nHost: h\n\n", 400, "bare_lf"},
      {"BareLfInField", "GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n", 400, "bare_lf"},
      {"BareLfTerminator", "GET / HTTP/1.1\r\nHost: h\r\n\n", 400, "bare_lf"},
      {"BareLfLeadingLine", "\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "bare_lf"},
      {"BareCrInValue", Req("X-A: a\rb\r\n"), 400, "bare_cr"},
      {"BareCrEndsValue", Req("X-A: a\r\rX-B: b\r\n"), 400, "bare_cr"},
      {"BareCrInName", Req("X\r-A: b\r\n"), 400, "bare_cr"},
      {"BareCrInTarget", "GET /a\rb HTTP/1.1\r\nHost: h\r\n\r\n", 400, "bare_cr"},
      {"BareCrInVersion", "GET / HTTP/1.1\r\r\nHost: h\r\n\r\n", 400, "bare_cr"},
      // Request line.
      {"InvalidMethodChar", "GE(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_method"},
      {"EmptyMethod", " / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_method"},
      {"TlsClientHello", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"s, 400, "invalid_method"},
      {"TabAfterMethod", "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_method"},
      {"DoubleSpace", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"RelativeTarget", "GET foo HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"AsteriskForGet", "GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"Fragment", "GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"DelInTarget", "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"NulInTarget", "GET /a\0 HTTP/1.1\r\nHost: h\r\n\r\n"s, 400, "invalid_target"},
      {"NonAsciiTarget", "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"FtpScheme", "GET ftp://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"SchemeWithoutSlashes", "GET http:/h HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"EmptyAuthority", "GET http:///a HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"UserinfoInAuthority", "GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"AuthorityFormForGet", "GET h:443 HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_target"},
      {"Connect", "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n", 501, "connect_not_supported"},
      {"NoVersion", "GET /\r\nHost: h\r\n\r\n", 400, "invalid_request_line"},
      {"TrailingSpace", "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400, "invalid_version"},
      {"LowerCaseVersion", "GET / http/1.1\r\nHost: h\r\n\r\n", 400, "invalid_version"},
      {"VersionSuffix", "GET / HTTP/1.1x\r\nHost: h\r\n\r\n", 400, "invalid_version"},
      {"VersionTwoDigits", "GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400, "invalid_version"},
      {"Http2", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505, "http_version_not_supported"},
      {"Http12", "GET / HTTP/1.2\r\nHost: h\r\n\r\n", 505, "http_version_not_supported"},
      {"Http09", "GET / HTTP/0.9\r\nHost: h\r\n\r\n", 505, "http_version_not_supported"},
      // Host.
      {"MissingHost", "GET / HTTP/1.1\r\nX: y\r\n\r\n", 400, "missing_host"},
      {"MissingHostAbsoluteForm", "GET http://h/ HTTP/1.1\r\n\r\n", 400, "missing_host"},
      {"TwoHosts", "GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400, "multiple_host"},
      {"TwoHostsHttp10", "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400, "multiple_host"},
      {"HostWithSpace", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "invalid_host"},
      {"HostWithSlash", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "invalid_host"},
      {"HostWithUserinfo", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400, "invalid_host"},
      {"HostPortNotDigits", "GET / HTTP/1.1\r\nHost: a.test:80x\r\n\r\n", 400, "invalid_host"},
      {"HostPortNegative", "GET / HTTP/1.1\r\nHost: a.test:-1\r\n\r\n", 400, "invalid_host"},
      {"HostPortTooLarge", "GET / HTTP/1.1\r\nHost: a.test:99999\r\n\r\n", 400, "invalid_host"},
      {"HostIpv6Unbracketed", "GET / HTTP/1.1\r\nHost: ::1\r\n\r\n", 400, "invalid_host"},
      {"HostIpv6Unclosed", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400, "invalid_host"},
      {"HostIpv6ZoneId", "GET / HTTP/1.1\r\nHost: [fe80::1%25eth0]\r\n\r\n", 400, "invalid_host"},
      {"HostBracketsInName", "GET / HTTP/1.1\r\nHost: a[b]\r\n\r\n", 400, "invalid_host"},
      {"HostShortEscape", "GET / HTTP/1.1\r\nHost: %4\r\n\r\n", 400, "invalid_host"},
      {"HostBadEscape", "GET / HTTP/1.1\r\nHost: %zz\r\n\r\n", 400, "invalid_host"},
      {"HostOnlyPort", "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", 400, "invalid_host"},
      {"HostInvalidWithAbsoluteForm", "GET http://a.test/ HTTP/1.1\r\nHost: a.test:80x\r\n\r\n",
       400, "invalid_host"},
      {"AbsoluteFormPortNotDigits", "GET http://a.test:80x/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400,
       "invalid_target"},
      {"AbsoluteFormPortTooLarge", "GET http://a.test:65536 HTTP/1.1\r\nHost: a.test\r\n\r\n", 400,
       "invalid_target"},
      {"AbsoluteFormEmptyHost", "GET http://:80/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400,
       "invalid_target"},
      {"AbsoluteFormBadIpv6", "GET http://[::g]/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400,
       "invalid_target"},
      {"AbsoluteFormBadEscape", "GET http://%zz/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400,
       "invalid_target"},
      {"AbsoluteFormUserinfoBeforePort", "GET http://u:p@a.test:80/ HTTP/1.1\r\nHost: a\r\n\r\n",
       400, "invalid_target"},
      // Expect.
      {"UnknownExpectation", Req("Expect: 200-ok\r\n"), 417, "unsupported_expectation"},
  };
}

class RejectTest : public testing::TestWithParam<RejectCase> {};

TEST_P(RejectTest, WholeBuffer) {
  const RejectCase& c = GetParam();
  RequestParser parser;
  ASSERT_EQ(parser.Parse(c.request), ParseResult::kError) << Describe(parser.head());
  EXPECT_EQ(parser.error().status, c.status);
  EXPECT_EQ(parser.error().reason, c.reason);
}

TEST_P(RejectTest, ByteByByte) {
  const RejectCase& c = GetParam();
  RequestParser parser;
  ParseResult result = ParseResult::kNeedMore;
  for (size_t n = 1; n <= c.request.size() && result == ParseResult::kNeedMore; ++n) {
    result = parser.Parse(std::string_view(c.request.data(), n));
  }
  ASSERT_EQ(result, ParseResult::kError);
  EXPECT_EQ(parser.error().status, c.status);
  EXPECT_EQ(parser.error().reason, c.reason);
}

INSTANTIATE_TEST_SUITE_P(Strict, RejectTest, testing::ValuesIn(RejectCases()),
                         [](const testing::TestParamInfo<RejectCase>& info) {
                           return info.param.name;
                         });

TEST(RequestParserLimitsTest, RequestLineTooLong) {
  HeadLimits limits;
  limits.max_request_line = 64;
  RequestParser parser(limits);
  const std::string line = "GET /" + std::string(60, 'a') + " HTTP/1.1";
  EXPECT_EQ(parser.Parse(line + "\r\nHost: h\r\n\r\n"), ParseResult::kError);
  EXPECT_EQ(parser.error().status, 414);
  EXPECT_EQ(parser.error().reason, "request_line_too_long");
  // Without waiting for the line end.
  parser.Reset();
  EXPECT_EQ(parser.Parse(line.substr(0, 66)), ParseResult::kError);
  EXPECT_EQ(parser.error().status, 414);
  parser.Reset();
  EXPECT_EQ(parser.Parse(line.substr(0, 65)), ParseResult::kNeedMore);
}

TEST(RequestParserLimitsTest, FieldLineTooLong) {
  HeadLimits limits;
  limits.max_field_line = 20;
  RequestParser parser(limits);
  const std::string at_limit = "X: " + std::string(17, 'v');  // 20 bytes without CRLF
  EXPECT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: h\r\n" + at_limit + "\r\n\r\n"),
            ParseResult::kComplete);
  const std::string request = "GET / HTTP/1.1\r\nHost: h\r\n" + at_limit + "v\r\n\r\n";
  parser.Reset();
  EXPECT_EQ(parser.Parse(request), ParseResult::kError);
  EXPECT_EQ(parser.error().status, 431);
  EXPECT_EQ(parser.error().reason, "header_line_too_long");
  // Without waiting for the line end: 22 bytes without LF cannot be a line of 20 and a CR.
  const size_t line_start = request.find("X:");
  parser.Reset();
  EXPECT_EQ(parser.Parse(request.substr(0, line_start + 22)), ParseResult::kError);
  EXPECT_EQ(parser.error().reason, "header_line_too_long");
  parser.Reset();
  EXPECT_EQ(parser.Parse(request.substr(0, line_start + 21)), ParseResult::kNeedMore);
}

TEST(RequestParserLimitsTest, HeadTooLarge) {
  HeadLimits limits;
  limits.max_head_bytes = 100;
  RequestParser parser(limits);
  const std::string request =
      "GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(80, 'v') + "\r\n\r\n";
  EXPECT_EQ(parser.Parse(request), ParseResult::kError);
  EXPECT_EQ(parser.error().status, 431);
  EXPECT_EQ(parser.error().reason, "header_section_too_large");
  // An unfinished line past the limit fails at once.
  parser.Reset();
  EXPECT_EQ(parser.Parse(request.substr(0, 101)), ParseResult::kError);
  EXPECT_EQ(parser.error().status, 431);
  parser.Reset();
  EXPECT_EQ(parser.Parse(request.substr(0, 100)), ParseResult::kNeedMore);
}

TEST(RequestParserLimitsTest, LeadingEmptyLinesCountTowardsTheHead) {
  HeadLimits limits;
  limits.max_head_bytes = 64;
  RequestParser parser(limits);
  std::string request;
  for (int i = 0; i < 40; ++i) request += "\r\n";
  request += "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
  EXPECT_EQ(parser.Parse(request), ParseResult::kError);
  EXPECT_EQ(parser.error().status, 431);
}

TEST(RequestParserLimitsTest, TooManyHeaders) {
  HeadLimits limits;
  limits.max_headers = 3;
  RequestParser parser(limits);
  EXPECT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n"),
            ParseResult::kComplete);
  parser.Reset();
  EXPECT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"),
            ParseResult::kError);
  EXPECT_EQ(parser.error().status, 431);
  EXPECT_EQ(parser.error().reason, "too_many_headers");
}

// Outcome of parsing `input` one way, rendered buffer-independently.
std::string Outcome(RequestParser& parser, ParseResult result) {
  switch (result) {
    case ParseResult::kNeedMore:
      return "need-more";
    case ParseResult::kError:
      return "error " + std::to_string(parser.error().status) + " " +
             std::string(parser.error().reason);
    case ParseResult::kComplete:
      return "complete " + std::to_string(parser.consumed()) + " " + Describe(parser.head());
  }
  return "";
}

// Mutated requests (seeded, so reproducible) parse to the same outcome whether given whole,
// byte by byte in a stable buffer, or in pieces copied to a new buffer each time: the one-pass
// fast path, the line-by-line slow path and the restart agree on every input.
void CheckIncrementalAgreement(const HeadLimits& limits, uint32_t seed, int rounds) {
  const std::vector<std::string> seeds = {
      std::string(kTypical),
      RichRequest(),
      "POST /a HTTP/1.0\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nabc",
      "\r\nOPTIONS * HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n",
  };
  constexpr std::string_view kAlphabet("\r\n \t:,;\0a/\x7f\x80#*?1-", 17);
  std::mt19937 rng(seed);
  int complete = 0;
  int errors = 0;
  for (int round = 0; round < rounds; ++round) {
    std::string input = seeds[rng() % seeds.size()];
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations; ++m) {
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
    RequestParser whole(limits);
    const std::string expected = Outcome(whole, whole.Parse(input));
    complete += expected.starts_with("complete") ? 1 : 0;
    errors += expected.starts_with("error") ? 1 : 0;

    RequestParser stable(limits);
    ParseResult result = ParseResult::kNeedMore;
    for (size_t n = 0; n <= input.size() && result == ParseResult::kNeedMore; ++n) {
      result = stable.Parse(std::string_view(input.data(), n));
    }
    ASSERT_EQ(Outcome(stable, result), expected)
        << "byte by byte: " << testing::PrintToString(input);

    RequestParser moving(limits);
    std::string copy;
    result = ParseResult::kNeedMore;
    for (size_t n = 0; result == ParseResult::kNeedMore;
         n = std::min(input.size(), n + 1 + rng() % 40)) {
      copy = std::string(input.substr(0, n));  // a new buffer each time
      result = moving.Parse(copy);
      if (n == input.size()) break;
    }
    ASSERT_EQ(Outcome(moving, result), expected) << "moving: " << testing::PrintToString(input);
  }
  // The mutations hit both sides.
  EXPECT_GT(complete, rounds / 20);
  EXPECT_GT(errors, rounds / 20);
}

TEST(RequestParserTest, IncrementalParsingAgreesOnMutatedInputs) {
  CheckIncrementalAgreement(HeadLimits{}, 20240501, 3000);
}

// The same near the limits, where a 414 or 431 competes with a syntax error.
TEST(RequestParserTest, IncrementalParsingAgreesNearLimits) {
  HeadLimits limits;
  limits.max_request_line = 45;
  limits.max_field_line = 30;
  limits.max_head_bytes = 150;
  limits.max_headers = 5;
  CheckIncrementalAgreement(limits, 77, 3000);
}

}  // namespace
}  // namespace portico::gateway::http
