// status_aggregation.h: contributions (abi.h, portico_process_result.contribute) folded into a
// target's status without reprocessing the target (DESIGN.md §3).
//
// Topic grammar (abi.h): "<op>:<path>", op "count" or "append"; path is dotted field names, each
// optionally followed by "[key=value]" array-element selectors, e.g.
// "count:listeners[name=http].attachedRoutes" or "append:parents". Values may contain dots
// ("[name=a.example.com]"); a selector matches an element whose `key` member is the string
// `value` (or an integer printing as `value`).
//  - count: adds the integer in the contribution's JSON, or 1 when it holds none; a missing
//    field or element is skipped (the processor writes the zeros).
//  - append: appends the contribution's JSON value to the array at the path, creating missing
//    fields, arrays and selected elements ({key: value}) on the way.
//
// Thread-safety: pure functions and value types.
#ifndef PORTICO_CONTROLLER_RECONCILE_STATUS_AGGREGATION_H_
#define PORTICO_CONTROLLER_RECONCILE_STATUS_AGGREGATION_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::controller {

// ContributionTopic is a parsed topic.
struct ContributionTopic {
  enum class Op { kCount, kAppend };
  struct Segment {
    std::string field;
    std::vector<std::pair<std::string, std::string>> selectors;  // [key=value], in order
  };

  Op op = Op::kCount;
  std::vector<Segment> path;

  // Parse reads "<op>:<path>"; INVALID_ARGUMENT names the topic and what is wrong.
  static StatusOr<ContributionTopic> Parse(std::string_view topic);
};

// StatusContribution is one contribution as the host keeps it.
struct StatusContribution {
  std::string contributor;  // the contributing object's key ("group/Kind/ns/name")
  std::string topic;
  std::string json;  // may be empty (count: 1)

  friend bool operator==(const StatusContribution&, const StatusContribution&) = default;
};

// ApplyContribution applies one contribution to `status`; returns false when it was skipped
// (count on a missing path, a type mismatch, unparsable JSON for append). `allocator` must own
// `status`.
bool ApplyContribution(rapidjson::Value& status, rapidjson::Value::AllocatorType& allocator,
                       const ContributionTopic& topic, std::string_view json);

// AggregateStatus starts from `base` (the target's own processed status JSON; none or not an
// object: {}) and applies `contributions` in (contributor, topic) order, stable within equal
// pairs. Contributions with unparsable topics are skipped.
rapidjson::Document AggregateStatus(const std::optional<std::string>& base,
                                    std::vector<StatusContribution> contributions);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_STATUS_AGGREGATION_H_
