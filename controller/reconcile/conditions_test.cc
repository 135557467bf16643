#include "controller/reconcile/conditions.h"

#include <gtest/gtest.h>

namespace portico::controller {
namespace {

rapidjson::Document Parse(const char* text) {
  rapidjson::Document doc;
  doc.Parse(text);
  EXPECT_FALSE(doc.HasParseError()) << text;
  return doc;
}

std::string Stamp(const char* status, const char* previous, int64_t generation, const char* now) {
  rapidjson::Document doc = Parse(status);
  rapidjson::Document prev;
  if (previous != nullptr) prev = Parse(previous);
  StampConditions(doc, doc.GetAllocator(), previous != nullptr ? &prev : nullptr, generation, now);
  return json::Serialize(doc);
}

TEST(StampConditionsTest, AddsObservedGenerationAndTransitionTime) {
  EXPECT_EQ(Stamp(R"({"conditions":[{"type":"Accepted","status":"True"}]})", nullptr, 3, "T1"),
            R"({"conditions":[{"type":"Accepted","status":"True","observedGeneration":3,)"
            R"("lastTransitionTime":"T1"}]})");
}

TEST(StampConditionsTest, KeepsProcessorsObservedGeneration) {
  EXPECT_EQ(Stamp(R"({"conditions":[{"type":"A","status":"True","observedGeneration":1}]})",
                  nullptr, 3, "T1"),
            R"({"conditions":[{"type":"A","status":"True","observedGeneration":1,)"
            R"("lastTransitionTime":"T1"}]})");
}

TEST(StampConditionsTest, TransitionTimeMovesOnlyWhenStatusChanges) {
  const char* previous = R"({"conditions":[{"type":"A","status":"True","lastTransitionTime":"T0"},)"
                         R"({"type":"B","status":"False","lastTransitionTime":"T0"}]})";
  EXPECT_EQ(Stamp(R"({"conditions":[{"type":"A","status":"True","reason":"New"},)"
                  R"({"type":"B","status":"True"},{"type":"C","status":"True"}]})",
                  previous, 2, "T1"),
            R"({"conditions":[{"type":"A","status":"True","reason":"New",)"
            R"("observedGeneration":2,"lastTransitionTime":"T0"},)"
            R"({"type":"B","status":"True","observedGeneration":2,"lastTransitionTime":"T1"},)"
            R"({"type":"C","status":"True","observedGeneration":2,"lastTransitionTime":"T1"}]})");
}

TEST(StampConditionsTest, NestedConditionsAreMatchedByElementName) {
  const char* previous = R"({"listeners":[{"name":"b","conditions":[{"type":"A","status":"True",)"
                         R"("lastTransitionTime":"T0"}]},{"name":"a","conditions":[{"type":"A",)"
                         R"("status":"False","lastTransitionTime":"T0"}]}]})";
  // Listener "a" moved to index 0 and stayed False: its time is kept; "b" flipped.
  std::string out =
      Stamp(R"({"listeners":[{"name":"a","conditions":[{"type":"A","status":"False"}]},)"
            R"({"name":"b","conditions":[{"type":"A","status":"False"}]}]})",
            previous, 1, "T1");
  EXPECT_EQ(out, R"({"listeners":[{"name":"a","conditions":[{"type":"A","status":"False",)"
                 R"("observedGeneration":1,"lastTransitionTime":"T0"}]},{"name":"b","conditions":)"
                 R"([{"type":"A","status":"False","observedGeneration":1,)"
                 R"("lastTransitionTime":"T1"}]}]})");
}

TEST(StampConditionsTest, ParentsAreMatchedByParentRef) {
  const char* previous =
      R"({"parents":[{"parentRef":{"name":"gw"},"conditions":[{"type":"Accepted",)"
      R"("status":"True","lastTransitionTime":"T0"}]}]})";
  std::string out =
      Stamp(R"({"parents":[{"parentRef":{"name":"other"},"conditions":[{"type":"Accepted",)"
            R"("status":"True"}]},{"parentRef":{"name":"gw"},"conditions":[{"type":"Accepted",)"
            R"("status":"True"}]}]})",
            previous, 1, "T1");
  EXPECT_NE(out.find(R"("name":"other"},"conditions":[{"type":"Accepted","status":"True",)"
                     R"("observedGeneration":1,"lastTransitionTime":"T1"})"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("name":"gw"},"conditions":[{"type":"Accepted","status":"True",)"
                     R"("observedGeneration":1,"lastTransitionTime":"T0"})"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace portico::controller
