// fake_world.h: FakeWorld, the controller's reconcile loop in miniature over a FakeHost, for
// processor tests in which several kinds meet (routes, Gateways, Secrets, ReferenceGrants,
// Namespaces) and for order-independence tests.
//
//   FakeWorld world(host);                      // the host has the plugins loaded
//   world.Put(gateway_json); world.Put(route_json);
//   ASSERT_TRUE(world.Settle().ok());
//   auto status = world.AggregatedStatus(gateway_ref);  // attachedRoutes from the route
//
// Requeue emulation: the real controller requeues exactly the objects whose reads changed.
// FakeWorld is coarser and simpler: Settle() processes every object, in the order given (Put
// order by default), again and again until a whole round changes no export, synced view,
// status or contribution (a fixed point), failing after `max_rounds`. Processors are pure
// functions of their object and what they read, and reads between kinds are acyclic, so the
// fixed point is unique; settling permutations of one set and comparing statuses tests that.
//
// Contributions follow abi.h's topic grammar ("count:<path>" adds 1 or the integer in the
// contribution's JSON; "append:<path>" appends the JSON). AggregatedStatus(ref) is the object's
// own status with every contribution aimed at it applied in (contributor, topic) order; a "count"
// path that does not exist is skipped, an "append" path is created.
//
// Threading and ownership: single-threaded, like FakeHost; the host must outlive the world.
#ifndef PORTICO_SDK_TESTING_FAKE_WORLD_H_
#define PORTICO_SDK_TESTING_FAKE_WORLD_H_

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/testing/fake_host.h"

namespace portico::sdk::testing {

class FakeWorld {
 public:
  explicit FakeWorld(FakeHost& host) : host_(host) {}

  // Put adds an object, or replaces the one with the same ref; it is processed by Settle().
  // Fails when the JSON does not parse or names no loaded kind.
  Status Put(std::string_view object_json) {
    PORTICO_ASSIGN_OR_RETURN(ObjectRef ref, RefOf(object_json));
    auto it = std::find_if(objects_.begin(), objects_.end(),
                           [&](const Entry& e) { return e.ref == ref; });
    if (it == objects_.end()) {
      objects_.push_back(Entry{ref, std::string(object_json), {}});
    } else {
      it->json = object_json;
    }
    return OkStatus();
  }

  // Remove deletes an object: its export, synced view and contributions disappear.
  void Remove(const ObjectRef& ref) {
    std::erase_if(objects_, [&](const Entry& e) { return e.ref == ref; });
    host_.Delete(ref);
  }

  // Settle processes objects until a fixed point; `order` (refs of Put objects) overrides the
  // Put order. Objects whose processing fails keep no result (see Outcome()).
  Status Settle(const std::vector<ObjectRef>& order = {}, int max_rounds = 20) {
    std::vector<Entry*> sequence;
    if (order.empty()) {
      for (Entry& e : objects_) sequence.push_back(&e);
    } else {
      for (const ObjectRef& ref : order) {
        Entry* e = Find(ref);
        if (e == nullptr) return NotFoundError("Settle: " + ref.Display() + " was not Put");
        sequence.push_back(e);
      }
    }
    for (int round = 0; round < max_rounds; ++round) {
      bool changed = false;
      for (Entry* e : sequence) {
        ProcessOutcome out = host_.Apply(e->json);
        if (!out.ok()) {
          // The real host keeps the previous result of a failing object; a world settles from
          // scratch, so a failing object has none.
          host_.Delete(e->ref);
          out.contributions.clear();
        }
        changed = changed || !SameResult(e->outcome, out);
        e->outcome = std::move(out);
      }
      if (!changed) return OkStatus();
    }
    return AbortedError("FakeWorld: no fixed point after " + std::to_string(max_rounds) +
                        " rounds");
  }

  // refs lists the objects in Put order.
  std::vector<ObjectRef> refs() const {
    std::vector<ObjectRef> out;
    for (const Entry& e : objects_) out.push_back(e.ref);
    return out;
  }

  // Outcome is the last processing result of an object, or nullptr.
  const ProcessOutcome* Outcome(const ObjectRef& ref) const {
    const Entry* e = Find(ref);
    return e == nullptr ? nullptr : &e->outcome;
  }

  // OwnStatus is the status the object's processor wrote (no contributions).
  std::optional<std::string> OwnStatus(const ObjectRef& ref) const {
    const ProcessOutcome* out = Outcome(ref);
    return out == nullptr ? std::nullopt : out->status_json;
  }

  // AggregatedStatus is the object's status with the contributions aimed at it applied, as the
  // host aggregates them; nullopt when the processor wrote no status.
  std::optional<std::string> AggregatedStatus(const ObjectRef& ref) const {
    std::optional<std::string> own = OwnStatus(ref);
    if (!own) return std::nullopt;
    auto doc = json::Parse(*own, "status of " + ref.Display());
    if (!doc.ok()) return own;
    std::vector<std::tuple<std::string, std::string, std::string>>
        aimed;  // contributor, topic, json
    for (const Entry& e : objects_) {
      for (const Contribution& c : e.outcome.contributions) {
        if (c.target == ref) aimed.emplace_back(e.ref.Key(), c.topic, c.json);
      }
    }
    std::stable_sort(aimed.begin(), aimed.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
    });
    for (const auto& [contributor, topic, body] : aimed) ApplyContribution(*doc, topic, body);
    return json::Serialize(*doc);
  }

  // Contributions lists every contribution aimed at `target` as "contributor-key topic".
  std::vector<std::string> ContributionsTo(const ObjectRef& target) const {
    std::vector<std::string> out;
    for (const Entry& e : objects_) {
      for (const Contribution& c : e.outcome.contributions) {
        if (c.target == target) out.push_back(e.ref.Display() + " " + c.topic);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // ApplyContribution applies one contribution to a status document (exposed for tests of the
  // grammar itself). Returns false when a "count" path does not exist or the topic is malformed.
  static bool ApplyContribution(rapidjson::Document& status, std::string_view topic,
                                std::string_view body) {
    size_t colon = topic.find(':');
    if (colon == std::string_view::npos) return false;
    std::string_view op = topic.substr(0, colon);
    bool create = op == "append";
    if (op != "count" && !create) return false;
    std::vector<Segment> path;
    if (!ParsePath(topic.substr(colon + 1), path) || path.empty()) return false;
    auto& alloc = status.GetAllocator();
    if (!status.IsObject()) status.SetObject();
    rapidjson::Value* cur = &status;
    for (size_t i = 0; i < path.size(); ++i) {
      const Segment& s = path[i];
      bool last = i + 1 == path.size();
      auto member = cur->FindMember(rapidjson::StringRef(s.name.data(), s.name.size()));
      if (member == cur->MemberEnd()) {
        if (!create) return false;
        rapidjson::Value fresh(s.has_selector
                                   ? rapidjson::kArrayType
                                   : (last ? rapidjson::kArrayType : rapidjson::kObjectType));
        cur->AddMember(rapidjson::Value(s.name.c_str(), alloc), fresh, alloc);
        member = cur->FindMember(rapidjson::StringRef(s.name.data(), s.name.size()));
      }
      rapidjson::Value* next = &member->value;
      if (s.has_selector) {
        if (!next->IsArray()) return false;
        rapidjson::Value* found = nullptr;
        for (auto& element : next->GetArray()) {
          if (element.IsObject() && json::GetString(element, s.key) == s.value &&
              json::Find(element, s.key) != nullptr) {
            found = &element;
            break;
          }
        }
        if (found == nullptr) {
          if (!create) return false;
          rapidjson::Value element(rapidjson::kObjectType);
          element.AddMember(rapidjson::Value(s.key.c_str(), alloc),
                            rapidjson::Value(s.value.c_str(), alloc), alloc);
          next->PushBack(element, alloc);
          found = &(*next)[next->Size() - 1];
        }
        next = found;
        if (last) {
          // "append:parents[name=x]" appends into the selected element's array? Not meaningful:
          // a selector must be followed by a field.
          return false;
        }
      }
      if (last) {
        if (create) {
          if (!next->IsArray()) return false;
          rapidjson::Document value;
          if (body.empty()) {
            value.SetNull();
          } else {
            value.Parse(body.data(), body.size());
            if (value.HasParseError()) return false;
          }
          next->PushBack(rapidjson::Value(value, alloc), alloc);
          return true;
        }
        if (!next->IsInt64()) return false;
        int64_t delta = 1;
        if (!body.empty()) {
          rapidjson::Document value;
          value.Parse(body.data(), body.size());
          if (value.HasParseError() || !value.IsInt64()) return false;
          delta = value.GetInt64();
        }
        next->SetInt64(next->GetInt64() + delta);
        return true;
      }
      cur = next;
      if (!cur->IsObject()) return false;
    }
    return false;
  }

 private:
  struct Entry {
    ObjectRef ref;
    std::string json;
    ProcessOutcome outcome;
  };
  // Segment is one dotted step of a contribution path: "name" or "name[key=value]".
  struct Segment {
    std::string name;
    bool has_selector = false;
    std::string key;
    std::string value;
  };

  // ParsePath splits "listeners[name=a.b].attachedRoutes" on dots outside brackets.
  static bool ParsePath(std::string_view path, std::vector<Segment>& out) {
    while (!path.empty()) {
      size_t i = 0;
      Segment s;
      while (i < path.size() && path[i] != '.' && path[i] != '[') ++i;
      s.name = std::string(path.substr(0, i));
      if (s.name.empty()) return false;
      if (i < path.size() && path[i] == '[') {
        size_t close = path.find(']', i);
        if (close == std::string_view::npos) return false;
        std::string_view selector = path.substr(i + 1, close - i - 1);
        size_t eq = selector.find('=');
        if (eq == std::string_view::npos || eq == 0) return false;
        s.has_selector = true;
        s.key = std::string(selector.substr(0, eq));
        s.value = std::string(selector.substr(eq + 1));
        i = close + 1;
      }
      out.push_back(std::move(s));
      if (i == path.size()) break;
      if (path[i] != '.') return false;
      path.remove_prefix(i + 1);
      if (path.empty()) return false;
    }
    return true;
  }

  StatusOr<ObjectRef> RefOf(std::string_view object_json) const {
    auto doc = json::Parse(object_json, "object");
    if (!doc.ok()) return doc.status();
    auto [group, version] = detail::SplitApiVersion(json::GetString(*doc, "apiVersion"));
    ObjectRef ref{group, json::GetString(*doc, "kind"), json::GetString(*doc, "metadata.namespace"),
                  json::GetString(*doc, "metadata.name")};
    const RegisteredKind* kind = host_.FindKind(ref.group, ref.kind);
    if (kind == nullptr) {
      return NotFoundError("kind " + ref.kind + "." + ref.group + " is not loaded");
    }
    if (kind->scope == PORTICO_SCOPE_CLUSTER) {
      ref.ns.clear();
    } else if (ref.ns.empty()) {
      ref.ns = "default";
    }
    return ref;
  }

  static bool SameResult(const ProcessOutcome& a, const ProcessOutcome& b) {
    if (a.status.ok() != b.status.ok() || a.synced != b.synced || a.status_json != b.status_json ||
        a.export_json != b.export_json || a.contributions.size() != b.contributions.size()) {
      return false;
    }
    for (size_t i = 0; i < a.contributions.size(); ++i) {
      const Contribution& x = a.contributions[i];
      const Contribution& y = b.contributions[i];
      if (!(x.target == y.target) || x.topic != y.topic || x.json != y.json) return false;
    }
    return true;
  }

  Entry* Find(const ObjectRef& ref) {
    for (Entry& e : objects_) {
      if (e.ref == ref) return &e;
    }
    return nullptr;
  }
  const Entry* Find(const ObjectRef& ref) const {
    for (const Entry& e : objects_) {
      if (e.ref == ref) return &e;
    }
    return nullptr;
  }

  FakeHost& host_;
  std::vector<Entry> objects_;
};

}  // namespace portico::sdk::testing

#endif  // PORTICO_SDK_TESTING_FAKE_WORLD_H_
