// header_util_test.cc: character classes, field-line parsing, lists, HeaderList, hop-by-hop.
#include "gateway/http/header_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace portico::gateway::http {
namespace {

TEST(HeaderUtilTest, TokenCharacters) {
  EXPECT_TRUE(IsToken("Content-Type"));
  EXPECT_TRUE(IsToken("!#$%&'*+-.^_`|~09azAZ"));
  EXPECT_FALSE(IsToken(""));
  for (char c : std::string_view("\"(),/:;<=>?@[\\]{} \t\x7f\x80\xff")) {
    EXPECT_FALSE(IsTokenChar(c)) << int(static_cast<unsigned char>(c));
  }
  EXPECT_FALSE(IsTokenChar('\0'));
}

TEST(HeaderUtilTest, FieldValueCharacters) {
  EXPECT_TRUE(IsFieldValueChar('\t'));
  EXPECT_TRUE(IsFieldValueChar(' '));
  EXPECT_TRUE(IsFieldValueChar('~'));
  EXPECT_TRUE(IsFieldValueChar('\x80'));
  EXPECT_TRUE(IsFieldValueChar('\xff'));
  for (int c = 0; c < 0x20; ++c) {
    if (c != '\t') {
      EXPECT_FALSE(IsFieldValueChar(static_cast<char>(c))) << c;
    }
  }
  EXPECT_FALSE(IsFieldValueChar('\x7f'));
}

TEST(HeaderUtilTest, CaseInsensitiveComparison) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-LENGTH"));
  EXPECT_FALSE(EqualsIgnoreCase("Content-Length", "Content-Lengt"));
  EXPECT_FALSE(EqualsIgnoreCase("a", "b"));
  EXPECT_TRUE(TokenEquals("KEEP-Alive", "keep-alive"));
  EXPECT_FALSE(TokenEquals("keep_alive", "keep-alive"));
  EXPECT_FALSE(TokenEquals("keep-aliv", "keep-alive"));
}

TEST(HeaderUtilTest, ParseFieldLine) {
  HeaderField field;
  EXPECT_EQ(ParseFieldLine("Name: value", &field), "");
  EXPECT_EQ(field.name, "Name");
  EXPECT_EQ(field.value, "value");
  EXPECT_EQ(ParseFieldLine("Name:value", &field), "");
  EXPECT_EQ(field.value, "value");
  EXPECT_EQ(ParseFieldLine("Name: \t a b \t ", &field), "");
  EXPECT_EQ(field.value, "a b");
  EXPECT_EQ(ParseFieldLine("Name:", &field), "");
  EXPECT_EQ(field.value, "");
  EXPECT_EQ(ParseFieldLine("Name:   ", &field), "");
  EXPECT_EQ(field.value, "");
  EXPECT_EQ(ParseFieldLine("X: \xe2\x82\xac", &field), "");
  EXPECT_EQ(ParseFieldLine(" Name: v", &field), "obs_fold");
  EXPECT_EQ(ParseFieldLine("\tName: v", &field), "obs_fold");
  EXPECT_EQ(ParseFieldLine("Name : v", &field), "whitespace_before_colon");
  EXPECT_EQ(ParseFieldLine("Name", &field), "missing_colon");
  EXPECT_EQ(ParseFieldLine("", &field), "invalid_header_name");
  EXPECT_EQ(ParseFieldLine(":v", &field), "invalid_header_name");
  EXPECT_EQ(ParseFieldLine("Na(me: v", &field), "invalid_header_name");
  EXPECT_EQ(ParseFieldLine("Name: a\rb", &field), "bare_cr");
  EXPECT_EQ(ParseFieldLine("Name: a\nb", &field), "invalid_header_value");
  EXPECT_EQ(ParseFieldLine(std::string_view("Name: a\0b", 9), &field), "invalid_header_value");
  // Long values go through the unrolled loop; a bad byte at any position is found.
  for (size_t at = 0; at < 13; ++at) {
    std::string line = "X: " + std::string(12, 'v');
    line.insert(3 + at, 1, '\x01');
    EXPECT_EQ(ParseFieldLine(line, &field), "invalid_header_value") << at;
  }
}

TEST(HeaderUtilTest, ParseContentLength) {
  uint64_t length = 99;
  EXPECT_TRUE(ParseContentLength("0", &length));
  EXPECT_EQ(length, 0u);
  EXPECT_TRUE(ParseContentLength("9223372036854775807", &length));
  EXPECT_EQ(length, 9223372036854775807u);
  for (std::string_view bad : {"", " 1", "1 ", "+1", "-1", "1,1", "0x1", "9223372036854775808",
                               "18446744073709551616", "99999999999999999999999999"}) {
    EXPECT_FALSE(ParseContentLength(bad, &length)) << bad;
  }
}

TEST(HeaderUtilTest, ListElements) {
  std::vector<std::string> elements;
  ForEachListElement(" a ,b,, \t,c d ,", [&](std::string_view e) {
    elements.emplace_back(e);
    return true;
  });
  EXPECT_EQ(elements, (std::vector<std::string>{"a", "b", "c d"}));
  EXPECT_TRUE(ListContainsToken("keep-alive, Close", "close"));
  EXPECT_FALSE(ListContainsToken("closed", "close"));
  EXPECT_FALSE(ListContainsToken("", "close"));
}

TEST(HeaderUtilTest, HeaderListSpillsAndClears) {
  HeaderList list;
  std::vector<std::string> names;
  for (int i = 0; i < 80; ++i) names.push_back("N" + std::to_string(i));
  for (int i = 0; i < 80; ++i) list.push_back({names[i], "v"});
  ASSERT_EQ(list.size(), 80u);
  for (int i = 0; i < 80; ++i) EXPECT_EQ(list[i].name, names[i]);
  EXPECT_EQ(list.Find("n79"), &list[79]);
  EXPECT_EQ(list.Find("missing"), nullptr);
  HeaderList copy = list;
  EXPECT_EQ(copy.size(), 80u);
  EXPECT_EQ(copy[40].name, "N40");
  list.clear();
  EXPECT_TRUE(list.empty());
  list.push_back({"Host", "a"});
  list.push_back({"host", "b"});
  EXPECT_EQ(list.Count("HOST"), 2u);
  EXPECT_EQ(list.span().size(), 2u);
  EXPECT_EQ(copy.size(), 80u);
}

TEST(HeaderUtilTest, HopByHop) {
  for (std::string_view name : {"Connection", "keep-alive", "Proxy-Connection", "TE", "Trailer",
                                "Transfer-Encoding", "UPGRADE"}) {
    EXPECT_TRUE(IsHopByHopHeader(name)) << name;
  }
  for (std::string_view name :
       {"Content-Length", "Host", "Trailers", "T", "Upgrade-Insecure-Requests"}) {
    EXPECT_FALSE(IsHopByHopHeader(name)) << name;
  }
  const HeaderField fields[] = {{"Connection", "keep-alive, X-Secret"},
                                {"X-Secret", "1"},
                                {"connection", "x-other"},
                                {"X-Kept", "2"}};
  HopByHopFilter filter(fields);
  EXPECT_TRUE(filter.Drops("x-secret"));
  EXPECT_TRUE(filter.Drops("X-Other"));
  EXPECT_TRUE(filter.Drops("Keep-Alive"));
  EXPECT_FALSE(filter.Drops("X-Kept"));
  const HeaderField plain[] = {{"Connection", "close"}, {"X-Kept", "2"}};
  HopByHopFilter plain_filter(plain);
  EXPECT_FALSE(plain_filter.Drops("X-Kept"));
  EXPECT_FALSE(plain_filter.Drops("close"));
  EXPECT_TRUE(plain_filter.Drops("connection"));
}

}  // namespace
}  // namespace portico::gateway::http
