// data_plane.cc: see data_plane.h.
#include "gateway/server/data_plane.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "core/store/store_key.h"
#include "gateway/server/worker.h"

namespace portico::gateway::server {

namespace {

int DefaultWorkers() {
  unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

}  // namespace

DataPlane::DataPlane(DataPlaneOptions options)
    : options_(std::move(options)),
      dns_(std::make_unique<upstream::DnsCache>(options_.resolver)),
      worker_count_(options_.workers > 0 ? options_.workers : DefaultWorkers()) {
  auto empty = std::make_shared<DataPlaneSnapshot>();
  core::RuntimeSnapshot nothing;
  empty->routes = core::routing::RouteTable::Build(nothing, nullptr);
  empty->backends = core::routing::BackendTable::Build(nothing, nullptr);
  empty->bindings = std::make_shared<core::filter::FilterBindings>();
  empty->tls = core::tls::TlsTable::Build(nothing, empty->routes, nullptr, nullptr);
  std::vector<core::routing::Refusal> none;
  empty->upstream_tls =
      core::tls::UpstreamTlsTable::Build(nothing, *empty->backends, nullptr, &none);
  current_ = std::move(empty);
}

DataPlane::~DataPlane() { Stop(); }

Status DataPlane::Start() {
  if (!workers_.empty()) return OkStatus();
  for (int i = 0; i < worker_count_; ++i) {
    auto worker = std::make_unique<Worker>(this, i);
    Status started = worker->Start();
    if (!started.ok()) {
      Stop();
      return started;
    }
    workers_.push_back(std::move(worker));
  }
  return OkStatus();
}

void DataPlane::BeginDrain() {
  if (draining_.exchange(true)) return;
  const bool migrates = options_.kernel_migrates.has_value()
                            ? *options_.kernel_migrates
                            : net::ListenerSocket::KernelMigratesRequests();
  migrates_on_close_.store(migrates, std::memory_order_relaxed);
  if (!migrates) {
    spdlog::info(
        "data plane: net.ipv4.tcp_migrate_req is off: new connections reaching this process "
        "during the next {} ms retry their SYN 1 s later, at the next process (turn it on to "
        "hand them over at once)",
        net::ListenerSocket::kHandshakeGraceMs);
  }
  for (auto& worker : workers_) worker->Drain();  // release: the workers see migrates_on_close_
}

bool DataPlane::WaitDrained(std::chrono::milliseconds timeout) {
  auto all_drained = [this] {
    for (const auto& worker : workers_) {
      if (!worker->Drained()) return false;
    }
    return true;
  };
  std::unique_lock lock(drain_mu_);
  return drain_cv_.wait_for(lock, timeout, all_drained);
}

bool DataPlane::Drain(std::chrono::milliseconds timeout) {
  BeginDrain();
  return WaitDrained(timeout);
}

void DataPlane::OnWorkerDrained() {
  { std::lock_guard lock(drain_mu_); }  // a Drain between its check and its wait sees this
  drain_cv_.notify_all();
}

void DataPlane::Stop() {
  for (auto& worker : workers_) worker->Stop();
  workers_.clear();
}

bool DataPlane::KeepsCompiled(const std::string& format) const {
  return format == PORTICO_FORMAT_ROUTE_RULES;
}

std::vector<core::SyncNack> DataPlane::Prepare(const core::RuntimeSnapshot& next) {
  std::shared_ptr<const DataPlaneSnapshot> current = Current();
  auto prepared = std::make_unique<Prepared>();
  prepared->routes = core::routing::RouteTable::Build(next, current->routes.get());
  prepared->backends = core::routing::BackendTable::Build(next, current->backends.get());
  if (prepared->backends != current->backends) {
    std::vector<std::string> names;
    for (const core::routing::Backend* backend : prepared->backends->All()) {
      for (const core::routing::Endpoint& endpoint : backend->endpoints) {
        if (endpoint.sockaddr_len == 0 && !endpoint.address.empty()) {
          names.push_back(endpoint.address);
        }
      }
    }
    dns_->Retain(names);
    if (!names.empty()) dns_->Prefetch(names, kDnsPrefetchWait);
  }

  std::map<std::string, std::string> refused;  // owner -> reason
  for (const core::routing::Refusal& refusal : prepared->routes->Refusals()) {
    refused.emplace(refusal.owner, refusal.reason);
  }
  {
    std::vector<core::routing::Refusal> refusals;
    prepared->tls =
        core::tls::TlsTable::Build(next, prepared->routes, current->tls.get(), &refusals);
    prepared->upstream_tls = core::tls::UpstreamTlsTable::Build(
        next, *prepared->backends, current->upstream_tls.get(), &refusals);
    for (core::routing::Refusal& refusal : refusals) {
      refused.emplace(std::move(refusal.owner), std::move(refusal.reason));
    }
  }
  {
    static const core::KindRegistry kNoPlugins;
    std::vector<core::filter::BindingRefusal> refusals;
    prepared->bindings = core::filter::FilterBindings::Build(
        next, options_.registry != nullptr ? *options_.registry : kNoPlugins,
        current->bindings.get(), &refusals);
    for (core::filter::BindingRefusal& refusal : refusals) {
      refused.emplace(std::move(refusal.owner), std::move(refusal.reason));
    }
  }
  // Which socket key took each resolved (bind address, port): two keys binding the same one
  // ("" resolving to the default address and that address written out) would split traffic.
  std::map<std::pair<std::string, uint16_t>, std::string> bound;
  for (const core::routing::ListenerSocketSpec& spec : prepared->routes->Sockets()) {
    const std::string bind_address = spec.address.empty() ? options_.default_address : spec.address;
    const std::string where = bind_address + ":" + std::to_string(spec.port);
    if (spec.protocol != "HTTP" && spec.protocol != "HTTPS") {
      for (const std::string& owner : spec.owners) {
        refused.emplace(owner,
                        "listener protocol " + spec.protocol + " on " + where +
                            " is not implemented by this gateway (it serves HTTP and HTTPS)");
      }
      continue;
    }
    if (spec.protocol == "HTTPS" && prepared->tls->Find(spec.address, spec.port) == nullptr) {
      for (const std::string& owner : spec.owners) {
        refused.emplace(owner, "no certificate of the HTTPS listeners on " + where +
                                   " can be served: none of their certificates reached this "
                                   "gateway usable");
      }
      continue;
    }
    const std::string key = net::ListenerSocket::MakeKey(spec.address, spec.port, spec.protocol);
    auto [it, fresh] = bound.emplace(std::make_pair(bind_address, spec.port), key);
    if (!fresh) {
      for (const std::string& owner : spec.owners) {
        refused.emplace(owner, "listener " + bind_address + ":" + std::to_string(spec.port) +
                                   " is already taken by another listener set");
      }
      continue;
    }
    std::shared_ptr<net::ListenerSocket> socket;
    if (auto found = current->listeners.find(key); found != current->listeners.end()) {
      socket = found->second;  // unchanged key: its connections are untouched
    } else if (prepared_ != nullptr) {
      if (auto again = prepared_->listeners.find(key); again != prepared_->listeners.end()) {
        socket = again->second;  // bound by the previous Prepare of this Apply
      }
    }
    if (socket == nullptr && draining_.load(std::memory_order_relaxed)) {
      // Draining: no worker would accept on a new socket, and connections the kernel queued on
      // it would be reset at exit. Not nacked: this process is on its way out.
      continue;
    }
    if (socket == nullptr) {
      auto opened = net::ListenerSocket::Open(spec.address, spec.port, spec.protocol, bind_address,
                                              worker_count_);
      if (!opened.ok()) {
        for (const std::string& owner : spec.owners) {
          refused.emplace(owner, opened.status().message());
        }
        continue;
      }
      socket = std::move(*opened);
    }
    prepared->listeners.emplace(key, std::move(socket));
  }
  prepared_ = std::move(prepared);  // sockets only the superseded Prepare bound close here

  std::vector<core::SyncNack> nacks;
  for (const auto& [owner, reason] : refused) {
    auto key = core::StoreKey::Parse(owner);
    if (!key.ok()) {
      spdlog::error("data plane: cannot nack malformed owner \"{}\": {}", owner, reason);
      continue;
    }
    nacks.push_back(core::SyncNack{std::move(*key), "", reason});
  }
  return nacks;
}

void DataPlane::Abort() { prepared_.reset(); }

void DataPlane::Commit(std::shared_ptr<const core::RuntimeSnapshot> snapshot) {
  if (prepared_ == nullptr) {
    spdlog::error("data plane: Commit without Prepare (generation {})", snapshot->generation);
    return;
  }
  auto next = std::make_shared<DataPlaneSnapshot>();
  next->generation = snapshot->generation;
  next->routes = std::move(prepared_->routes);
  next->backends = std::move(prepared_->backends);
  next->bindings = std::move(prepared_->bindings);
  next->tls = std::move(prepared_->tls);
  next->upstream_tls = std::move(prepared_->upstream_tls);
  next->listeners = std::move(prepared_->listeners);
  prepared_.reset();
  std::shared_ptr<const DataPlaneSnapshot> previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    previous = std::move(current_);
    current_ = std::move(next);
    generation_.store(current_->generation, std::memory_order_release);
  }
  // Workers blocked in epoll_wait pick the new snapshot up now, not at their next event.
  for (auto& worker : workers_) worker->Wake();
  // `previous` drops here; removed sockets close once every worker has let go of them.
}

std::shared_ptr<const DataPlaneSnapshot> DataPlane::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

uint64_t DataPlane::MinWorkerGeneration() const {
  uint64_t min = UINT64_MAX;
  for (const auto& worker : workers_) {
    min = std::min(min, worker->counters().generation.load(std::memory_order_relaxed));
  }
  return workers_.empty() ? Generation() : min;
}

std::vector<BoundListener> DataPlane::Listeners() const {
  std::vector<BoundListener> out;
  for (const auto& [key, socket] : Current()->listeners) {
    out.push_back(BoundListener{socket->address(), socket->port(), socket->protocol(),
                                socket->bind_address(), socket->bound_port()});
  }
  return out;
}

DataPlaneStats DataPlane::Stats() const {
  DataPlaneStats stats;
  stats.generation = Generation();
  stats.workers = workers_.size();
  for (const auto& worker : workers_) {
    WorkerCounters& c = worker->counters();
    auto get = [](const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); };
    stats.connections_accepted += get(c.connections_accepted);
    stats.connections_open += get(c.connections_open);
    stats.requests += get(c.requests);
    stats.retries += get(c.retries);
    for (size_t i = 1; i < stats.responses.size(); ++i) stats.responses[i] += get(c.responses[i]);
    stats.upstream_connects += get(c.upstream_connects);
    stats.upstream_reuses += get(c.upstream_reuses);
    stats.upstream_open += get(c.upstream_open);
    stats.mirror_requests += get(c.mirror_requests);
    stats.mirror_failures += get(c.mirror_failures);
    stats.mirror_connects += get(c.mirror_connects);
    stats.mirror_in_flight += get(c.mirror_in_flight);
    stats.filter_calls += get(c.filter_calls);
    stats.filter_call_failures += get(c.filter_call_failures);
    stats.filter_calls_cancelled += get(c.filter_calls_cancelled);
    stats.filter_calls_in_flight += get(c.filter_calls_in_flight);
    stats.tls_failures += get(c.tls_failures);
    stats.connections_shed += get(c.connections_shed);
    stats.connections_refused += get(c.connections_refused);
    stats.accept_failures += get(c.accept_failures);
    c.rejected.AddTo(&stats.rejected);
  }
  return stats;
}

}  // namespace portico::gateway::server
