#!/usr/bin/env bash
# manifest_check: portico_add_plugin() judges manifest.json at configure time with the hosts' own
# parser (sdk/cmake/portico_manifest_check.cc over manifest.h). A tiny project in a temp dir is
# configured with a good manifest (it must configure), then with broken ones: each must fail
# configuration with a message naming the file, the field and the fix.
# Usage: tests/sdk_install/manifest_check_test.sh <portico source dir>
set -euo pipefail
src=$(cd "${1:?usage: manifest_check_test.sh <source dir>}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "manifest_check: FAIL: $*" >&2; exit 1; }

mkdir -p "$work/p"
cat >"$work/p/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(manifest_check_probe LANGUAGES CXX)
set(PORTICO_SDK_INCLUDE_DIR "$src/sdk/include")
add_library(probe_sdk INTERFACE)
set(PORTICO_SDK_TARGET probe_sdk)
include("$src/sdk/cmake/PorticoPlugin.cmake")
portico_add_plugin(probe SOURCES probe.cc NO_INSTALL)
CMAKE
touch "$work/p/probe.cc"

# configure <manifest text>: configures the probe (same build tree: the checker is built once);
# sets $out to cmake's output and returns cmake's status.
configure() {
  printf '%s\n' "$1" >"$work/p/manifest.json"
  local rc=0
  out=$(cmake -S "$work/p" -B "$work/b" 2>&1) || rc=$?
  out=$(tr -s ' \n' ' ' <<<"$out")  # CMake wraps a long message over indented lines
  return $rc
}
kind='"group": "example.portico.io", "kind": "Probe", "versions": ["v1"], "plural": "probes"'

configure "{\"name\": \"probe\", \"version\": \"1.0.0\", \"kinds\": [{$kind}]}" \
  || { echo "$out"; fail "a good manifest did not configure"; }

# expect_refused <what> <manifest text> <needle>...: configure fails and the message has each needle.
expect_refused() {
  local what=$1 text=$2; shift 2
  if configure "$text"; then echo "$out"; fail "$what: configured"; fi
  grep -qF "$work/p/manifest.json: " <<<"$out" || { echo "$out"; fail "$what: the file is not named"; }
  grep -qF "fix: " <<<"$out" || { echo "$out"; fail "$what: no fix named"; }
  local needle
  for needle in "$@"; do
    grep -qF -- "$needle" <<<"$out" || { echo "$out"; fail "$what: no \"$needle\" in the message"; }
  done
  echo "manifest_check: $what refused: $(sed -E 's/.*(portico_add_plugin: .*) Call Stack.*/\1/' <<<"$out")"
}

expect_refused "missing plural" \
  '{"name": "probe", "version": "1.0.0", "kinds": [{"kind": "Probe", "versions": ["v1"]}]}' \
  "kinds[0].plural: missing"
expect_refused "unknown capability" \
  "{\"name\": \"probe\", \"version\": \"1.0.0\", \"kinds\": [{$kind, \"capabilities\": [\"filter\"]}]}" \
  'kinds[0].capabilities[0]: unknown capability "filter"' "expected processor, sync, handler"
expect_refused "misspelt field" \
  "{\"name\": \"probe\", \"version\": \"1.0.0\", \"kinds\": [{$kind, \"capabilites\": [\"processor\"]}]}" \
  "kinds[0].capabilites: unknown field"
expect_refused "bad sync policy" \
  "{\"name\": \"probe\", \"version\": \"1.0.0\", \"kinds\": [{$kind, \"sync\": \"sometimes\"}]}" \
  'kinds[0].sync: "sometimes" (expected never, always, toReferrers or attached)'
expect_refused "JSON syntax" \
  $'{"name": "probe",\n "version": "1.0.0",\n "kinds": [}' "not valid JSON at line 3"
expect_refused "missing version" \
  "{\"name\": \"probe\", \"kinds\": []}" "version: missing"

# And good again: the cache of a refused configure does not stick.
configure "{\"name\": \"probe\", \"version\": \"1.0.1\", \"kinds\": [{$kind}]}" \
  || { echo "$out"; fail "a good manifest after a broken one did not configure"; }
echo "manifest_check: ok"
