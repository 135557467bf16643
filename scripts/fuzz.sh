#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET...]: builds the libFuzzer targets of tests/fuzz (preset fuzz: clang
# 14 with ASan and UBSan) and runs each for SECONDS (default 60) on a scratch copy of its seed
# corpus, two at a time. Prints one line per target with its executions; a target that crashes,
# leaks, times out or breaks a FUZZ_CHECK fails the run, and its reproducer is copied to
# tests/fuzz/regressions/<target>/ (commit it: the replay tests of ordinary builds then run it).
# Exit status: 0 when every target ran clean. Called by scripts/test.sh with 60 s.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(request_stream_fuzz response_stream_fuzz chunked_decoder_fuzz
                                     path_normalize_fuzz yaml_documents_fuzz snapshot_file_fuzz
                                     route_table_fuzz)
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/portico-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
cmake --preset fuzz >/dev/null
if ! cmake --build --preset fuzz -j"${JOBS:-2}" >"${TMPDIR:-/tmp}/portico-fuzz-build.log" 2>&1; then
  tail -n 40 "${TMPDIR:-/tmp}/portico-fuzz-build.log"
  echo "fuzz: the fuzz preset does not build"
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run_one() {  # run_one <target>: one line "fuzz <target>: ..." and exit status
  local t=$1 dir="$work/$1"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -r "tests/fuzz/corpus/$t/." "$dir/corpus/"
  local seeds=("$dir/corpus")  # the first directory receives new inputs; regressions are read
  [ -d "tests/fuzz/regressions/$t" ] && seeds+=("tests/fuzz/regressions/$t")
  local rc=0
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build/fuzz/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "${seeds[@]}" \
    >"$dir/log" 2>&1 || rc=$?
  local execs; execs=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$dir/log" | tail -n1 | grep -Eo '[0-9]+$' || echo "?")
  local found; found=$(ls "$dir/artifacts" 2>/dev/null | head -n1 || true)
  if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
    echo "fuzz $t: ok, $execs executions in $seconds s, corpus $(ls "$dir/corpus" | wc -l) inputs"
    return 0
  fi
  mkdir -p "tests/fuzz/regressions/$t"
  [ -z "$found" ] || cp "$dir/artifacts/$found" "tests/fuzz/regressions/$t/"
  echo "fuzz $t: FAILED (rc=$rc) after $execs executions; reproducer: tests/fuzz/regressions/$t/${found:-none}"
  grep -E 'FUZZ_CHECK|ERROR: |SUMMARY: |runtime error' "$dir/log" | head -n 20 | sed 's/^/    /'
  return 1
}
export -f run_one
export work seconds
failed=0
printf '%s\n' "${targets[@]}" | xargs -P "${JOBS:-2}" -I{} bash -c 'run_one {}' || failed=1
exit $failed
