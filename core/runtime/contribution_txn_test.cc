#include "core/runtime/contribution_txn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace portico::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kF = "route_rules.v1";
const std::string kG = "backend.v1";

// Committed is a base snapshot and its owner index, built through a transaction.
struct Committed {
  RuntimeSnapshot snapshot;
  OwnerIndex owners;
};

Committed Commit(
    const std::vector<std::tuple<std::string, std::string, std::string, std::string>>& entries) {
  Committed c;
  for (const auto& [format, id, owner, json] : entries) {
    auto& map = c.snapshot.formats[format];
    auto copy = map ? std::make_shared<FormatEntries>(*map) : std::make_shared<FormatEntries>();
    (*copy)[id] = RuntimeEntry{owner, std::make_shared<const std::string>(json)};
    map = copy;
    c.owners[owner].insert({format, id});
  }
  return c;
}

std::vector<std::string> Describe(const std::vector<ContributionTxn::EntryChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) {
    std::string line = *c.format + " " + *c.id + ": ";
    line += c.before ? c.before->owner + "=" + *c.before->json : "-";
    line += " -> ";
    line += c.after ? c.after->owner + "=" + *c.after->json : "-";
    out.push_back(line);
  }
  return out;
}

TEST(ContributionTxnTest, PutConflictUnchangedAndRemove) {
  Committed c = Commit({{kF, "x", "o/A/n/a", "1"}});
  ContributionTxn txn(c.snapshot, c.owners);
  const RuntimeEntry* holder = nullptr;
  EXPECT_EQ(txn.Put("o/B/n/b", kF, "x", "2", &holder), ContributionTxn::PutResult::kConflict);
  ASSERT_NE(holder, nullptr);
  EXPECT_EQ(holder->owner, "o/A/n/a");
  EXPECT_EQ(txn.Put("o/A/n/a", kF, "x", "1"), ContributionTxn::PutResult::kUnchanged);
  EXPECT_EQ(txn.Put("o/B/n/b", kF, "y", "2"), ContributionTxn::PutResult::kStored);
  txn.Remove("o/A/n/a", kF, "y");  // not a's: no-op
  EXPECT_NE(txn.Working(kF, "y"), nullptr);
  txn.Remove("o/B/n/b", kF, "y");
  EXPECT_EQ(txn.Working(kF, "y"), nullptr);
  EXPECT_THAT(txn.Changes(), IsEmpty());
}

TEST(ContributionTxnTest, ClearThenPutTheSameBytesIsNoChange) {
  Committed c = Commit({{kF, "x", "o/A/n/a", "1"}, {kG, "y", "o/A/n/a", "2"}});
  ContributionTxn txn(c.snapshot, c.owners);
  txn.ClearOwner("o/A/n/a");
  EXPECT_EQ(txn.Working(kF, "x"), nullptr);
  EXPECT_THAT(txn.WorkingEntries("o/A/n/a"), IsEmpty());
  txn.Put("o/A/n/a", kF, "x", "1");
  txn.Put("o/A/n/a", kG, "y", "2");
  EXPECT_THAT(txn.Changes(), IsEmpty());
  EXPECT_EQ(txn.Working(kF, "x")->json, c.snapshot.Find(kF, "x")->json);  // bytes shared
  auto formats = txn.Build(txn.Changes());
  EXPECT_EQ(formats.at(kF), c.snapshot.formats.at(kF));
}

TEST(ContributionTxnTest, UndoRestoresExactlyWhatACallChanged) {
  Committed c = Commit({{kF, "x", "o/A/n/a", "1"}});
  ContributionTxn txn(c.snapshot, c.owners);
  txn.Put("o/B/n/b", kF, "keep", "k");
  size_t mark = txn.Mark();
  txn.ClearOwner("o/A/n/a");
  txn.Put("o/B/n/b", kF, "x", "b");
  txn.Put("o/B/n/b", kF, "keep", "changed");
  txn.Put("o/C/n/c", kG, "z", "c");
  txn.UndoTo(mark);
  EXPECT_THAT(Describe(txn.Changes()), ElementsAre("route_rules.v1 keep: - -> o/B/n/b=k"));
  EXPECT_EQ(txn.Working(kF, "x")->owner, "o/A/n/a");
  EXPECT_THAT(txn.WorkingEntries("o/B/n/b"), ElementsAre(EntryKey(kF, "keep")));
}

TEST(ContributionTxnTest, RollbackRestoresOwnersAndCascades) {
  Committed c = Commit({{kF, "x", "o/A/n/a", "a1"}, {kF, "w", "o/D/n/d", "d1"}});
  ContributionTxn txn(c.snapshot, c.owners);
  txn.ClearOwner("o/A/n/a");          // a frees x
  txn.Put("o/A/n/a", kF, "y", "a2");  // and moves to y
  txn.Put("o/B/n/b", kF, "x", "b");   // b takes x
  txn.Put("o/B/n/b", kG, "bb", "b");  // and something else
  txn.ClearOwner("o/D/n/d");          // d frees w
  txn.Put("o/A/n/a", kF, "w", "a3");  // a takes w
  txn.Put("o/E/n/e", kF, "e", "e");   // unrelated
  auto cascades = txn.Rollback({"o/A/n/a"});
  ASSERT_EQ(cascades.size(), 1u);
  EXPECT_EQ(cascades[0].owner, "o/B/n/b");
  EXPECT_EQ(cascades[0].reason,
            "route_rules.v1 id \"x\" is restored for o/A/n/a, whose change was rejected");
  // a is back on x; b has nothing; w stays freed by d; e is untouched.
  EXPECT_THAT(Describe(txn.Changes()),
              ElementsAre("route_rules.v1 e: - -> o/E/n/e=e", "route_rules.v1 w: o/D/n/d=d1 -> -"));
  EXPECT_EQ(txn.Working(kF, "x")->owner, "o/A/n/a");
  EXPECT_THAT(txn.WorkingEntries("o/B/n/b"), IsEmpty());
}

TEST(ContributionTxnTest, BuildSharesUntouchedFormatsAndDropsEmptiedOnes) {
  Committed c = Commit({{kF, "x", "o/A/n/a", "1"}, {kG, "y", "o/B/n/b", "2"}});
  ContributionTxn txn(c.snapshot, c.owners);
  txn.ClearOwner("o/B/n/b");
  txn.Put("o/C/n/c", "certificate.v1", "z", "3");
  auto changes = txn.Changes();
  EXPECT_THAT(Describe(changes),
              ElementsAre("backend.v1 y: o/B/n/b=2 -> -", "certificate.v1 z: - -> o/C/n/c=3"));
  auto formats = txn.Build(changes);
  EXPECT_EQ(formats.size(), 2u);
  EXPECT_EQ(formats.at(kF), c.snapshot.formats.at(kF));
  EXPECT_EQ(formats.count(kG), 0u);
  EXPECT_EQ(formats.at("certificate.v1")->size(), 1u);
}

}  // namespace
}  // namespace portico::core
