// object_table_test.cc: get's table columns, status summaries and ages.
#include "controller/ctl/object_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace portico::ctl {
namespace {

TEST(ObjectTableTest, HumanAgeFollowsKubectl) {
  EXPECT_EQ(HumanAge(45), "45s");
  EXPECT_EQ(HumanAge(119), "119s");
  EXPECT_EQ(HumanAge(192), "3m12s");
  EXPECT_EQ(HumanAge(17 * 60), "17m");
  EXPECT_EQ(HumanAge(5 * 3600 + 4 * 60), "5h4m");
  EXPECT_EQ(HumanAge(20 * 3600), "20h");
  EXPECT_EQ(HumanAge(3 * 86400 + 4 * 3600), "3d4h");
  EXPECT_EQ(HumanAge(12 * 86400), "12d");
  EXPECT_EQ(HumanAge(-5), "0s");
}

TEST(ObjectTableTest, ParsesRfc3339) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:01:00Z"), 60);
  EXPECT_EQ(ParseRfc3339("1970-01-01T01:00:00.123456+01:00"), 0);
  EXPECT_EQ(ParseRfc3339("yesterday"), std::nullopt);
}

TEST(ObjectTableTest, SummarisesConditions) {
  auto gateway = json::Parse(R"({"status":{"conditions":[
      {"type":"Accepted","status":"True","reason":"Accepted"},
      {"type":"Programmed","status":"Unknown","reason":"Pending"}]}})");
  ASSERT_TRUE(gateway.ok());
  EXPECT_EQ(StatusSummary(*gateway), "Accepted,Programmed=Unknown(Pending)");
  auto route = json::Parse(R"({"status":{"parents":[
      {"conditions":[{"type":"Accepted","status":"True"},{"type":"ResolvedRefs","status":"True"}]},
      {"conditions":[{"type":"Accepted","status":"False","reason":"NotAllowedByListeners"}]}]}})");
  ASSERT_TRUE(route.ok());
  EXPECT_EQ(StatusSummary(*route), "Accepted=False(NotAllowedByListeners),ResolvedRefs");
  // A policy (RateLimitPolicy, HeaderStamp) reports per ancestor, as Gateway API policies do.
  auto policy = json::Parse(R"({"status":{"ancestors":[
      {"ancestorRef":{"name":"a"},"conditions":[{"type":"Accepted","status":"True"}]},
      {"ancestorRef":{"name":"b"},"conditions":[
          {"type":"Accepted","status":"False","reason":"TargetNotFound"}]}]}})");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(StatusSummary(*policy), "Accepted=False(TargetNotFound)");
  auto bare = json::Parse(R"({"metadata":{"name":"x"}})");
  EXPECT_EQ(StatusSummary(*bare), "-");
  auto failed = json::Parse(R"({"portico":{"error":"spec.rules: bad"}})");
  EXPECT_EQ(StatusSummary(*failed), "Error: spec.rules: bad");
}

TEST(ObjectTableTest, PrintsKindColumnsAndNamespaces) {
  auto a = json::Parse(R"({"kind":"HTTPRoute","metadata":{"name":"web","namespace":"prod",
      "creationTimestamp":"1970-01-01T00:00:00Z"},"spec":{"hostnames":["a.com","b.com"]},
      "status":{"parents":[{"conditions":[{"type":"Accepted","status":"True"}]}]}})");
  auto b = json::Parse(R"({"kind":"HTTPRoute","metadata":{"name":"api","namespace":"dev"}})");
  ASSERT_TRUE(a.ok() && b.ok());
  std::ostringstream out;
  PrintObjectTable({&*a, &*b}, /*all_namespaces=*/true, 300, out);
  EXPECT_EQ(out.str(),
            "NAMESPACE   NAME   HOSTNAMES     STATUS     AGE\n"
            "prod        web    a.com,b.com   Accepted   5m\n"
            "dev         api    <none>        -          <unknown>\n");
  std::ostringstream narrow;
  PrintObjectTable({&*a}, /*all_namespaces=*/false, 300, narrow);
  EXPECT_EQ(narrow.str().rfind("NAME   HOSTNAMES", 0), 0u) << narrow.str();
}

}  // namespace
}  // namespace portico::ctl
