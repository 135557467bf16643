// head_writer.cc: see head_writer.h.
#include "gateway/http/head_writer.h"

#include <cstring>

namespace portico::gateway::http {
namespace {

// Writer copies pieces to a region sized beforehand by an upper bound.
class Writer {
 public:
  explicit Writer(char* p) : p_(p) {}
  void Put(std::string_view s) {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void Put(char c) { *p_++ = c; }
  void Field(std::string_view name, std::string_view value) {
    Put(name);
    Put(": ");
    Put(value);
    Put("\r\n");
  }
  void Number(uint64_t value) {
    char digits[20];
    size_t count = 0;
    do {
      digits[count++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    while (count > 0) Put(digits[--count]);
  }
  char* position() const { return p_; }

 private:
  char* p_;
};

size_t FieldsBound(std::span<const HeaderField> fields) {
  size_t bound = 0;
  for (const HeaderField& field : fields) bound += field.name.size() + field.value.size() + 4;
  return bound;
}

// Reserve grows `out` by `bound` bytes and returns where they start; Finish trims it back.
char* Reserve(std::string* out, size_t bound) {
  const size_t old = out->size();
  out->resize(old + bound);
  return out->data() + old;
}

void Finish(std::string* out, const Writer& writer) {
  out->resize(static_cast<size_t>(writer.position() - out->data()));
}

constexpr std::string_view kXForwardedFor = "X-Forwarded-For";
constexpr std::string_view kXForwardedProto = "X-Forwarded-Proto";

}  // namespace

void AppendForwardedRequest(const ForwardedRequest& request, std::string* out) {
  const HopByHopFilter hop_by_hop(request.headers);
  const size_t bound = request.method.size() + request.target.size() + 12 + 8 +
                       request.host.size() + FieldsBound(request.headers) +
                       FieldsBound(request.extra_headers) + kXForwardedFor.size() + 4 +
                       request.client_address.size() + kXForwardedProto.size() + 4 +
                       request.forwarded_proto.size() + 30 + 32 + request.upgrade.size() + 2;
  Writer w(Reserve(out, bound));
  w.Put(request.method);
  w.Put(' ');
  w.Put(request.target);
  w.Put(" HTTP/1.1\r\n");
  w.Field("Host", request.host);
  const bool replace_xff = !request.client_address.empty();
  const bool replace_xfp = !request.forwarded_proto.empty();
  const bool chunked = request.framing == BodyFraming::kChunked;
  bool has_xff = false;
  for (const HeaderField& field : request.headers) {
    const std::string_view name = field.name;
    if (name.size() == 4 && TokenEquals(name, "host")) continue;
    if (name.size() == 15 && TokenEquals(name, "x-forwarded-for")) {
      has_xff = true;
      if (replace_xff) continue;
    }
    if (replace_xfp && name.size() == 17 && TokenEquals(name, "x-forwarded-proto")) continue;
    if (chunked && name.size() == 14 && TokenEquals(name, "content-length")) continue;
    if (hop_by_hop.Drops(name)) continue;
    w.Field(name, field.value);
  }
  for (const HeaderField& field : request.extra_headers) w.Field(field.name, field.value);
  if (replace_xff) {
    w.Put(kXForwardedFor);
    w.Put(": ");
    if (has_xff) {
      for (const HeaderField& field : request.headers) {
        if (field.name.size() == 15 && TokenEquals(field.name, "x-forwarded-for") &&
            !field.value.empty()) {
          w.Put(field.value);
          w.Put(", ");
        }
      }
    }
    w.Put(request.client_address);
    w.Put("\r\n");
  }
  if (replace_xfp) w.Field(kXForwardedProto, request.forwarded_proto);
  if (chunked) w.Put("Transfer-Encoding: chunked\r\n");
  if (!request.upgrade.empty()) {
    w.Put("Connection: upgrade\r\n");
    w.Field("Upgrade", request.upgrade);
  }
  w.Put("\r\n");
  Finish(out, w);
}

void AppendResponseHead(const ResponseHeadOut& response, std::string* out) {
  const HopByHopFilter hop_by_hop(response.headers);
  std::string_view reason =
      response.reason.empty() ? StatusReason(response.status) : response.reason;
  const size_t bound = 9 + 20 + 1 + reason.size() + 2 + FieldsBound(response.headers) +
                       FieldsBound(response.extra_headers) + 30 + 16 + 20 + 14 +
                       response.connection.size() + 2;
  Writer w(Reserve(out, bound));
  w.Put(response.version_minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 ");
  w.Number(static_cast<uint64_t>(response.status));
  w.Put(' ');
  w.Put(reason);
  w.Put("\r\n");
  const bool chunked = response.framing == BodyFraming::kChunked;
  bool has_content_length = false;
  for (const HeaderField& field : response.headers) {
    if (hop_by_hop.Drops(field.name)) continue;
    if (field.name.size() == 14 && TokenEquals(field.name, "content-length")) {
      if (chunked) continue;
      has_content_length = true;
    }
    w.Field(field.name, field.value);
  }
  for (const HeaderField& field : response.extra_headers) w.Field(field.name, field.value);
  if (chunked) {
    w.Put("Transfer-Encoding: chunked\r\n");
  } else if (response.framing == BodyFraming::kContentLength && !has_content_length) {
    w.Put("Content-Length: ");
    w.Number(response.content_length);
    w.Put("\r\n");
  }
  if (!response.connection.empty()) w.Field("Connection", response.connection);
  w.Put("\r\n");
  Finish(out, w);
}

std::string_view StatusReason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 101:
      return "Switching Protocols";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 417:
      return "Expectation Failed";
    case 421:
      return "Misdirected Request";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "";
  }
}

}  // namespace portico::gateway::http
