#include "controller/reconcile/sync_feedback.h"

#include <gtest/gtest.h>

#include <string>

namespace portico::controller {
namespace {

std::string Apply(const SyncFeedback& feedback, const char* status_json) {
  rapidjson::Document status;
  status.Parse(status_json);
  EXPECT_FALSE(status.HasParseError()) << status_json;
  ApplySyncFeedback(feedback, status, status.GetAllocator());
  return json::Serialize(status);
}

TEST(SyncFeedbackTest, ReplacesUnknownProgrammedPlaceholdersEverywhere) {
  SyncFeedback ok{"True", "Programmed", "applied by gateway g1", {}};
  std::string out = Apply(ok, R"({"conditions":[
      {"type":"Accepted","status":"True","reason":"Accepted","message":""},
      {"type":"Programmed","status":"Unknown","reason":"Pending","message":"waiting",
       "lastTransitionTime":"2026-01-01T00:00:00Z"}],
    "listeners":[{"name":"http","conditions":[
      {"type":"Programmed","status":"Unknown","reason":"Pending","message":"waiting"}]},
      {"name":"bad","conditions":[
      {"type":"Programmed","status":"False","reason":"Invalid","message":"not accepted"}]}]})");
  EXPECT_EQ(
      out,
      R"({"conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":""},)"
      R"({"type":"Programmed","status":"True","reason":"Programmed","message":"applied by gateway g1"}],)"
      R"("listeners":[{"name":"http","conditions":[{"type":"Programmed","status":"True",)"
      R"("reason":"Programmed","message":"applied by gateway g1"}]},{"name":"bad","conditions":)"
      R"([{"type":"Programmed","status":"False","reason":"Invalid","message":"not accepted"}]}]})");
}

TEST(SyncFeedbackTest, RejectionAddsATopLevelConditionWhenThereIsNone) {
  SyncFeedback nack{"False", "Invalid", "rejected by gateway g1: bad", {}};
  EXPECT_EQ(Apply(nack, R"({"parents":[]})"),
            R"({"parents":[],"conditions":[{"type":"Programmed","status":"False",)"
            R"("reason":"Invalid","message":"rejected by gateway g1: bad"}]})");
  // Positive or pending feedback adds nothing where the kind has no Programmed condition.
  SyncFeedback ok{"True", "Programmed", "applied", {}};
  EXPECT_EQ(Apply(ok, R"({"parents":[]})"), R"({"parents":[]})");
}

TEST(SyncFeedbackTest, AMissingHandlerShowsEvenWithoutAPlaceholder) {
  // Applied by one gateway, but another serving it lacks the kind's handler: a status with no
  // Programmed placeholder still gets a condition saying so.
  SyncFeedback partly{"True",
                      "Programmed",
                      "applied by gateway a; gateway b serves it but has no handler for X.y",
                      {},
                      "gateway b serves it but has no handler for X.y"};
  EXPECT_EQ(Apply(partly, R"({"conditions":[{"type":"Accepted","status":"True"}]})"),
            R"({"conditions":[{"type":"Accepted","status":"True"},{"type":"Programmed",)"
            R"("status":"True","reason":"Programmed","message":"applied by gateway a; gateway b )"
            R"(serves it but has no handler for X.y"}]})");
  // Without missing handlers, a True feedback adds nothing where no placeholder asked for it.
  SyncFeedback ok{"True", "Programmed", "applied by gateway a", {}};
  EXPECT_EQ(Apply(ok, R"({"conditions":[]})"), R"({"conditions":[]})");
}

TEST(SyncFeedbackTest, AddressesFillOnlyAnEmptyAddressList) {
  SyncFeedback fb{"True", "Programmed", "applied", {"127.0.0.1", "::1", "gw.example.com"}};
  EXPECT_EQ(Apply(fb, R"({})"),
            R"({"addresses":[{"type":"IPAddress","value":"127.0.0.1"},)"
            R"({"type":"IPAddress","value":"::1"},{"type":"Hostname","value":"gw.example.com"}]})");
  EXPECT_EQ(Apply(fb, R"({"addresses":[{"type":"IPAddress","value":"10.0.0.1"}]})"),
            R"({"addresses":[{"type":"IPAddress","value":"10.0.0.1"}]})");
}

}  // namespace
}  // namespace portico::controller
