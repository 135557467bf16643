// authority_test.cc: IsValidHostPort, the uri-host [":" port] grammar of Host and absolute-form.
#include "gateway/http/authority.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace portico::gateway::http {
namespace {

using namespace std::string_literals;

TEST(AuthorityTest, AcceptsRegNames) {
  for (std::string_view text :
       {"a", "a.test", "A.Test", "127.0.0.1", "999.1.1.1", "%41.test", "a%2eb%2E", "a-b_c~d.e",
        "!$&'()*+,;=", "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho",
        "xn--bcher-kva.ch"}) {
    EXPECT_TRUE(IsValidHostPort(text)) << text;
  }
}

TEST(AuthorityTest, AcceptsPorts) {
  for (std::string_view text : {"a.test:80", "a.test:", "a.test:0", "a.test:65535",
                                "a.test:0000000000000080", "127.0.0.1:8080"}) {
    EXPECT_TRUE(IsValidHostPort(text)) << text;
  }
}

TEST(AuthorityTest, RejectsBadPorts) {
  for (std::string_view text :
       {"a.test:80x", "a.test:-1", "a.test:+1", "a.test:65536", "a.test:99999",
        "a.test:18446744073709551697", "a.test:8 0", "a.test::80", "a.test:80:", "a.test:80:80",
        "a:b.test", "::1", "a::1", "1:2:3:4:5:6:7:8"}) {
    EXPECT_FALSE(IsValidHostPort(text)) << text;
  }
}

TEST(AuthorityTest, AcceptsIpLiterals) {
  for (std::string_view text :
       {"[::1]", "[::1]:8080", "[::1]:", "[::]", "[2001:db8::1]", "[2001:DB8:0:0:0:0:0:1]",
        "[1:2:3:4:5:6:7:8]", "[::ffff:192.0.2.1]", "[v1.x]", "[V1F.a:b!$]", "[vA.1]:443"}) {
    EXPECT_TRUE(IsValidHostPort(text)) << text;
  }
}

TEST(AuthorityTest, RejectsBadIpLiterals) {
  // Brackets: only around a whole IP literal, closed, followed by nothing but a port.
  for (std::string_view text : {"[::1", "::1]", "[]", "[::1]]", "[[::1]]", "[::1]x", "[::1]:80x",
                                "[::1]:65536", "a[b]", "a[::1]", "a]", "[127.0.0.1]", "[a.test]"}) {
    EXPECT_FALSE(IsValidHostPort(text)) << text;
  }
  // IPv6address: as inet_pton reads it, and no zone id.
  for (std::string_view text :
       {"[::g]", "[1:2:3:4:5:6:7:8:9]", "[1::2::3]", "[:::1]", "[12345::1]", "[::ffff:1.2.3]",
        "[::ffff:01.2.3.4]", "[fe80::1%eth0]", "[fe80::1%25eth0]", "[ ::1]", "[::1 ]"}) {
    EXPECT_FALSE(IsValidHostPort(text)) << text;
  }
  // IPvFuture: "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
  for (std::string_view text :
       {"[v1]", "[v.x]", "[v1.]", "[vg.x]", "[v1.x/]", "[v1.%41]", "[v1.x]y"}) {
    EXPECT_FALSE(IsValidHostPort(text)) << text;
  }
  // A NUL inside the brackets must not cut the literal short for inet_pton.
  EXPECT_FALSE(IsValidHostPort("[::1\0junk]"s));
  EXPECT_FALSE(IsValidHostPort("[::1\0]"s));
  // The longest textual address (45 bytes) passes; a longer literal is refused before the copy.
  EXPECT_TRUE(IsValidHostPort("[0000:0000:0000:0000:0000:ffff:255.255.255.255]"));
  EXPECT_FALSE(IsValidHostPort("[0000:0000:0000:0000:0000:ffff:255.255.255.2550]"));
  EXPECT_FALSE(IsValidHostPort("[" + std::string(200, ':') + "]"));
}

TEST(AuthorityTest, RejectsBadPercentEscapes) {
  for (std::string_view text : {"%", "%4", "%4.test", "%zz", "%4g", "a%", "a%g1", "%%41"}) {
    EXPECT_FALSE(IsValidHostPort(text)) << text;
  }
}

TEST(AuthorityTest, RejectsUserinfoEmptyHostAndOtherBytes) {
  for (std::string_view text :
       {"", ":", ":80", "user@a.test", "u:p@a.test", "@a.test", "a.test@"}) {
    EXPECT_FALSE(IsValidHostPort(text)) << text;
  }
  for (std::string_view text : {"a b", " a", "a ", "a\tb", "a\r", "a\n", "a\x7f", "a/b", "a?b",
                                "a#b", "a\"b", "a<b", "a\\b", "a^b", "a|b", "caf\xc3\xa9.test"}) {
    EXPECT_FALSE(IsValidHostPort(text)) << testing::PrintToString(std::string(text));
  }
}

TEST(AuthorityTest, EveryByteAloneAndInsideAName) {
  constexpr std::string_view kRegName =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=";
  for (int i = 0; i < 256; ++i) {
    const char c = static_cast<char>(i);
    const bool allowed = kRegName.find(c) != std::string_view::npos;
    EXPECT_EQ(IsValidHostPort(std::string(1, c)), allowed) << i;
    EXPECT_EQ(IsValidHostPort("a"s + c + "b"), allowed) << i;
  }
}

}  // namespace
}  // namespace portico::gateway::http
