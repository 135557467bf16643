// head_writer_test.cc: forwarded request and response heads, byte for byte, and a round trip
// through the parsers.
#include "gateway/http/head_writer.h"

#include <gtest/gtest.h>

#include <string>

#include "gateway/http/request_parser.h"
#include "gateway/http/response_parser.h"

namespace portico::gateway::http {
namespace {

TEST(HeadWriterTest, ForwardedRequestDropsHopByHopAndSetsForwardingFields) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("POST /in?q=1 HTTP/1.1\r\n"
                         "Host: client.example\r\n"
                         "Connection: keep-alive, X-Secret\r\n"
                         "X-Secret: s\r\n"
                         "Keep-Alive: timeout=5\r\n"
                         "Transfer-Encoding: chunked\r\n"
                         "TE: trailers\r\n"
                         "Proxy-Connection: keep-alive\r\n"
                         "Upgrade: h2c\r\n"
                         "X-Forwarded-For: 10.0.0.1\r\n"
                         "Accept: */*\r\n"
                         "x-forwarded-for: 10.0.0.2\r\n"
                         "X-Forwarded-Proto: https\r\n"
                         "\r\n"),
            ParseResult::kComplete);
  const RequestHead& head = parser.head();
  const HeaderField extra[] = {{"X-Added", "yes"}};
  std::string out = "previous bytes|";
  AppendForwardedRequest({.method = head.method,
                          .target = "/rewritten?q=1",
                          .host = "backend.svc:8080",
                          .headers = head.headers.span(),
                          .extra_headers = extra,
                          .client_address = "192.0.2.7",
                          .forwarded_proto = "http",
                          .framing = head.framing},
                         &out);
  EXPECT_EQ(out,
            "previous bytes|"
            "POST /rewritten?q=1 HTTP/1.1\r\n"
            "Host: backend.svc:8080\r\n"
            "Accept: */*\r\n"
            "X-Added: yes\r\n"
            "X-Forwarded-For: 10.0.0.1, 10.0.0.2, 192.0.2.7\r\n"
            "X-Forwarded-Proto: http\r\n"
            "Transfer-Encoding: chunked\r\n"
            "\r\n");
}

TEST(HeadWriterTest, ForwardedRequestKeepsForwardingFieldsWhenNotReplaced) {
  const HeaderField fields[] = {{"Host", "a"},
                                {"Content-Length", "3"},
                                {"X-Forwarded-For", "1.1.1.1"},
                                {"X-Forwarded-Proto", "https"}};
  std::string out;
  AppendForwardedRequest({.method = "PUT", .target = "/x", .host = "b", .headers = fields}, &out);
  EXPECT_EQ(out,
            "PUT /x HTTP/1.1\r\nHost: b\r\nContent-Length: 3\r\nX-Forwarded-For: 1.1.1.1\r\n"
            "X-Forwarded-Proto: https\r\n\r\n");
  out.clear();
  AppendForwardedRequest({.method = "GET", .target = "/", .host = "b", .client_address = "::1"},
                         &out);
  EXPECT_EQ(out, "GET / HTTP/1.1\r\nHost: b\r\nX-Forwarded-For: ::1\r\n\r\n");
}

TEST(HeadWriterTest, ForwardedRequestParsesBack) {
  std::string out;
  const HeaderField fields[] = {{"Host", "a"}, {"Content-Length", "3"}};
  AppendForwardedRequest({.method = "POST",
                          .target = "/p?x=1",
                          .host = "up:80",
                          .headers = fields,
                          .client_address = "127.0.0.1",
                          .forwarded_proto = "http"},
                         &out);
  RequestParser parser;
  ASSERT_EQ(parser.Parse(out), ParseResult::kComplete) << parser.error().reason;
  EXPECT_EQ(parser.head().host, "up:80");
  EXPECT_EQ(parser.head().path, "/p");
  EXPECT_EQ(parser.head().content_length, 3u);
  EXPECT_EQ(parser.consumed(), out.size());
}

TEST(HeadWriterTest, ResponseHead) {
  ResponseParser parser;
  ASSERT_EQ(
      parser.Parse("HTTP/1.1 200 OK\r\nServer: up\r\nConnection: close, X-Hop\r\n"
                   "X-Hop: 1\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n"),
      ParseResult::kComplete);
  std::string out;
  AppendResponseHead({.status = parser.head().status,
                      .reason = parser.head().reason,
                      .headers = parser.head().headers.span(),
                      .framing = BodyFraming::kChunked},
                     &out);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nServer: up\r\nContent-Type: text/html\r\n"
            "Transfer-Encoding: chunked\r\n\r\n");
}

TEST(HeadWriterTest, LocalResponseHead) {
  const HeaderField fields[] = {{"Content-Type", "text/plain"}};
  std::string out;
  AppendResponseHead({.status = 431,
                      .version_minor = 0,
                      .headers = fields,
                      .framing = BodyFraming::kContentLength,
                      .content_length = 12,
                      .connection = "close"},
                     &out);
  EXPECT_EQ(out,
            "HTTP/1.0 431 Request Header Fields Too Large\r\nContent-Type: text/plain\r\n"
            "Content-Length: 12\r\nConnection: close\r\n\r\n");
  // A forwarded Content-Length is not written twice.
  const HeaderField with_length[] = {{"Content-Length", "5"}};
  out.clear();
  AppendResponseHead({.status = 200,
                      .headers = with_length,
                      .framing = BodyFraming::kContentLength,
                      .content_length = 5},
                     &out);
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
}

TEST(HeadWriterTest, ChunkedFramingDropsContentLength) {
  const HeaderField fields[] = {{"Content-Length", "5"}, {"X", "y"}};
  std::string out;
  AppendResponseHead({.status = 200, .headers = fields, .framing = BodyFraming::kChunked}, &out);
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nX: y\r\nTransfer-Encoding: chunked\r\n\r\n");
  out.clear();
  AppendForwardedRequest({.method = "POST",
                          .target = "/",
                          .host = "h",
                          .headers = fields,
                          .framing = BodyFraming::kChunked},
                         &out);
  EXPECT_EQ(out, "POST / HTTP/1.1\r\nHost: h\r\nX: y\r\nTransfer-Encoding: chunked\r\n\r\n");
}

TEST(HeadWriterTest, StatusReasons) {
  EXPECT_EQ(StatusReason(404), "Not Found");
  EXPECT_EQ(StatusReason(421), "Misdirected Request");
  EXPECT_EQ(StatusReason(502), "Bad Gateway");
  EXPECT_EQ(StatusReason(799), "");
}

}  // namespace
}  // namespace portico::gateway::http
