#!/usr/bin/env bash
# sdk_install: the SDK installs under a prefix, an out-of-tree kind (sdk/examples/greeting)
# builds with only -DCMAKE_PREFIX_PATH=<prefix>, and the real binaries accept it:
# `portico-ctl plugin verify` passes it (as the CTest test portico_add_plugin_verify_test() adds),
# portico-ctl reads its manifest without loading it, and portico-controller --check loads it
# beside the in-tree plugins.
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

cmake -S "$src/sdk/examples/greeting" -B "$work/example" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DPORTICO_CTL_EXECUTABLE="$build/controller/ctl/portico-ctl" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
cmake --build "$work/example" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }
so="$work/example/plugins/libportico-greeting.so"
[ -f "$so" ] || fail "no $so"

# portico_add_plugin_verify_test() from the installed SDK: `plugin verify` passes the example.
verify=$(ctest --test-dir "$work/example" --output-on-failure 2>&1) || { echo "$verify"; fail "plugin verify"; }
grep -q '100% tests passed, 0 tests failed out of 1' <<<"$verify" || { echo "$verify"; fail "no verify test ran"; }
grep -q 'did not run' <<<"$verify" && { echo "$verify"; fail "the verify test was skipped"; }

json=$("$build/controller/ctl/portico-ctl" list-plugins --dir "$work/example/plugins" -o json) \
  || fail "portico-ctl list-plugins rejected the example: $json"
grep -q '"Greeting"' <<<"$json" || fail "list-plugins does not show kind Greeting: $json"

mkdir -p "$work/plugins"
cp "$build"/plugins-out/*.so "$so" "$work/plugins/"
out=$("$build/controller/portico-controller" --plugin-dir "$work/plugins" --check 2>&1) \
  || { echo "$out"; fail "portico-controller --check refused the plugin set"; }
grep -q 'Greeting.example.portico.io' <<<"$out" || { echo "$out"; fail "Greeting not loaded"; }
echo "sdk_install: ok (greeting built out of tree, verified, listed and loaded)"
