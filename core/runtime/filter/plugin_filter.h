// plugin_filter.h: PluginFilter, an HttpFilter that runs a plugin's filter type through the C
// ABI (portico_filter_type, abi.h): one instance made by the type's create() from a
// configuration, its hooks called with portico_http_view / portico_filter_host trampolines onto
// the FilterContext, outbound calls (http_call) turned into FilterContext::HttpCall with the
// plugin's completion run on the same worker. A plugin built against ABI 1.1 runs too: its
// missing hooks (request state, cancel, on_upstream_request, on_log) are simply not called.
//
// A hook answer that is not continue/respond/pending (PORTICO_FILTER_ERROR, an SDK that caught
// an exception) answers 500 for that request only.
//
// Threading: the instance is shared by every worker (the plugin's hooks must be thread-safe);
// per-request data lives in the request's FilterSlot. Ownership: owns the plugin instance
// (destroyed with the PluginFilter, once no snapshot holds it); the FilterTypeInfo is copied.
#ifndef PORTICO_CORE_RUNTIME_FILTER_PLUGIN_FILTER_H_
#define PORTICO_CORE_RUNTIME_FILTER_PLUGIN_FILTER_H_

#include <memory>
#include <string>
#include <string_view>

#include "core/plugin/kind_registry.h"
#include "core/runtime/filter/http_filter.h"
#include "portico/sdk/status.h"

namespace portico::core::filter {

class PluginFilter final : public HttpFilter {
 public:
  // Create instantiates `type` with `config` (JSON); the plugin's refusal is the error.
  static StatusOr<std::shared_ptr<const PluginFilter>> Create(const FilterTypeInfo& type,
                                                              std::string_view config);
  PluginFilter(const FilterTypeInfo& type, void* instance) : type_(type), instance_(instance) {}
  ~PluginFilter() override;
  PluginFilter(const PluginFilter&) = delete;
  PluginFilter& operator=(const PluginFilter&) = delete;

  FilterResult OnRequestHead(FilterContext& ctx, FilterSlot& slot) const override;
  FilterResult OnUpstreamRequest(FilterContext& ctx, FilterSlot& slot) const override;
  void OnResponseHead(FilterContext& ctx, FilterSlot& slot) const override;
  void OnLog(FilterContext& ctx, FilterSlot& slot) const override;
  void OnRequestEnd(FilterContext& ctx, FilterSlot& slot) const override;
  void CancelCall(FilterContext& ctx, FilterSlot& slot) const override;
  std::string_view name() const override { return type_.name; }

  const FilterTypeInfo& type() const { return type_; }

  struct RequestData;  // per request, in FilterSlot::state (plugin_filter.cc)

 private:
  RequestData& Data(FilterContext& ctx, FilterSlot& slot) const;
  using Hook = portico_filter_status (*)(void*, const portico_http_view*,
                                         const portico_filter_host*);
  FilterResult Call(Hook hook, Side side, FilterContext& ctx, FilterSlot& slot) const;

  const FilterTypeInfo type_;
  void* const instance_;
};

}  // namespace portico::core::filter

#endif  // PORTICO_CORE_RUNTIME_FILTER_PLUGIN_FILTER_H_
