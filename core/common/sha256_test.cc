#include "core/common/sha256.h"

#include <gtest/gtest.h>

namespace portico::core {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, Digest128IsTheFirstHalfOfTheHash) {
  Digest128 abc = Sha256Digest128("abc");
  EXPECT_EQ(abc.hi, 0xba7816bf8f01cfeaULL);
  EXPECT_EQ(abc.lo, 0x414140de5dae2223ULL);
  EXPECT_EQ(abc, Sha256Digest128(std::string("abc")));
  EXPECT_NE(abc, Sha256Digest128("abd"));
  EXPECT_NE(abc, Digest128{});
}

}  // namespace
}  // namespace portico::core
