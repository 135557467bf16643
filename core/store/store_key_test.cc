#include "core/store/store_key.h"

#include <gtest/gtest.h>

#include <set>
#include <unordered_set>

namespace portico::core {
namespace {

TEST(StoreKeyTest, ToStringAndParseRoundTrip) {
  StoreKey key{"gateway.networking.k8s.io", "HTTPRoute", "default", "web"};
  EXPECT_EQ(key.ToString(), "gateway.networking.k8s.io/HTTPRoute/default/web");
  StatusOr<StoreKey> parsed = StoreKey::Parse(key.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, key);
  // Core group and cluster scope leave parts empty.
  StoreKey secret{"", "Secret", "default", "tls"};
  EXPECT_EQ(secret.ToString(), "/Secret/default/tls");
  EXPECT_EQ(*StoreKey::Parse("/Secret/default/tls"), secret);
  EXPECT_EQ(*StoreKey::Parse("gateway.networking.k8s.io/GatewayClass//eg"),
            (StoreKey{"gateway.networking.k8s.io", "GatewayClass", "", "eg"}));
}

TEST(StoreKeyTest, ParseAndValidateRejectBadKeys) {
  for (const char* bad : {"", "a/b/c", "g//ns/name", "g/Kind/ns/", "g/Kind/ns/a/b"}) {
    EXPECT_EQ(StoreKey::Parse(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE((StoreKey{"g", "", "ns", "n"}).Validate().ok());
  EXPECT_FALSE((StoreKey{"g", "K", "ns", ""}).Validate().ok());
  EXPECT_FALSE((StoreKey{"g/x", "K", "ns", "n"}).Validate().ok());
  EXPECT_TRUE((StoreKey{"", "K", "", "n"}).Validate().ok());
}

TEST(StoreKeyTest, OrdersByGroupKindNamespaceName) {
  std::set<StoreKey> keys{{"b", "A", "a", "a"},
                          {"a", "B", "a", "a"},
                          {"a", "A", "b", "a"},
                          {"a", "A", "a", "b"},
                          {"a", "A", "a", "a"}};
  std::vector<std::string> order;
  for (const StoreKey& k : keys) order.push_back(k.ToString());
  EXPECT_EQ(order,
            (std::vector<std::string>{"a/A/a/a", "a/A/a/b", "a/A/b/a", "a/B/a/a", "b/A/a/a"}));
}

TEST(StoreKeyTest, HashesEqualKeysEqually) {
  StoreKey a{"g", "K", "ns", "n"};
  StoreKey b = a;
  EXPECT_EQ(StoreKeyHash()(a), StoreKeyHash()(b));
  EXPECT_EQ(std::hash<StoreKey>()(a), StoreKeyHash()(a));
  // Moving a character between parts changes the key and (here) the hash.
  StoreKey c{"g", "K", "nsn", ""};
  EXPECT_NE(a, c);
  EXPECT_NE(StoreKeyHash()(a), StoreKeyHash()(c));
  std::unordered_set<StoreKey> set{a, b, c};
  EXPECT_EQ(set.size(), 2u);
}

}  // namespace
}  // namespace portico::core
