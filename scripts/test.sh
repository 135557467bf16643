#!/usr/bin/env bash
# test.sh: builds Portico and runs every test, on a fresh Debian 12 machine or a warm one.
#   1. installs the Debian packages (scripts/setup.sh, idempotent);
#   2. dev preset (warnings as errors): build all, run all tests (ctest);
#   3. asan preset (ASan + UBSan): build, run the unit tests (label "unit");
#   4. fuzz preset (clang 14, libFuzzer): every target of tests/fuzz for 60 s (scripts/fuzz.sh;
#      PORTICO_FUZZ_SECONDS changes it, PORTICO_SKIP_FUZZ=1 skips the step locally);
#   5. the SDK install test (tests/sdk_install/run.sh). The walkthrough of docs/plugins.md (CTest
#      plugin_walkthrough) and the manifest check (CTest manifest_check) run with the dev tests.
# Prints a final "N passed, M failed, K skipped" line (skipped tests are never counted as passed);
# exits non-zero on any failure.
# PORTICO_SKIP_ASAN=1 skips step 3 (local iteration only; CI runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/portico-ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# Paths relative to the checkout and no cwd in the hash (-g would add it): a clone elsewhere
# (CI's clean clone) hits the same cache entries.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}

bash scripts/setup.sh
start=$(date +%s)

summary=()
digest=()  # the tail of each failed test's output, printed again at the very end
passed=0
failed=0
skipped=0
# failed_output <build dir>: for each test in the last run's failed list, its name and the last 40
# lines of its output (CI keeps only the end of the log, so failures must be repeated there).
failed_output() {
  local tmp=$1/Testing/Temporary name
  [ -f "$tmp/LastTestsFailed.log" ] || return 0
  while IFS=: read -r _ name; do
    echo "---- FAILED: $name (last 40 lines of its output)"
    awk -v n="$name" '$0 ~ "^[0-9]+/[0-9]+ Test: " n "$" {on=1; next}
      on && /^<end of output>$/ {exit} on' "$tmp/LastTest.log" | tail -n 40
  done <"$tmp/LastTestsFailed.log"
}
run_ctest() {  # run_ctest <label> <build dir> <ctest args...>
  local label=$1 dir=$2; shift 2
  rm -f "$dir/Testing/Temporary/LastTestsFailed.log"
  local log; log=$(mktemp)
  local rc=0
  ctest "$@" 2>&1 | tee "$log" || rc=$?
  local line; line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n1 || true)
  if [ -n "$line" ]; then
    local total f
    f=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
    total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
    # ctest counts a skipped test (SKIP_RETURN_CODE, GTEST_SKIP) among the passed: count it apart.
    local s
    # Only the "did not run" list: a test that was not built is listed "(Not Run)" among the
    # failed ones too, and is counted there, not here.
    s=$(awk '/^The following tests did not run:/ {on = 1; next} on && !/^[[:space:]]+[0-9]+ - / {on = 0}
             on && /\((Skipped|Disabled)\)$/ {n++} END {print n + 0}' "$log")
    passed=$((passed + total - f - s)); failed=$((failed + f)); skipped=$((skipped + s))
    summary+=("$label: $((total - f - s)) passed, $f failed, $s skipped")
    [ "$f" -eq 0 ] || digest+=("$(failed_output "$dir")")
  else
    failed=$((failed + 1)); summary+=("$label: ctest did not report (rc=$rc)")
  fi
  rm -f "$log"
  return 0
}

phase_start=$(date +%s)
phase() {  # phase <name>: prints the time the previous phase took, then the new phase's name
  local now; now=$(date +%s)
  [ -z "${phase_name:-}" ] || summary+=("time: $phase_name $((now - phase_start)) s")
  phase_name=$1; phase_start=$now
  [ -z "$1" ] || echo "== $1"
}

phase "dev build"
cmake --preset dev >/dev/null
cmake --build --preset dev -j"$JOBS"
phase "dev tests"
run_ctest dev build/dev --preset dev -j"$JOBS"

if [ "${PORTICO_SKIP_ASAN:-0}" != 1 ]; then
  phase "asan build"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j"$JOBS"
  phase "asan unit tests"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest asan build/asan --preset asan -j"$JOBS"
fi

if [ "${PORTICO_SKIP_FUZZ:-0}" != 1 ]; then
  phase "fuzz"
  fuzz_log=$(mktemp)
  bash scripts/fuzz.sh "${PORTICO_FUZZ_SECONDS:-60}" 2>&1 | tee "$fuzz_log" || true
  fuzz_ok=$(grep -c '^fuzz [a-z_]*: ok' "$fuzz_log" || true)
  fuzz_bad=$(grep -c '^fuzz [a-z_]*: FAILED' "$fuzz_log" || true)
  if [ "$fuzz_ok" -eq 0 ] && [ "$fuzz_bad" -eq 0 ]; then fuzz_bad=1; fi  # it did not build or run
  passed=$((passed + fuzz_ok)); failed=$((failed + fuzz_bad))
  summary+=("fuzz (${PORTICO_FUZZ_SECONDS:-60} s per target): $fuzz_ok passed, $fuzz_bad failed")
  [ "$fuzz_bad" -eq 0 ] || digest+=("$(grep -A20 '^fuzz [a-z_]*: FAILED\|^fuzz: ' "$fuzz_log")")
  rm -f "$fuzz_log"
fi

phase "sdk install"
if bash tests/sdk_install/run.sh build/dev; then
  passed=$((passed + 1)); summary+=("sdk_install: 1 passed, 0 failed")
else
  failed=$((failed + 1)); summary+=("sdk_install: 0 passed, 1 failed")
fi

phase ""
echo
for d in "${digest[@]}"; do echo "$d"; done
for s in "${summary[@]}"; do echo "  $s"; done
echo "  time: total $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
