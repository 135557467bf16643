// types.h: C++ value types over the C ABI's basic structs (strings, object references, sinks).
//
// Header-only. Thread-safety: value types; StringSink is owned by one caller at a time.
#ifndef PORTICO_SDK_TYPES_H_
#define PORTICO_SDK_TYPES_H_

#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/abi.h"

namespace portico::sdk {

// View turns an ABI string into a std::string_view (no copy).
inline std::string_view View(portico_str s) {
  return s.len == 0 ? std::string_view() : std::string_view(s.ptr, s.len);
}
// Str turns a std::string_view into an ABI string (no copy; caller keeps the bytes alive).
inline portico_str Str(std::string_view s) { return portico_str{s.data(), s.size()}; }

// SplitList splits a comma-separated ABI list ("v1,v1beta1"), dropping empty items and spaces.
inline std::vector<std::string> SplitList(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

// JoinList joins items with commas (the inverse of SplitList).
inline std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    out += item;
  }
  return out;
}

// ObjectRef identifies an object by (group, kind, namespace, name); ns is empty when cluster-scoped.
struct ObjectRef {
  std::string group;
  std::string kind;
  std::string ns;
  std::string name;

  static ObjectRef FromC(const portico_object_ref& r) {
    return ObjectRef{std::string(View(r.group)), std::string(View(r.kind)), std::string(View(r.ns)),
                     std::string(View(r.name))};
  }
  // ToC borrows this ref's strings; keep the ObjectRef alive while the result is used.
  portico_object_ref ToC() const {
    return portico_object_ref{sizeof(portico_object_ref), Str(group), Str(kind), Str(ns), Str(name)};
  }
  // Key is the canonical "group/Kind/namespace/name" used for ownership and logs.
  std::string Key() const { return group + "/" + kind + "/" + ns + "/" + name; }
  // Display is how messages name an object: "HTTPRoute default/web", "GatewayClass portico".
  std::string Display() const { return kind + " " + (ns.empty() ? name : ns + "/" + name); }

  friend bool operator==(const ObjectRef&, const ObjectRef&) = default;
  friend auto operator<=>(const ObjectRef&, const ObjectRef&) = default;
};

// StringSink is a host-owned portico_sink that appends into a std::string. Used by hosts and by
// the fake host; `written` distinguishes "wrote nothing" from "wrote an empty string".
class StringSink {
 public:
  StringSink() : sink_{sizeof(portico_sink), this, &StringSink::Write} {}
  StringSink(const StringSink&) = delete;
  StringSink& operator=(const StringSink&) = delete;

  portico_sink* sink() { return &sink_; }
  const std::string& data() const { return data_; }
  std::string take() { return std::move(data_); }
  bool written() const { return written_; }

 private:
  static void Write(void* host, portico_str bytes) {
    auto* self = static_cast<StringSink*>(host);
    self->written_ = true;
    self->data_.append(bytes.ptr, bytes.len);
  }
  portico_sink sink_;
  std::string data_;
  bool written_ = false;
};

// WriteSink writes `bytes` into a sink the other side gave us (tolerates NULL).
inline void WriteSink(portico_sink* sink, std::string_view bytes) {
  if (sink != nullptr && sink->write != nullptr) sink->write(sink->host, Str(bytes));
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_TYPES_H_
