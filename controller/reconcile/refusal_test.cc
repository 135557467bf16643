// refusal_test: a refused generation in the object's status (refusal.h), alone and through the
// Reconciler with the real HTTPRoute plugin: every violation kept, the condition naming the
// refused and the serving generations, cleared once a generation is accepted again.
#include "controller/reconcile/refusal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include <string>

#include "controller/reconcile/reconciler_test_util.h"

namespace portico::controller {
namespace {

using testing::Harness;
using ::testing::HasSubstr;

std::string At(const rapidjson::Value& doc, const char* pointer) {
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(doc);
  return v == nullptr ? "<none>" : json::Serialize(*v);
}

TEST(RefusalTest, MessageNamesBothGenerationsAndEveryViolation) {
  Refusal refusal{5, {{"spec.a", "must be a string (got 1)"}, {"", "processor said no"}}};
  EXPECT_EQ(RefusalMessage(refusal, 4),
            "generation 5 refused: spec.a: must be a string (got 1); processor said no; "
            "generation 4 keeps serving");
  EXPECT_EQ(RefusalMessage(refusal, 0),
            "generation 5 refused: spec.a: must be a string (got 1); processor said no; no "
            "generation serves");
  Refusal many{2, {}};
  for (int i = 0; i < 200; ++i) {
    many.violations.push_back({"spec.f" + std::to_string(i), std::string(40, 'x')});
  }
  std::string shortened = RefusalMessage(many, 1);
  EXPECT_LT(shortened.size(), 4400u);
  EXPECT_THAT(shortened, HasSubstr(" more (portico-ctl get -o yaml, /api/v1/errors); "
                                   "generation 1 keeps serving"));
}

TEST(RefusalTest, ServingObjectGetsRefusedConditionAndNotedAccepted) {
  auto status = json::Parse(
      R"({"parents":[{"conditions":[{"type":"Accepted","status":"True","message":"ok"},
                                    {"type":"ResolvedRefs","status":"True"}]}]})");
  ASSERT_TRUE(status.ok());
  ApplyRefusal(Refusal{3, {{"spec.x", "bad"}}}, 2, *status, status->GetAllocator());
  EXPECT_EQ(At(*status, "/conditions/0/type"), R"("Refused")");
  EXPECT_EQ(At(*status, "/conditions/0/status"), R"("True")");
  EXPECT_EQ(At(*status, "/conditions/0/observedGeneration"), "3");
  EXPECT_EQ(At(*status, "/conditions/0/message"),
            R"("generation 3 refused: spec.x: bad; generation 2 keeps serving")");
  EXPECT_EQ(At(*status, "/parents/0/conditions/0/message"),
            R"("ok; generation 3 was refused (see the Refused condition), generation 2 keeps )"
            R"(serving")");
  EXPECT_EQ(At(*status, "/parents/0/conditions/1/message"), "<none>");

  rapidjson::Document none(rapidjson::kNullType);
  ApplyRefusal(Refusal{1, {{"spec.x", "bad"}}}, 0, none, none.GetAllocator());
  EXPECT_EQ(At(none, "/conditions/0/type"), R"("Accepted")");
  EXPECT_EQ(At(none, "/conditions/0/status"), R"("False")");
  EXPECT_EQ(At(none, "/conditions/0/reason"), R"("Invalid")");
}

TEST(RefusalTest, ReconcilerKeepsEveryViolationAndSaysWhichGenerationServes) {
  Harness h;
  sdk::ObjectRef route{testing::kGatewayGroup, "HTTPRoute", "default", "web"};
  h.Apply({testing::GatewayClassDoc("portico"), testing::GatewayDoc("default", "gw", "portico"),
           testing::ServiceDoc("default", "web"),
           testing::RouteDoc("default", "web", "gw", "web", "/")});
  ASSERT_TRUE(h.Idle());
  ASSERT_EQ(h.Get(route)->error, "");
  ASSERT_FALSE(h.Get(route)->refusal.has_value());

  // Generation 2 fails its schema in two places.
  std::string bad = testing::RouteDoc("default", "web", "gw", "web", "/v2");
  bad.replace(bad.find("PathPrefix"), 10, "Prefix");
  bad.replace(bad.find("\"port\":8080"), 11, "\"port\":70000");
  h.Apply({bad});
  ASSERT_TRUE(h.Idle());
  std::optional<ObjectView> view = h.Get(route);
  ASSERT_TRUE(view.has_value());
  ASSERT_TRUE(view->refusal.has_value());
  EXPECT_EQ(view->refusal->generation, 2);
  EXPECT_EQ(view->serving_generation, 1);
  ASSERT_EQ(view->refusal->violations.size(), 2u);
  EXPECT_EQ(view->refusal->violations[0].field, "spec.rules[0].matches[0].path.type");
  EXPECT_THAT(view->refusal->violations[0].message, HasSubstr("(got \"Prefix\")"));
  EXPECT_EQ(view->refusal->violations[1].field, "spec.rules[0].backendRefs[0].port");
  EXPECT_THAT(view->error, HasSubstr("path.type"));
  EXPECT_THAT(view->error, HasSubstr("backendRefs[0].port"));
  rapidjson::Document shown = h.View(route);
  EXPECT_EQ(At(shown, "/spec/rules/0/matches/0/path/value"), R"("/")");  // generation 1 serves
  EXPECT_EQ(At(shown, "/status/conditions/0/type"), R"("Refused")");
  EXPECT_EQ(At(shown, "/status/conditions/0/observedGeneration"), "2");
  EXPECT_THAT(At(shown, "/status/conditions/0/message"),
              HasSubstr("generation 2 refused: spec.rules[0].matches[0].path.type: "));
  EXPECT_THAT(At(shown, "/status/conditions/0/message"), HasSubstr("; generation 1 keeps serving"));
  EXPECT_THAT(At(shown, "/status/parents/0/conditions/0/message"),
              HasSubstr("generation 2 was refused (see the Refused condition)"));
  ASSERT_EQ(h.reconciler().Refused().size(), 1u);

  // Generation 3 is good again: the refusal clears.
  h.Apply({testing::RouteDoc("default", "web", "gw", "web", "/v3")});
  ASSERT_TRUE(h.Idle());
  EXPECT_FALSE(h.Get(route)->refusal.has_value());
  shown = h.View(route);
  EXPECT_EQ(At(shown, "/status/conditions"), "<none>");
  EXPECT_EQ(At(shown, "/spec/rules/0/matches/0/path/value"), R"("/v3")");
  EXPECT_TRUE(h.reconciler().Refused().empty());
}

}  // namespace
}  // namespace portico::controller
