// portico_proxy_bench: the data plane alone, for quick throughput runs without a controller (not
// a test). It serves one Gateway on --listen ADDR:PORT whose single PathPrefix "/" route sends
// everything to --upstream IP:PORT, built by hand in the contribution formats and committed like
// GatewayRuntime would; SIGINT/SIGTERM stop it.
//
//   portico_proxy_bench --listen 127.0.0.1:8080 --upstream 127.0.0.1:8081 [--workers 1]
//                       [--access-log off|stderr|PATH] [--routes N]
//
// --routes N adds N-1 non-matching prefix routes before the catch-all (route-table scale).
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "core/runtime/runtime_types.h"
#include "gateway/server/data_plane.h"

namespace {

using portico::core::FormatEntries;
using portico::core::RuntimeEntry;

std::shared_ptr<const std::string> Json(std::string text) {
  return std::make_shared<const std::string>(std::move(text));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"portico_proxy_bench: the data plane alone, routing everything to one upstream"};
  std::string listen = "127.0.0.1:8080";
  std::string upstream = "127.0.0.1:8081";
  int workers = 1;
  int routes = 1;
  std::string access_log = "off";
  app.add_option("--listen", listen, "ADDR:PORT to serve");
  app.add_option("--upstream", upstream, "IP:PORT of the upstream");
  app.add_option("--workers", workers, "Worker threads");
  app.add_option("--routes", routes, "Routes (the catch-all last)");
  app.add_option("--access-log", access_log, "off, stderr, stdout or a file");
  CLI11_PARSE(app, argc, argv);

  const size_t lc = listen.rfind(':');
  const size_t uc = upstream.rfind(':');
  if (lc == std::string::npos || uc == std::string::npos) {
    std::fprintf(stderr, "error: --listen and --upstream take ADDR:PORT\n");
    return 2;
  }
  const std::string address = listen.substr(0, lc);
  const std::string port = listen.substr(lc + 1);
  const std::string up_ip = upstream.substr(0, uc);
  const std::string up_port = upstream.substr(uc + 1);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto sink = portico::gateway::server::AccessLogSink::Open(access_log);
  if (!sink.ok()) {
    std::fprintf(stderr, "error: %s\n", sink.status().message().c_str());
    return 2;
  }
  portico::gateway::server::DataPlaneOptions options;
  options.workers = workers;
  options.default_address = address;
  options.access_log = *sink;
  portico::gateway::server::DataPlane plane(options);
  if (auto started = plane.Start(); !started.ok()) {
    std::fprintf(stderr, "error: %s\n", started.message().c_str());
    return 1;
  }

  FormatEntries listeners, rules, backends;
  listeners["gateway/bench/gw/" + port] = RuntimeEntry{
      "gateway.networking.k8s.io/Gateway/bench/gw",
      Json(R"({"entry":"listeners","gateway":{"namespace":"bench","name":"gw"},"address":"",)"
           R"("port":)" +
           port + R"(,"listeners":[{"name":"http","protocol":"HTTP"}]})")};
  for (int i = 0; i < routes; ++i) {
    const bool last = i == routes - 1;
    const std::string prefix = last ? "/" : "/route-" + std::to_string(i);
    char precedence[64];
    std::snprintf(precedence, sizeof(precedence), "p:2:%04d/m:1/h:99/q:99/t:0/n:bench/r%d /r:0",
                  9999 - static_cast<int>(prefix.size()), i);
    rules["httproute/bench/r" + std::to_string(i)] = RuntimeEntry{
        "gateway.networking.k8s.io/HTTPRoute/bench/r" + std::to_string(i),
        Json(R"({"route":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute",)"
             R"("namespace":"bench","name":"r)" +
             std::to_string(i) +
             R"("},"parents":[{"gateway":{"namespace":"bench","name":"gw"},"listener":"http",)"
             R"("hostnames":[]}],"rules":[{"id":"0.0","precedence":")" +
             precedence + R"(","match":{"path":{"type":"Prefix","value":")" + prefix +
             R"("},"headers":[],"query":[]},"action":{"backends":[{"key":"bench/up:80",)"
             R"("weight":1,"filters":[]}],"redirect":null,"filters":[],)"
             R"("timeouts":{"requestMs":0,"backendRequestMs":0}}}]})")};
  }
  backends["ports/bench/up"] = RuntimeEntry{
      "/Service/bench/up",
      Json(R"({"entry":"ports","namespace":"bench","service":"up","serviceType":"ClusterIP",)"
           R"("headless":false,"ports":[{"name":"http","port":80,"protocol":"TCP",)"
           R"("targetPort":)" +
           up_port + "}]}")};
  backends["endpoints/bench/up-1"] =
      RuntimeEntry{"discovery.k8s.io/EndpointSlice/bench/up-1",
                   Json(R"({"entry":"endpoints","namespace":"bench","service":"up","slice":"up-1",)"
                        R"("addressType":"IPv4","ports":[{"name":"http","port":)" +
                        up_port + R"(,"protocol":"TCP"}],"endpoints":[{"addresses":[")" + up_ip +
                        R"("],"ready":true,"serving":true,"terminating":false}]})")};
  auto snapshot = std::make_shared<portico::core::RuntimeSnapshot>();
  snapshot->generation = 1;
  snapshot->formats["listener_set.v1"] = std::make_shared<const FormatEntries>(listeners);
  snapshot->formats["route_rules.v1"] = std::make_shared<const FormatEntries>(rules);
  snapshot->formats["backend.v1"] = std::make_shared<const FormatEntries>(backends);
  auto nacks = plane.Prepare(*snapshot);
  for (const auto& nack : nacks) {
    std::fprintf(stderr, "error: %s: %s\n", nack.key.ToString().c_str(), nack.reason.c_str());
  }
  if (!nacks.empty()) return 1;
  plane.Commit(snapshot);
  std::fprintf(stderr, "serving %s -> %s with %d worker(s), %d route(s)\n", listen.c_str(),
               upstream.c_str(), plane.workers(), routes);
  int signal = 0;
  sigwait(&signals, &signal);
  auto stats = plane.Stats();
  std::fprintf(stderr, "requests %llu, upstream connects %llu, reuses %llu\n",
               static_cast<unsigned long long>(stats.requests),
               static_cast<unsigned long long>(stats.upstream_connects),
               static_cast<unsigned long long>(stats.upstream_reuses));
  plane.Stop();
  return 0;
}
