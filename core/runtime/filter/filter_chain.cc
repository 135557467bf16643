// filter_chain.cc: see filter_chain.h.
#include "core/runtime/filter/filter_chain.h"

namespace portico::core::filter {

void FilterChain::Start(const FilterList* rule) {
  filters_.clear();
  slots_.clear();
  reached_ = next_ = 0;
  hook_ = Hook::kRequestHead;
  pending_ = false;
  Append(rule);
}

void FilterChain::Append(const FilterList* more) {
  if (more == nullptr) return;
  for (const auto& f : *more) {
    filters_.push_back(f.get());
    slots_.emplace_back();
  }
}

void FilterChain::Append(const HttpFilter* filter) {
  filters_.push_back(filter);
  slots_.emplace_back();
}

FilterResult FilterChain::Run(Hook hook, FilterContext& ctx) {
  if (hook_ != hook) {
    hook_ = hook;
    next_ = hook == Hook::kRequestHead ? reached_ : 0;
  }
  if (hook == Hook::kRequestHead) next_ = reached_;
  while (next_ < filters_.size()) {
    const size_t i = next_++;
    FilterResult r;
    if (hook == Hook::kRequestHead) {
      reached_ = next_;
      r = filters_[i]->OnRequestHead(ctx, slots_[i]);
    } else {
      r = filters_[i]->OnUpstreamRequest(ctx, slots_[i]);
    }
    if (r == FilterResult::kPending) {
      pending_ = true;
      return r;
    }
    if (r == FilterResult::kRespond) return r;
  }
  return FilterResult::kContinue;
}

FilterResult FilterChain::Resume(FilterResult result, FilterContext& ctx) {
  pending_ = result == FilterResult::kPending;
  if (result != FilterResult::kContinue) return result;
  if (hook_ == Hook::kRequestHead) {
    return Run(Hook::kRequestHead, ctx);
  }
  return Run(Hook::kUpstreamRequest, ctx);
}

void FilterChain::RunResponseHead(FilterContext& ctx) {
  for (size_t i = 0; i < reached_; ++i) filters_[i]->OnResponseHead(ctx, slots_[i]);
}

void FilterChain::End(FilterContext& ctx) {
  if (pending_ && reached_ > 0) {
    // The filter that went pending is the last one reached in the request-head hook, or the
    // current one of the upstream-request hook.
    const size_t i = hook_ == Hook::kRequestHead ? reached_ - 1 : next_ - 1;
    filters_[i]->CancelCall(ctx, slots_[i]);
  }
  pending_ = false;
  for (size_t i = 0; i < reached_; ++i) filters_[i]->OnLog(ctx, slots_[i]);
  for (size_t i = 0; i < reached_; ++i) filters_[i]->OnRequestEnd(ctx, slots_[i]);
  filters_.clear();
  slots_.clear();
  reached_ = next_ = 0;
  hook_ = Hook::kRequestHead;
}

}  // namespace portico::core::filter
