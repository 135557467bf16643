// filter_chain.h: FilterChain, one request's walk through its filters: the rule's filters, then
// (once a backend is chosen) that backend's, each with its own FilterSlot. The exchange calls the
// Run* hooks at its phases; a hook that returns kPending parks the chain where it stopped, and
// Resume (with what the completed call decided) goes on from the next filter.
//
// Threading: none; one exchange on one worker. Ownership: holds borrowed pointers to filters
// that the request's pinned snapshot owns; reused from request to request (capacity kept).
#ifndef PORTICO_CORE_RUNTIME_FILTER_FILTER_CHAIN_H_
#define PORTICO_CORE_RUNTIME_FILTER_FILTER_CHAIN_H_

#include <cstddef>
#include <vector>

#include "core/runtime/filter/http_filter.h"

namespace portico::core::filter {

class FilterChain {
 public:
  // Start begins a request with `rule`'s filters (may be null or empty).
  void Start(const FilterList* rule);
  // Append adds filters (a chosen backend's) after those already there; their OnRequestHead
  // runs at the next RunRequestHead.
  void Append(const FilterList* more);
  void Append(const HttpFilter* filter);

  // RunRequestHead runs OnRequestHead of every filter not yet run; kPending parks the chain.
  FilterResult RunRequestHead(FilterContext& ctx) { return Run(Hook::kRequestHead, ctx); }
  // RunUpstreamRequest runs OnUpstreamRequest of every filter (after RunRequestHead finished).
  FilterResult RunUpstreamRequest(FilterContext& ctx) { return Run(Hook::kUpstreamRequest, ctx); }
  // Resume continues a parked chain with the result of the call that completed: kContinue goes
  // on with the next filter, kRespond/kPending are returned as they are.
  FilterResult Resume(FilterResult result, FilterContext& ctx);
  // RunResponseHead runs OnResponseHead of every filter that ran on the request.
  void RunResponseHead(FilterContext& ctx);
  // End runs OnLog and OnRequestEnd of every filter that ran and cancels a parked call. Safe to
  // call twice; the chain is empty afterwards.
  void End(FilterContext& ctx);

  bool empty() const { return filters_.empty(); }
  bool pending() const { return pending_; }

 private:
  enum class Hook : uint8_t { kRequestHead, kUpstreamRequest };
  FilterResult Run(Hook hook, FilterContext& ctx);

  std::vector<const HttpFilter*> filters_;
  std::vector<FilterSlot> slots_;
  size_t reached_ = 0;  // filters whose OnRequestHead ran (or is pending)
  size_t next_ = 0;     // the next filter of the current hook
  Hook hook_ = Hook::kRequestHead;
  bool pending_ = false;
};

}  // namespace portico::core::filter

#endif  // PORTICO_CORE_RUNTIME_FILTER_FILTER_CHAIN_H_
