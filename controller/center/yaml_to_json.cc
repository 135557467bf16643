#include "controller/center/yaml_to_json.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <istream>
#include <map>
#include <memory>
#include <streambuf>
#include <string>
#include <unordered_set>
#include <utility>

namespace portico::controller {
namespace {

std::string Where(std::string_view file, const YAML::Mark& mark) {
  return std::string(file) + ":" + std::to_string(mark.line + 1) + ":" +
         std::to_string(mark.column + 1);
}

bool ParseInteger(const std::string& s, rapidjson::Value& out) {
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return false;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE) return false;
  out.SetInt64(v);
  return true;
}

bool ParseFloat(const std::string& s, rapidjson::Value& out) {
  bool has_digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9')
      has_digit = true;
    else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+')
      return false;
  }
  if (!has_digit) return false;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  out.SetDouble(v);
  return true;
}

// TypePlainScalar sets `out` to the null, boolean or number a plain scalar `s` stands for and
// returns true; returns false when `s` is a string.
bool TypePlainScalar(const std::string& s, rapidjson::Value& out) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    out.SetNull();
    return true;
  }
  if (s == "true" || s == "True" || s == "TRUE") {
    out.SetBool(true);
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    out.SetBool(false);
    return true;
  }
  return ParseInteger(s, out) || ParseFloat(s, out);
}

// Refused is thrown by JsonBuilder to stop yaml-cpp's parser at the first refusal.
struct Refused {
  Status status;
};

// JsonBuilder turns yaml-cpp's parse events into RapidJSON documents directly (no yaml-cpp node
// tree). Aliases are expanded by copying the anchored value, after checking that the copy stays
// within the file's node budget and the depth limit: an alias bomb is refused before it grows.
class JsonBuilder : public YAML::EventHandler {
 public:
  JsonBuilder(std::string_view file, const YamlLimits& limits) : file_(file), limits_(limits) {}

  std::vector<YamlDocument> TakeDocuments() { return std::move(documents_); }

  void OnDocumentStart(const YAML::Mark&) override {
    document_ = std::make_unique<YamlDocument>();
    anchors_.clear();  // anchors are per document
    anchor_allocator_.Clear();
    has_root_ = false;
  }

  void OnDocumentEnd() override {
    if (has_root_ && !document_->json.IsNull()) documents_.push_back(std::move(*document_));
    document_.reset();
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Leaf(rapidjson::Value(), mark, anchor);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    rapidjson::Value v;
    // yaml-cpp tags plain scalars "?" and quoted ones "!"; only plain scalars are typed, and
    // never map keys.
    if (ExpectingKey() || tag != "?" || !TypePlainScalar(value, v)) {
      v.SetString(value.c_str(), static_cast<rapidjson::SizeType>(value.size()), Allocator());
    }
    Leaf(std::move(v), mark, anchor);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) Refuse(mark, "alias refers to the node that contains it");
    const Anchored& anchored = it->second;
    rapidjson::Value copy;
    // Check the budget before copying: that is what stops a bomb.
    CountNodes(mark, anchored.nodes);
    CheckDepth(mark, stack_.size() + anchored.height);
    copy.CopyFrom(anchored.value, Allocator());
    Place(std::move(copy), mark, 0, anchored.nodes, anchored.height);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, /*map=*/false);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, /*map=*/true);
  }
  void OnMapEnd() override { Close(); }

 private:
  // Frame is a sequence or map being built.
  struct Frame {
    rapidjson::Value value;
    YAML::Mark mark;
    YAML::anchor_t anchor = 0;
    size_t nodes_before = 0;  // nodes_ when it opened (the anchored subtree's size)
    size_t height = 0;        // levels below it (0 while empty)
    bool has_key = false;     // a map holding a key that waits for its value
    rapidjson::Value key;
    std::unique_ptr<std::unordered_set<std::string>> keys;  // large maps: duplicate check
  };
  struct Anchored {
    rapidjson::Value value;  // in anchor_allocator_
    size_t nodes = 0;
    size_t height = 0;
  };

  rapidjson::Document::AllocatorType& Allocator() { return document_->json.GetAllocator(); }

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().value.IsObject() && !stack_.back().has_key;
  }

  [[noreturn]] void Refuse(const YAML::Mark& mark, const std::string& what) {
    throw Refused{InvalidArgumentError(Where(file_, mark) + ": " + what)};
  }

  void CountNodes(const YAML::Mark& mark, size_t n) {
    nodes_ += n;
    if (nodes_ > limits_.max_nodes) {
      Refuse(mark, "file expands to more than " + std::to_string(limits_.max_nodes) +
                       " nodes (alias bomb?); refusing it");
    }
  }

  void CheckDepth(const YAML::Mark& mark, size_t depth) {
    if (depth > limits_.max_depth) {
      Refuse(mark,
             "nesting deeper than " + std::to_string(limits_.max_depth) + " levels; refusing it");
    }
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    CountNodes(mark, 1);
    CheckDepth(mark, stack_.size());
    Frame frame;
    if (map) {
      frame.value.SetObject();
    } else {
      frame.value.SetArray();
    }
    frame.mark = mark;
    frame.anchor = anchor;
    frame.nodes_before = nodes_ - 1;
    stack_.push_back(std::move(frame));
  }

  void Close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    // Its nodes were counted as they came.
    Place(std::move(frame.value), frame.mark, frame.anchor, nodes_ - frame.nodes_before,
          frame.height);
  }

  // Leaf counts and places a scalar or null.
  void Leaf(rapidjson::Value value, const YAML::Mark& mark, YAML::anchor_t anchor) {
    CountNodes(mark, 1);
    CheckDepth(mark, stack_.size());
    Place(std::move(value), mark, anchor, 1, 0);
  }

  // Place puts a finished value (`nodes` in all, `height` levels below it) into its parent, or
  // makes it the document's root, and records it under its anchor.
  void Place(rapidjson::Value value, const YAML::Mark& mark, YAML::anchor_t anchor, size_t nodes,
             size_t height) {
    if (anchor != 0) {
      Anchored& anchored = anchors_[anchor];
      anchored.value.CopyFrom(value, anchor_allocator_);
      anchored.nodes = nodes;
      anchored.height = height;
    }
    if (stack_.empty()) {
      static_cast<rapidjson::Value&>(document_->json).Swap(value);
      document_->line = mark.line + 1;
      has_root_ = true;
      return;
    }
    Frame& parent = stack_.back();
    parent.height = std::max(parent.height, height + 1);
    if (parent.value.IsArray()) {
      parent.value.PushBack(value, Allocator());
      return;
    }
    if (!parent.has_key) {
      AddKey(parent, std::move(value), mark);
      return;
    }
    parent.value.AddMember(parent.key, value, Allocator());
    parent.has_key = false;
  }

  void AddKey(Frame& map, rapidjson::Value key, const YAML::Mark& mark) {
    // Refused once complete, so that what is wrong inside it (depth) is said first.
    if (!key.IsString()) Refuse(mark, "map keys must be scalars");
    std::string name(key.GetString(), key.GetStringLength());
    bool duplicate;
    // Small maps are searched; large ones keep a set, so a huge map is not quadratic.
    if (map.keys == nullptr && map.value.MemberCount() >= 16) {
      map.keys = std::make_unique<std::unordered_set<std::string>>();
      for (const auto& member : map.value.GetObject()) {
        map.keys->emplace(member.name.GetString(), member.name.GetStringLength());
      }
    }
    if (map.keys != nullptr) {
      duplicate = !map.keys->insert(name).second;
    } else {
      duplicate = map.value.HasMember(key);
    }
    if (duplicate) Refuse(mark, "duplicate key \"" + name + "\"");
    map.key = std::move(key);
    map.has_key = true;
  }

  std::string_view file_;
  const YamlLimits& limits_;
  size_t nodes_ = 0;  // per file, across documents
  std::vector<YamlDocument> documents_;
  std::unique_ptr<YamlDocument> document_;
  bool has_root_ = false;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Anchored> anchors_;
  rapidjson::Document::AllocatorType anchor_allocator_;
};

// TextBuffer reads a string_view in place: a file of tens of MB is not copied to be parsed.
class TextBuffer : public std::streambuf {
 public:
  explicit TextBuffer(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // the get area is only read
    setg(begin, begin, begin + text.size());
  }
};

}  // namespace

bool PlainScalarIsString(std::string_view text) {
  rapidjson::Value ignored;
  return !TypePlainScalar(std::string(text), ignored);
}

StatusOr<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text, std::string_view file,
                                                       const YamlLimits& limits) {
  TextBuffer buffer(text);
  std::istream in(&buffer);
  JsonBuilder builder(file, limits);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const Refused& refused) {
    return refused.status;
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own parser guard (its message is only "bad file"): say what it means.
    size_t depth = std::min(limits.max_depth, static_cast<size_t>(e.depth()));
    return InvalidArgumentError(Where(file, e.mark) + ": nesting deeper than " +
                                std::to_string(depth) + " levels; refusing it");
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(Where(file, e.mark) + ": " + e.msg);
  }
  return builder.TakeDocuments();
}

}  // namespace portico::controller
