// metrics_text_test.cc: the /metrics exposition format.
#include "controller/admin/metrics_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace portico::controller::admin {
namespace {

using ::testing::HasSubstr;

TEST(MetricsTextTest, EmitsEveryKindAndEscapesLabels) {
  core::KindRegistry registry;
  core::KindInfo route;
  route.id = {"gateway.networking.k8s.io", "HTTPRoute"};
  route.plural = "httproutes";
  ASSERT_TRUE(registry.AddKind(route).ok());
  core::KindInfo secret;
  secret.id = {"", "Secret"};
  secret.plural = "secrets";
  ASSERT_TRUE(registry.AddKind(secret).ok());

  ControllerStats stats;
  stats.ready = true;
  stats.reconciler.processed_by_kind["HTTPRoute.gateway.networking.k8s.io"] = 10000;
  stats.objects_by_kind["HTTPRoute.gateway.networking.k8s.io"] = 3;
  stats.reconciler.requeued_by_dependency = 4;
  stats.config_errors = 2;
  std::string text = RenderMetrics(stats, registry);
  EXPECT_THAT(text, HasSubstr("# TYPE portico_controller_processed_total counter\n"));
  EXPECT_THAT(text, HasSubstr("portico_controller_processed_total{kind=\"HTTPRoute\",group=\""
                              "gateway.networking.k8s.io\"} 10000\n"));
  EXPECT_THAT(text,
              HasSubstr("portico_controller_processed_total{kind=\"Secret\",group=\"\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("portico_controller_objects{kind=\"HTTPRoute\",group=\""
                              "gateway.networking.k8s.io\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("portico_controller_requeues_total 4\n"));
  EXPECT_THAT(text, HasSubstr("portico_controller_config_errors 2\n"));
  EXPECT_THAT(text, HasSubstr("portico_controller_ready 1\n"));
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

}  // namespace
}  // namespace portico::controller::admin
