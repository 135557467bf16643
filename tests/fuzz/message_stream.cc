#include "tests/fuzz/message_stream.h"

#include <algorithm>
#include <cstdint>

#include "gateway/http/chunked_decoder.h"
#include "gateway/http/request_parser.h"
#include "gateway/http/response_parser.h"
#include "tests/fuzz/fuzz_check.h"

namespace portico::fuzz {
namespace {

using gateway::http::BodyFraming;
using gateway::http::ChunkedDecoder;
using gateway::http::ChunkedStep;
using gateway::http::HeaderList;
using gateway::http::ParseResult;

// Reader hands out `input` in pieces, as successive reads of a socket would.
class Reader {
 public:
  Reader(std::string_view input, size_t piece)
      : input_(input), piece_(std::max<size_t>(1, piece)) {}
  bool done() const { return offset_ >= input_.size(); }
  std::string_view Next() {
    std::string_view out = input_.substr(offset_, piece_);
    offset_ += out.size();
    return out;
  }

 private:
  std::string_view input_;
  size_t piece_;
  size_t offset_ = 0;
};

void AppendHeaders(const HeaderList& headers, std::string* out) {
  for (const auto& field : headers) {
    *out += " [";
    out->append(field.name);
    *out += ": ";
    out->append(field.value);
    *out += "]";
  }
}

// Body reads the body after a head from `pending` (bytes already read) and the reader:
// Content-Length bytes, or a chunked body. Appends its transcript; false when the stream ends.
bool Body(BodyFraming framing, uint64_t length, std::string* pending, Reader* reader,
          std::string* out) {
  if (framing == BodyFraming::kContentLength) {
    uint64_t want = length;
    std::string body;
    while (want > 0) {
      if (pending->empty()) {
        if (reader->done()) {
          *out += " body-truncated(" + std::to_string(body.size()) + ")\n";
          return false;
        }
        pending->append(reader->Next());
        continue;
      }
      size_t take = static_cast<size_t>(std::min<uint64_t>(want, pending->size()));
      body.append(*pending, 0, take);
      pending->erase(0, take);
      want -= take;
    }
    *out += " body(" + body + ")\n";
    return true;
  }
  if (framing == BodyFraming::kChunked) {
    ChunkedDecoder decoder;
    std::string body;
    for (;;) {
      if (pending->empty()) {
        if (reader->done()) {
          *out += " chunked-truncated(" + body + ")\n";
          return false;
        }
        pending->append(reader->Next());
      }
      ChunkedStep step = decoder.Decode(*pending);
      FUZZ_CHECK(step.consumed <= pending->size(), "consumed %zu of %zu", step.consumed,
                 pending->size());
      body.append(step.data);
      pending->erase(0, step.consumed);
      if (step.result == ParseResult::kError) {
        *out += " chunked-error(" + std::to_string(decoder.error().status) + " " +
                std::string(decoder.error().reason) + ")\n";
        return false;
      }
      if (step.result == ParseResult::kComplete) {
        *out += " chunked(" + body + ") trailers(" + std::string(decoder.trailer_block()) + ")\n";
        return true;
      }
      FUZZ_CHECK(step.consumed > 0 || !step.data.empty() || pending->empty(),
                 "no progress on %zu bytes", pending->size());
    }
  }
  *out += framing == BodyFraming::kUntilClose ? " until-close\n" : " no-body\n";
  return framing != BodyFraming::kUntilClose;
}

// Transcript runs `parse(pending)` head after head over the stream, `describe(head, &out)`
// writing each, then reads its body; the loop the request and response transcripts share.
template <typename Parser, typename Parse, typename Describe>
std::string Transcript(std::string_view input, size_t piece, size_t max_messages, Parser& parser,
                       Parse parse, Describe describe) {
  Reader reader(input, piece);
  std::string pending;
  pending.reserve(input.size() + 1);  // a stable buffer: the parser resumes instead of restarting
  std::string out;
  for (size_t n = 0; n < max_messages; ++n) {
    ParseResult result = parse(pending);
    while (result == ParseResult::kNeedMore && !reader.done()) {
      pending.append(reader.Next());
      result = parse(pending);
    }
    if (result == ParseResult::kNeedMore) {
      out += "need-more(" + std::to_string(pending.size()) + ")\n";
      return out;
    }
    if (result == ParseResult::kError) {
      out += "error(" + std::to_string(parser.error().status) + " " +
             std::string(parser.error().reason) + ")\n";
      return out;
    }
    FUZZ_CHECK(parser.consumed() <= pending.size(), "consumed %zu of %zu", parser.consumed(),
               pending.size());
    const auto& head = parser.head();
    describe(head, &out);
    out += " 1." + std::to_string(head.version_minor) +
           " framing=" + std::to_string(static_cast<int>(head.framing)) +
           " cl=" + std::to_string(head.content_length) +
           (head.keep_alive ? " keep-alive" : " close");
    AppendHeaders(head.headers, &out);
    BodyFraming framing = head.framing;
    uint64_t length = head.content_length;
    bool keep_alive = head.keep_alive;
    pending.erase(0, parser.consumed());
    parser.Reset();
    if (!Body(framing, length, &pending, &reader, &out) || !keep_alive) return out;
  }
  return out;
}

}  // namespace

std::string RequestStreamTranscript(std::string_view input, size_t piece, size_t max_messages) {
  gateway::http::RequestParser parser;
  return Transcript(
      input, piece, max_messages, parser,
      [&](std::string_view pending) { return parser.Parse(pending); },
      [](const gateway::http::RequestHead& head, std::string* out) {
        *out += "request " + std::string(head.method) + " " + std::string(head.target) +
                " path=" + std::string(head.path) + " query=" + std::string(head.query) +
                " host=" + std::string(head.host);
      });
}

std::string ResponseStreamTranscript(std::string_view input, size_t piece, bool head_request,
                                     size_t max_messages) {
  gateway::http::ResponseParser parser;
  return Transcript(
      input, piece, max_messages, parser,
      [&](std::string_view pending) { return parser.Parse(pending, head_request); },
      [](const gateway::http::ResponseHead& head, std::string* out) {
        FUZZ_CHECK(head.status >= 100 && head.status <= 599, "status %d", head.status);
        *out += "response " + std::to_string(head.status) + " " + std::string(head.reason);
      });
}

std::string ChunkedTranscript(std::string_view input, size_t piece) {
  Reader reader(input, piece);
  ChunkedDecoder decoder;
  std::string body;
  size_t consumed = 0;
  while (!reader.done()) {
    std::string_view chunk = reader.Next();
    while (!chunk.empty()) {
      ChunkedStep step = decoder.Decode(chunk);
      FUZZ_CHECK(step.consumed <= chunk.size(), "consumed %zu of %zu", step.consumed, chunk.size());
      body.append(step.data);
      consumed += step.consumed;
      chunk.remove_prefix(step.consumed);
      if (step.result == ParseResult::kError) {
        return "error(" + std::string(decoder.error().reason) + ") body=" + body;
      }
      if (step.result == ParseResult::kComplete) {
        FUZZ_CHECK(decoder.body_bytes() == body.size(), "body_bytes %llu, data %zu",
                   static_cast<unsigned long long>(decoder.body_bytes()), body.size());
        return "complete consumed=" + std::to_string(consumed) + " body=" + body +
               " trailers=" + std::string(decoder.trailer_block());
      }
      FUZZ_CHECK(step.consumed > 0 || !step.data.empty(), "no progress on %zu bytes", chunk.size());
    }
  }
  return "need-more body=" + body;
}

}  // namespace portico::fuzz
