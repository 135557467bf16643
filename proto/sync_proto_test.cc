// sync_proto_test: the ConfigSync messages round-trip and the service is generated.
#include <gtest/gtest.h>

#include "portico/sync/v1/sync.grpc.pb.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::sync::v1 {
namespace {

// The generated stub type exists (compile-time check of the gRPC codegen).
using Stub = ConfigSync::Stub;

TEST(SyncProtoTest, HelloRoundTripKeepsReservedFields) {
  WatchRequest req;
  Hello* hello = req.mutable_hello();
  hello->set_client_id("gw-1");
  hello->set_from_version(42);
  hello->set_expected_server_id("srv-a");
  hello->set_epoch(7);
  auto* known = hello->add_known_hashes();
  known->mutable_key()->set_kind("HTTPRoute");
  known->set_hash("abc");
  std::string wire = req.SerializeAsString();
  WatchRequest back;
  ASSERT_TRUE(back.ParseFromString(wire));
  ASSERT_TRUE(back.has_hello());
  EXPECT_EQ(back.hello().from_version(), 42u);
  EXPECT_EQ(back.hello().epoch(), 7u);
  EXPECT_EQ(back.hello().known_hashes(0).key().kind(), "HTTPRoute");
}

TEST(SyncProtoTest, AckCarriesNacksWithHashes) {
  WatchRequest req;
  Ack* ack = req.mutable_ack();
  ack->set_version(9);
  Nack* nack = ack->add_nacks();
  nack->mutable_key()->set_name("web");
  nack->set_hash("deadbeef");
  nack->set_reason("bind failed");
  WatchRequest back;
  ASSERT_TRUE(back.ParseFromString(req.SerializeAsString()));
  EXPECT_EQ(back.ack().nacks(0).reason(), "bind failed");
  EXPECT_EQ(back.msg_case(), WatchRequest::kAck);
}

TEST(SyncProtoTest, ServiceHasThreeMethods) {
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      "portico.sync.v1.ConfigSync");
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(service->method_count(), 3);
  EXPECT_TRUE(service->FindMethodByName("Watch")->client_streaming());
  EXPECT_TRUE(service->FindMethodByName("Watch")->server_streaming());
  EXPECT_TRUE(service->FindMethodByName("List")->server_streaming());
}

}  // namespace
}  // namespace portico::sync::v1
