// AccessLogBuffer and AccessLogSink: unit tests.
#include "gateway/server/access_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace portico::gateway::server {
namespace {

TEST(AccessLogTest, FormatsEscapedJsonLinesAndFlushesByAge) {
  auto path = std::filesystem::temp_directory_path() /
              ("portico-access-log-test-" + std::to_string(getpid()));
  std::filesystem::remove(path);
  auto sink = AccessLogSink::Open(path.string());
  ASSERT_TRUE(sink.ok());
  AccessLogBuffer buffer(*sink);
  AccessRecord r;
  r.time_unix_us = 1714564800123456;  // 2024-05-01T12:00:00.123Z
  r.client = "10.0.0.1";
  r.method = "GET";
  r.path = "/a?q=\"x\"\\";
  r.host = "example.com";
  r.status = 200;
  r.bytes = 1234;
  r.duration_us = 412;
  r.upstream = "10.0.0.7:3000";
  r.route = "infra/web";
  r.rule = "0.0";
  buffer.Append(r, 1000);
  EXPECT_EQ(buffer.pending(),
            "{\"time\":\"2024-05-01T12:00:00.123Z\",\"client\":\"10.0.0.1\",\"method\":\"GET\","
            "\"path\":\"/a?q=\\\"x\\\"\\\\\",\"host\":\"example.com\",\"status\":200,"
            "\"bytes\":1234,\"duration_ms\":0.412,\"upstream\":\"10.0.0.7:3000\","
            "\"route\":\"infra/web\",\"rule\":\"0.0\"}\n");
  buffer.MaybeFlush(1099);
  EXPECT_FALSE(buffer.pending().empty());
  EXPECT_EQ(buffer.FlushDeadlineMs(), 1100u);
  buffer.MaybeFlush(1100);
  EXPECT_TRUE(buffer.pending().empty());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().back(), '\n');
  EXPECT_NE(text.str().find("\"status\":200"), std::string::npos);
  std::filesystem::remove(path);

  std::string control;
  AppendJsonString(std::string_view("a\x01\x7f", 3), &control);
  EXPECT_EQ(control, "\"a\\u0001\\u007f\"");
  // Long texts are scanned eight bytes at a time: an escape in any position of any word.
  const std::string plain = "/api/v1/items/caf\xc3\xa9-0123456789";  // UTF-8 passes as is
  for (size_t at = 0; at <= plain.size(); ++at) {
    for (char special : {'"', '\\', '\x1f', '\x7f'}) {
      std::string text = plain;
      text.insert(at, 1, special);
      std::string want = plain;
      want.insert(at, special == '"'      ? "\\\""
                      : special == '\\'   ? "\\\\"
                      : special == '\x1f' ? "\\u001f"
                                          : "\\u007f");
      std::string got;
      AppendJsonString(text, &got);
      EXPECT_EQ(got, "\"" + want + "\"") << "at " << at;
    }
  }
  std::string clean;
  AppendJsonString(plain, &clean);
  EXPECT_EQ(clean, "\"" + plain + "\"");
  auto off = AccessLogSink::Open("off");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(*off, nullptr);
  EXPECT_FALSE(AccessLogSink::Open("/nonexistent-dir/x.log").ok());
}

}  // namespace
}  // namespace portico::gateway::server
