#!/usr/bin/env bash
# proxy.sh: the proxy benchmark of issues 5, 12 and 13 ("Benchmark tests/bench/proxy"). A script that
# prints figures, not a test (not registered in CTest). Run it on an otherwise idle 2-core
# machine with a Release build:
#
#   tests/bench/proxy.sh [--build DIR] [--repeats N] [--duration S] [--quick] [--cpu-quota PCT]
#                        [--cpu-period-us US] [--no-callgrind] [--callgrind-only NAMES]
#                        [--no-logs-off] [--no-forwarder] [--no-filters] [--no-memory]
#                        [--memory-routes N] [--memory-requests N] [--count-duration S]
#                        [--callgrind-requests N] [--no-tls] [--only-tls] [--tls-idle N]
#                        [--floor-seconds S] [--keep]
#
#   --build DIR        build tree holding portico-controller, portico-gateway, plugins-out
#                      (default build/release)
#   --repeats N        interleaved repeats of every configuration (default 5; medians)
#   --duration S       seconds per timed wrk run (default 10)
#   --quick            2 repeats of 2 s, short counted runs, no callgrind, 10k memory routes
#   --cpu-quota PCT    the proxy-bound layout: each proxy held to PCT% of CPU 0 by a cgroup cpu
#                      quota (default 50; 0 = unconstrained). If no way to apply it works here
#                      the run says so loudly and falls back to the unconstrained layout
#   --cpu-period-us US the quota's period (default 10000: a throttled proxy waits < 5 ms)
#   --no-callgrind     skip the callgrind phase (valgrind runs are slow: ~10 min)
#   --callgrind-only NAMES  comma-separated configurations for the callgrind phase
#   --no-logs-off      skip the second set (1 route, access logs off)
#   --no-forwarder     skip the reference byte forwarder (proxy/forwarder.c)
#   --no-filters       skip the header-modifier and webhook configurations
#   --no-memory        skip the memory phase (100,000 prefix routes)
#   --no-tls           skip the TLS configurations and the TLS memory phase (issue 13)
#   --only-tls         only those (implies --no-memory, --no-forwarder, --no-filters,
#                      --no-logs-off; no direct run)
#   --tls-idle N       idle TLS connections of the TLS memory phase (default 4000; 1000 with
#                      --quick; 0 skips it)
#   --floor-seconds S  openssl speed -seconds of the crypto floor (default 3; 1 with --quick)
#
# Configurations: wrk straight to the upstream (the limit); nginx (1 worker, upstream
# keep-alive), haproxy (nbthread 1, http-reuse always) and portico-gateway (--workers 1, loaded
# through portico-controller), each with 1 route, 10,000 prefix routes and 10,000 regex routes
# of one rule each on one hostname (the request matches the last), 1 route with request and
# response header modifiers, and 1 route calling a webhook server (portico's Webhook, nginx's
# auth_request; no haproxy); and, as a reference, a byte forwarder that parses nothing
# (proxy/forwarder.c: the ceiling of any proxy here). The proxy runs alone on CPU 0, by default
# held to --cpu-quota of it (tests/bench/proxy/cpu_quota.py); wrk -t1 -c50, the upstream nginx
# (`return 200`), the webhook server nginx and the controllers on CPU 1. Printed per
# configuration: RPS, p50, p99, CPU us per request, the proxy's share of CPU 0, throttled
# periods, CPU 1 busy, syscalls per request (LD_PRELOAD counter, tests/bench/proxy/counter.c;
# cross-checked by perf when its tracepoint opens), heap allocations per request (same
# counter), callgrind instructions per request beside nginx's, RSS; then memory per route with
# 100,000 prefix routes; then the targets of issues 12 and 5 with PASS/MISS and the command
# line. Issue 13 adds TLS configurations (--no-tls skips them): nginx and portico, 1 route over
# HTTPS with an ECDSA P-256 certificate made at run time, measured with full TLS 1.3 handshakes
# (one request per connection), resumed ones (tickets) and keep-alive HTTPS requests, printed as
# ratios and as a fraction of the crypto floor (`openssl speed ecdsap256 ecdhp256` on CPU 0),
# and memory per idle TLS connection. The logic lives in tests/bench/proxy/bench.py; the TLS
# client in tests/bench/proxy/tls_load.c.
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in wrk nginx haproxy taskset cc python3 openssl; do
  command -v "$tool" >/dev/null || { echo "proxy.sh: $tool is not installed (scripts/setup.sh)" >&2; exit 2; }
done
callgrind=1
for a in "$@"; do
  case "$a" in
    -h|--help) sed -n '2,54p' "$0"; exit 0 ;;
    --quick|--no-callgrind) callgrind=0 ;;
  esac
done
if [ "$callgrind" = 1 ] && ! command -v valgrind >/dev/null; then
  echo "proxy.sh: valgrind is not installed (scripts/setup.sh), or pass --no-callgrind" >&2
  exit 2
fi
exec python3 tests/bench/proxy/bench.py --command "tests/bench/proxy.sh $*" "$@"
