#!/usr/bin/env bash
# proxy.sh: the proxy benchmark of issue 5 ("Benchmark tests/bench/proxy"). A script that prints
# figures, not a test (not registered in CTest). Run it on an otherwise idle 2-core machine with a
# Release build:
#
#   tests/bench/proxy.sh [--build DIR] [--repeats N] [--duration S] [--quick] [--no-callgrind]
#                        [--no-logs-off] [--no-forwarder] [--count-duration S]
#                        [--callgrind-requests N] [--keep]
#
#   --build DIR      build tree holding portico-controller, portico-gateway, plugins-out
#                    (default build/release)
#   --repeats N      interleaved repeats of every configuration (default 5; medians)
#   --duration S     seconds per timed wrk run (default 10)
#   --quick          2 repeats of 2 s, short counted runs, no callgrind (a dry run)
#   --no-callgrind   skip the callgrind phase (valgrind runs are slow: ~10 min)
#   --no-logs-off    skip the second set (1 route, access logs off)
#   --no-forwarder   skip the reference byte forwarder (proxy/forwarder.c)
#
# Configurations: wrk straight to the upstream (the limit); nginx (1 worker, upstream
# keep-alive), haproxy (nbthread 1, http-reuse always) and portico-gateway (--workers 1, loaded
# through portico-controller), each with 1 route, 10,000 prefix routes and 10,000 regex routes
# of one rule each on one hostname (the request matches the last); and, as a reference, a byte
# forwarder that parses nothing (proxy/forwarder.c: the ceiling of any proxy here). The proxy runs alone on CPU 0;
# wrk -t1 -c50, the upstream nginx (`return 200`) and the controllers on CPU 1. Printed per
# configuration: RPS, p50, p99, CPU us per request, syscalls per request (LD_PRELOAD counter,
# tests/bench/proxy/counter.c; cross-checked by perf when its tracepoint opens), heap allocations
# per request (same counter), callgrind instructions per request beside nginx's, RSS; then the
# issue's targets with PASS/MISS. The logic lives in tests/bench/proxy/bench.py.
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in wrk nginx haproxy taskset cc python3; do
  command -v "$tool" >/dev/null || { echo "proxy.sh: $tool is not installed (scripts/setup.sh)" >&2; exit 2; }
done
callgrind=1
for a in "$@"; do
  case "$a" in
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    --quick|--no-callgrind) callgrind=0 ;;
  esac
done
if [ "$callgrind" = 1 ] && ! command -v valgrind >/dev/null; then
  echo "proxy.sh: valgrind is not installed (scripts/setup.sh), or pass --no-callgrind" >&2
  exit 2
fi
exec python3 tests/bench/proxy/bench.py --command "tests/bench/proxy.sh $*" "$@"
