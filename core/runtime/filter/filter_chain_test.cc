// filter_chain_test.cc: the filter chain (order, pending and resume, cancellation, per-request
// slots), plugin filters through the C ABI (an ABI 1.1 plugin loaded by the real loader), and
// the filter_binding.v1 table (refusals, reuse of unchanged instances).
#include "core/runtime/filter/filter_chain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/plugin/plugin_loader.h"
#include "core/runtime/filter/filter_bindings.h"
#include "core/runtime/filter/plugin_filter.h"
#include "core/runtime/filter/testing/fake_filter_context.h"

namespace portico::core::filter {
namespace {

using ::testing::ElementsAre;
using testing::FakeFilterContext;
using ::testing::HasSubstr;

// Recorder notes each hook it sees in a shared journal; `pending` makes its request hook start a
// call, whose completion answers `after_call`.
class Recorder final : public HttpFilter, public CallDone {
 public:
  Recorder(std::string name, std::vector<std::string>* journal, bool pending = false,
           FilterResult after_call = FilterResult::kContinue)
      : name_(std::move(name)), journal_(journal), pending_(pending), after_(after_call) {}
  FilterResult OnRequestHead(FilterContext& ctx, FilterSlot& slot) const override {
    journal_->push_back(name_ + ".request");
    slot.state = const_cast<Recorder*>(this);
    slot.created = true;
    if (!pending_) return FilterResult::kContinue;
    OutboundRequest call;
    call.target = "/" + name_;
    return ctx.HttpCall(call, const_cast<Recorder*>(this)) ? FilterResult::kPending
                                                           : FilterResult::kContinue;
  }
  FilterResult OnUpstreamRequest(FilterContext&, FilterSlot&) const override {
    journal_->push_back(name_ + ".upstream");
    return FilterResult::kContinue;
  }
  void OnResponseHead(FilterContext&, FilterSlot&) const override {
    journal_->push_back(name_ + ".response");
  }
  void OnLog(FilterContext&, FilterSlot&) const override { journal_->push_back(name_ + ".log"); }
  void OnRequestEnd(FilterContext&, FilterSlot& slot) const override {
    journal_->push_back(name_ + (slot.created ? ".end" : ".end-without-state"));
  }
  void CancelCall(FilterContext&, FilterSlot&) const override {
    journal_->push_back(name_ + ".cancel");
  }
  FilterResult OnCallDone(const OutboundResponse& response) override {
    journal_->push_back(name_ + ".done " + std::to_string(response.status));
    return after_;
  }
  std::string_view name() const override { return name_; }

 private:
  std::string name_;
  std::vector<std::string>* journal_;
  bool pending_;
  FilterResult after_;
};

TEST(FilterChainTest, RunsEveryHookInOrderAndEndsEachFilterOnce) {
  std::vector<std::string> journal;
  FilterList rule{std::make_shared<Recorder>("a", &journal),
                  std::make_shared<Recorder>("b", &journal)};
  FilterList backend{std::make_shared<Recorder>("c", &journal)};
  FakeFilterContext ctx;
  FilterChain chain;
  chain.Start(&rule);
  EXPECT_EQ(chain.RunRequestHead(ctx), FilterResult::kContinue);
  chain.Append(&backend);
  EXPECT_EQ(chain.RunRequestHead(ctx), FilterResult::kContinue);  // only c's runs now
  EXPECT_EQ(chain.RunUpstreamRequest(ctx), FilterResult::kContinue);
  chain.RunResponseHead(ctx);
  chain.End(ctx);
  EXPECT_THAT(journal,
              ElementsAre("a.request", "b.request", "c.request", "a.upstream", "b.upstream",
                          "c.upstream", "a.response", "b.response", "c.response", "a.log", "b.log",
                          "c.log", "a.end", "b.end", "c.end"));
  EXPECT_TRUE(chain.empty());
  chain.End(ctx);  // twice is harmless
  EXPECT_EQ(journal.size(), 15u);
}

TEST(FilterChainTest, PendingParksAndResumeGoesOnWithTheNextFilter) {
  std::vector<std::string> journal;
  FilterList rule{std::make_shared<Recorder>("a", &journal, /*pending=*/true),
                  std::make_shared<Recorder>("b", &journal)};
  FakeFilterContext ctx;
  FilterChain chain;
  chain.Start(&rule);
  EXPECT_EQ(chain.RunRequestHead(ctx), FilterResult::kPending);
  EXPECT_TRUE(chain.pending());
  EXPECT_THAT(journal, ElementsAre("a.request"));  // b waits for a's call
  OutboundResponse answer;
  answer.status = 204;
  EXPECT_EQ(chain.Resume(ctx.Complete(answer), ctx), FilterResult::kContinue);
  EXPECT_FALSE(chain.pending());
  EXPECT_THAT(journal, ElementsAre("a.request", "a.done 204", "b.request"));
  chain.End(ctx);
}

TEST(FilterChainTest, AResponseFromACompletedCallStopsTheChain) {
  std::vector<std::string> journal;
  FilterList rule{std::make_shared<Recorder>("a", &journal, true, FilterResult::kRespond),
                  std::make_shared<Recorder>("b", &journal)};
  FakeFilterContext ctx;
  FilterChain chain;
  chain.Start(&rule);
  ASSERT_EQ(chain.RunRequestHead(ctx), FilterResult::kPending);
  EXPECT_EQ(chain.Resume(ctx.Complete(OutboundResponse{}), ctx), FilterResult::kRespond);
  chain.End(ctx);
  // b never ran, so it is neither logged nor ended.
  EXPECT_THAT(journal, ElementsAre("a.request", "a.done 0", "a.log", "a.end"));
}

TEST(FilterChainTest, EndingWhileACallIsPendingCancelsIt) {
  std::vector<std::string> journal;
  FilterList rule{std::make_shared<Recorder>("a", &journal, true)};
  FakeFilterContext ctx;
  FilterChain chain;
  chain.Start(&rule);
  ASSERT_EQ(chain.RunRequestHead(ctx), FilterResult::kPending);
  chain.End(ctx);  // the client went away
  EXPECT_THAT(journal, ElementsAre("a.request", "a.cancel", "a.log", "a.end"));
}

// The ABI 1.1 fixture (testdata/abi11_filter.c), loaded by the real loader.
class PluginFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugins_ = std::make_unique<PluginSet>(LoadPluginFiles({ABI11_FIXTURE_PATH}));
    ASSERT_TRUE(plugins_->RefusalLines().empty()) << plugins_->RefusalLines()[0];
    type_ = plugins_->registry.FindFilterType("example.portico.io/Stamp");
    ASSERT_NE(type_, nullptr);
  }
  std::unique_ptr<PluginSet> plugins_;
  const FilterTypeInfo* type_ = nullptr;
};

TEST_F(PluginFilterTest, AnAbi11FilterLoadsAndRuns) {
  EXPECT_EQ(type_->request_create, nullptr);  // 1.1: the 1.2 hooks are absent, not garbage
  EXPECT_EQ(type_->on_upstream_request, nullptr);
  auto filter = PluginFilter::Create(*type_, R"("v1")");
  ASSERT_TRUE(filter.ok()) << filter.status();
  FakeFilterContext ctx;
  FilterSlot slot;
  EXPECT_EQ((*filter)->OnRequestHead(ctx, slot), FilterResult::kContinue);
  EXPECT_EQ(ctx.Header(Side::kRequest, "X-Stamp", 0), R"("v1")");
  EXPECT_EQ((*filter)->OnUpstreamRequest(ctx, slot), FilterResult::kContinue);
  (*filter)->OnResponseHead(ctx, slot);
  EXPECT_EQ(ctx.Header(Side::kResponse, "x-stamped", 0), "1");
  (*filter)->OnRequestEnd(ctx, slot);
  EXPECT_FALSE(slot.created);

  FakeFilterContext deny;
  deny.path_ = "/deny";
  FilterSlot deny_slot;
  EXPECT_EQ((*filter)->OnRequestHead(deny, deny_slot), FilterResult::kRespond);
  EXPECT_TRUE(deny.responded);
  EXPECT_EQ(deny.reply_status, 403);
  EXPECT_EQ(deny.reply_body, "stamped out");
  (*filter)->OnRequestEnd(deny, deny_slot);
}

TEST_F(PluginFilterTest, BindingsAreBuiltOffTheRequestPathAndRefusalsNameTheOwner) {
  RuntimeSnapshot snapshot;
  auto entries = std::make_shared<FormatEntries>();
  auto put = [&](const std::string& id, const std::string& json) {
    entries->emplace(id, RuntimeEntry(id, std::make_shared<const std::string>(json)));
  };
  put("example.portico.io/Stamp/ns/good",
      R"({"filterType":"example.portico.io/Stamp","config":"g"})");
  put("example.portico.io/Stamp/ns/refused",
      R"({"filterType":"example.portico.io/Stamp","config":"refuse"})");
  put("example.portico.io/Other/ns/unknown",
      R"({"filterType":"example.portico.io/Other","config":{}})");
  snapshot.formats[PORTICO_FORMAT_FILTER_BINDING] = entries;
  std::vector<BindingRefusal> refusals;
  auto table = FilterBindings::Build(snapshot, plugins_->registry, nullptr, &refusals);
  ASSERT_NE(table->Find("example.portico.io/Stamp/ns/good"), nullptr);
  EXPECT_EQ(table->Find("example.portico.io/Stamp/ns/refused"), nullptr);
  EXPECT_EQ(table->Find("example.portico.io/Other/ns/unknown"), nullptr);
  ASSERT_EQ(refusals.size(), 2u);
  EXPECT_EQ(refusals[0].owner, "example.portico.io/Other/ns/unknown");
  EXPECT_THAT(refusals[0].reason, HasSubstr("filter type example.portico.io/Other is not provided "
                                            "by any plugin this gateway loaded"));
  EXPECT_EQ(refusals[1].owner, "example.portico.io/Stamp/ns/refused");
  EXPECT_THAT(refusals[1].reason, HasSubstr("this stamp refuses \"refuse\""));

  // An unchanged entry keeps its instance; a changed one gets a new one.
  std::vector<BindingRefusal> again;
  auto next = FilterBindings::Build(snapshot, plugins_->registry, table.get(), &again);
  EXPECT_EQ(next->Find("example.portico.io/Stamp/ns/good"),
            table->Find("example.portico.io/Stamp/ns/good"));
  RuntimeSnapshot changed;
  auto other = std::make_shared<FormatEntries>();
  other->emplace("example.portico.io/Stamp/ns/good",
                 RuntimeEntry("example.portico.io/Stamp/ns/good",
                              std::make_shared<const std::string>(
                                  R"({"filterType":"example.portico.io/Stamp","config":"g2"})")));
  changed.formats[PORTICO_FORMAT_FILTER_BINDING] = other;
  auto third = FilterBindings::Build(changed, plugins_->registry, next.get(), &again);
  const HttpFilter* fresh = third->Find("example.portico.io/Stamp/ns/good");
  ASSERT_NE(fresh, nullptr);
  EXPECT_NE(fresh, next->Find("example.portico.io/Stamp/ns/good"));
  FakeFilterContext ctx;
  FilterSlot slot;
  fresh->OnRequestHead(ctx, slot);
  EXPECT_EQ(ctx.Header(Side::kRequest, "x-stamp", 0), R"("g2")");
  fresh->OnRequestEnd(ctx, slot);
}

TEST_F(PluginFilterTest, AttachedBindingsComeInChainOrder) {
  RuntimeSnapshot snapshot;
  auto entries = std::make_shared<FormatEntries>();
  auto put = [&](const std::string& id, const std::string& attach) {
    entries->emplace(id, RuntimeEntry(id, std::make_shared<const std::string>(
                                              R"({"filterType":"example.portico.io/Stamp",)"
                                              R"("config":")" +
                                              id + R"(","attach":)" + attach + "}")));
  };
  // Same type (phase, order): the rule's first, then the route's, then the Gateway's; among
  // the Gateway's the older first.
  put("gw-new", R"({"targets":[{"gateway":{"namespace":"ns","name":"web"}}],)"
                R"("created":"2026-02-01T00:00:00Z"})");
  put("gw-old", R"({"targets":[{"gateway":{"namespace":"ns","name":"web"}},)"
                R"({"route":{"namespace":"ns","name":"r"}}],"created":"2026-01-01T00:00:00Z"})");
  put("rule", R"({"targets":[{"route":{"namespace":"ns","name":"r"},"rule":"named"}],)"
              R"("created":"2026-03-01T00:00:00Z"})");
  put("other", R"({"targets":[{"route":{"namespace":"ns","name":"elsewhere"}}]})");
  put("plain", "null");
  snapshot.formats[PORTICO_FORMAT_FILTER_BINDING] = entries;
  std::vector<BindingRefusal> refusals;
  auto table = FilterBindings::Build(snapshot, plugins_->registry, nullptr, &refusals);
  ASSERT_TRUE(refusals.empty());
  ASSERT_TRUE(table->has_attached());
  std::vector<const HttpFilter*> chain;
  table->AttachedTo("ns/r", "named", {"ns/web"}, &chain);
  // gw-old is attached to the route and the Gateway: once, at its route place.
  EXPECT_THAT(chain,
              ElementsAre(table->Find("rule"), table->Find("gw-old"), table->Find("gw-new")));
  chain.clear();
  table->AttachedTo("ns/r", "", {}, &chain);
  EXPECT_THAT(chain, ElementsAre(table->Find("gw-old")));
  chain.clear();
  table->AttachedTo("ns/unrelated", "", {"ns/other-gw"}, &chain);
  EXPECT_TRUE(chain.empty());
}

}  // namespace
}  // namespace portico::core::filter
