#!/usr/bin/env bash
# sdk_install: the SDK installs under a prefix, an out-of-tree kind (sdk/examples/greeting)
# builds with only -DCMAKE_PREFIX_PATH=<prefix>, and the real binaries accept it:
# `portico-ctl plugin verify` passes it (as the CTest test portico_add_plugin_verify_test() adds),
# portico-ctl reads its manifest without loading it, and portico-controller --check loads it
# beside the in-tree plugins. Then the RateLimitPolicy example (sdk/examples/ratelimit), a kind
# that acts on traffic, is built out of tree the same way, its unit tests run on the installed fake
# host, `plugin verify` passes it, and tests/integration/ratelimit_test.py loads that build into
# the real controller and gateway.
# Usage: tests/sdk_install/run.sh <portico build dir>
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: run.sh <build dir>}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "sdk_install: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --component sdk --prefix "$work/prefix" >/dev/null
[ -f "$work/prefix/include/portico/sdk/abi.h" ] || fail "abi.h not installed"
[ -f "$work/prefix/lib/cmake/PorticoSDK/PorticoSDKConfigVersion.cmake" ] || fail "no version file"
# pkg-config: the fake host compiles with only what portico-sdk-testing.pc says.
pc=$(find "$work/prefix" -name portico-sdk-testing.pc -printf '%h' -quit)
[ -n "$pc" ] || fail "no portico-sdk-testing.pc installed"
cflags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags portico-sdk-testing) || fail "pkg-config portico-sdk-testing"
echo '#include "portico/sdk/testing/fake_host.h"' |
  c++ -std=c++20 $cflags -fsyntax-only -x c++ - || fail "fake_host.h does not compile with pkg-config's flags ($cflags)"

# build_example NAME TESTS: configures and builds sdk/examples/NAME out of tree against the
# prefix alone (into $work/NAME), then runs its CTest tests, which must be TESTS passed, none
# skipped (portico_add_plugin_verify_test() from the installed SDK: `plugin verify` passes it).
build_example() {
  local name=$1 count=$2 dir="$work/$1" out
  cmake -S "$src/sdk/examples/$name" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DPORTICO_CTL_EXECUTABLE="$build/controller/ctl/portico-ctl" >"$work/$name-configure.log" 2>&1 \
    || { cat "$work/$name-configure.log"; fail "$name: configure"; }
  cmake --build "$dir" >"$work/$name-build.log" 2>&1 || { cat "$work/$name-build.log"; fail "$name: build"; }
  [ -f "$dir/plugins/libportico-$name.so" ] || fail "no $dir/plugins/libportico-$name.so"
  out=$(ctest --test-dir "$dir" --output-on-failure 2>&1) || { echo "$out"; fail "$name: tests"; }
  grep -q "100% tests passed, 0 tests failed out of $count\$" <<<"$out" || { echo "$out"; fail "$name: not $count tests passed"; }
  if grep -q 'did not run' <<<"$out"; then echo "$out"; fail "$name: a test was skipped"; fi
}

build_example greeting 1
so="$work/greeting/plugins/libportico-greeting.so"

json=$("$build/controller/ctl/portico-ctl" list-plugins --dir "$work/greeting/plugins" -o json) \
  || fail "portico-ctl list-plugins rejected the example: $json"
grep -q '"Greeting"' <<<"$json" || fail "list-plugins does not show kind Greeting: $json"

mkdir -p "$work/plugins"
cp "$build"/plugins-out/*.so "$so" "$work/plugins/"
out=$("$build/controller/portico-controller" --plugin-dir "$work/plugins" --check 2>&1) \
  || { echo "$out"; fail "portico-controller --check refused the plugin set"; }
grep -q 'Greeting.example.portico.io' <<<"$out" || { echo "$out"; fail "Greeting not loaded"; }

# The RateLimitPolicy example: out of tree against the prefix alone, its own tests (fake-host
# unit tests and plugin verify), then the integration test with this build of the plugin.
build_example ratelimit 2
rl_so="$work/ratelimit/plugins/libportico-ratelimit.so"
python3 "$src/tests/integration/ratelimit_test.py" --build "$build" --plugin "$rl_so" \
  >"$work/rl-integration.log" 2>&1 || { tail -n 60 "$work/rl-integration.log"; fail "ratelimit integration"; }
grep -q '^OK$' "$work/rl-integration.log" || { tail -n 60 "$work/rl-integration.log"; fail "ratelimit integration did not report OK"; }
echo "sdk_install: ok (greeting built out of tree, verified, listed and loaded; ratelimit built out" \
  "of tree, its unit tests, verify and integration test passed)"
