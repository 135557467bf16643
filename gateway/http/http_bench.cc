// http_bench.cc: portico_http_bench, the codec's cost per request (not a test). Build it in a
// release directory: cmake --preset release -B build/rel && cmake --build build/rel --target
// portico_http_bench && build/rel/gateway/http/portico_http_bench
#include <benchmark/benchmark.h>

#include <string>

#include "gateway/http/chunked_decoder.h"
#include "gateway/http/head_writer.h"
#include "gateway/http/request_parser.h"
#include "gateway/http/response_parser.h"

namespace portico::gateway::http {
namespace {

// A typical ~300-byte browser/API request.
constexpr std::string_view kRequest =
    "GET /api/v1/users/42?fields=name,email HTTP/1.1\r\n"
    "Host: api.example.com\r\n"
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0\r\n"
    "Accept: application/json, text/plain, */*\r\n"
    "Accept-Language: en-US,en;q=0.5\r\n"
    "Accept-Encoding: gzip, deflate, br\r\n"
    "Connection: keep-alive\r\n"
    "Cookie: session=abc123\r\n"
    "\r\n";

// What wrk sends.
constexpr std::string_view kWrkRequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";

constexpr std::string_view kResponse =
    "HTTP/1.1 200 OK\r\n"
    "Server: nginx/1.22.1\r\n"
    "Date: Mon, 01 Jan 2024 00:00:00 GMT\r\n"
    "Content-Type: application/json\r\n"
    "Content-Length: 42\r\n"
    "Connection: keep-alive\r\n"
    "\r\n";

void BM_ParseRequest(benchmark::State& state, std::string_view request) {
  RequestParser parser;
  for (auto _ : state) {
    parser.Reset();
    ParseResult result = parser.Parse(request);
    benchmark::DoNotOptimize(result);
    benchmark::DoNotOptimize(parser.head().host.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * request.size()));
  state.counters["bytes"] = static_cast<double>(request.size());
}
BENCHMARK_CAPTURE(BM_ParseRequest, typical, kRequest);
BENCHMARK_CAPTURE(BM_ParseRequest, wrk, kWrkRequest);

// The same request arriving in two reads (first half, then all).
void BM_ParseRequestTwoReads(benchmark::State& state) {
  RequestParser parser;
  for (auto _ : state) {
    parser.Reset();
    benchmark::DoNotOptimize(parser.Parse(kRequest.substr(0, kRequest.size() / 2)));
    benchmark::DoNotOptimize(parser.Parse(kRequest));
  }
}
BENCHMARK(BM_ParseRequestTwoReads);

void BM_ParseResponse(benchmark::State& state) {
  ResponseParser parser;
  for (auto _ : state) {
    parser.Reset();
    benchmark::DoNotOptimize(parser.Parse(kResponse));
  }
  state.counters["bytes"] = static_cast<double>(kResponse.size());
}
BENCHMARK(BM_ParseResponse);

void BM_ParseAndForward(benchmark::State& state) {
  RequestParser parser;
  std::string out;
  out.reserve(4096);
  for (auto _ : state) {
    parser.Reset();
    out.clear();
    parser.Parse(kRequest);
    const RequestHead& head = parser.head();
    AppendForwardedRequest({.method = head.method,
                            .target = head.target,
                            .host = "backend.default.svc:8080",
                            .headers = head.headers.span(),
                            .client_address = "192.0.2.10",
                            .forwarded_proto = "http",
                            .framing = head.framing},
                           &out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_ParseAndForward);

void BM_DecodeChunked(benchmark::State& state) {
  std::string body;
  const std::string chunk(static_cast<size_t>(state.range(0)), 'x');
  for (int i = 0; i < 16; ++i) {
    AppendChunkHeader(chunk.size(), &body);
    body += chunk;
    body += kChunkEnd;
  }
  body += kLastChunk;
  ChunkedDecoder decoder;
  for (auto _ : state) {
    decoder.Reset();
    std::string_view input = body;
    while (!input.empty()) {
      ChunkedStep step = decoder.Decode(input);
      benchmark::DoNotOptimize(step.data.data());
      input.remove_prefix(step.consumed);
      if (step.result != ParseResult::kNeedMore) break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_DecodeChunked)->Arg(16)->Arg(1024);

}  // namespace
}  // namespace portico::gateway::http

BENCHMARK_MAIN();
