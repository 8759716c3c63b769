#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer through cargo-fuzz) of every parser that reads untrusted
# input: each target in fuzz/ runs for SECONDS, one at a time on one core, then this prints per
# target the executions run and what was found. Exits non-zero on any finding.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    # default 60 s, every target
#   bash scripts/fuzz.sh 10                                  # the short run CI can afford
#   FUZZ_OPEN_DEFECTS=1 bash scripts/fuzz.sh 30 wrap         # also the open defects' checks
#
# The invariants are in fuzz/src/oracles.rs (shared with tests/fuzz_props.rs); docs/robustness.md
# lists the targets. Stable Rust is enough: with no sanitizer cargo-fuzz passes rustc only
# stable flags (sancov instrumentation through -C); FUZZ_SANITIZER=address needs -Zsanitizer,
# which RUSTC_BOOTSTRAP=1 allows (set for that case only). Builds go to fuzz/target (a cold
# build of every target takes about 5 minutes on 2 cores). cargo-fuzz is installed from
# crates.io when missing (about a minute).
#
# Environment:
#   FUZZ_SANITIZER   none (default) or address. The code under test is safe Rust: what finds
#                    defects is the oracles' panics, and without ASan a target runs ~2x faster.
#   FUZZ_NICE        niceness of the fuzzing processes (default 10).
#   FUZZ_MAX_LEN     longest input libFuzzer tries, in bytes (default 8192).
# Found inputs are saved in fuzz/artifacts/<target>/; the corpus grows in fuzz/corpus/<target>/
# (seeded from fuzz/seeds/<target>/, with fuzz/dicts/<target>.dict). Reproduce a finding with
#   (cd fuzz && cargo fuzz run --sanitizer none --debug-assertions <target> <artifact file>)
set -euo pipefail

cd "$(dirname "$0")/../fuzz"

seconds=${1:-60}
shift || true
case $seconds in
  '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;;
esac
# libFuzzer takes -max_total_time=0 as "no limit".
if [ "$seconds" -lt 1 ]; then
  echo "scripts/fuzz.sh: SECONDS_PER_TARGET must be at least 1" >&2
  exit 2
fi

sanitizer=${FUZZ_SANITIZER:-none}
# Without a sanitizer cargo-fuzz passes only stable flags; ASan needs -Zsanitizer.
if [ "$sanitizer" != none ]; then
  export RUSTC_BOOTSTRAP=1
fi
niceness=${FUZZ_NICE:-10}
max_len=${FUZZ_MAX_LEN:-8192}

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== Installing cargo-fuzz (crates.io) =="
  cargo install cargo-fuzz --locked
fi

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list)
fi

echo "== Building the fuzz targets (sanitizer: $sanitizer, debug assertions on) =="
build_start=$SECONDS
nice -n "$niceness" cargo fuzz build --sanitizer "$sanitizer" --debug-assertions
echo "build: $((SECONDS - build_start)) s"
bin=target/$(rustc -vV | sed -n 's/^host: //p')/release

mkdir -p target/fuzz-logs
printf '\n%-12s %12s %10s %8s  %s\n' target executions exec/s corpus found
status=0
total=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  seeds=()
  [ -d "seeds/$t" ] && seeds=("seeds/$t")
  dict=()
  [ -f "dicts/$t.dict" ] && dict=("-dict=dicts/$t.dict")
  log="target/fuzz-logs/$t.log"
  find "artifacts/$t" -type f | sort >"$log.before"
  run=0
  # The built binary itself: `cargo fuzz run` would rebuild first if a source changed.
  nice -n "$niceness" "$bin/$t" -artifact_prefix="artifacts/$t/" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "${dict[@]}" "corpus/$t" "${seeds[@]}" >"$log" 2>&1 || run=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "corpus/$t" -type f | wc -l)
  new=$(find "artifacts/$t" -type f | sort | comm -13 "$log.before" - | head -3 | tr '\n' ' ')
  found="nothing"
  if [ -n "$new" ] || [ "$run" -ne 0 ]; then
    status=1
    found="FOUND (exit $run) ${new:-see fuzz/$log}"
  fi
  total=$((total + ${execs:-0}))
  printf '%-12s %12s %10s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$found"
  if [ "$found" != nothing ]; then
    # What broke, as the oracle (or libFuzzer) named it.
    grep -m2 -E 'invariant broken|panicked at|ERROR: libFuzzer|SUMMARY' "$log" | cut -c1-300 |
      sed 's/^/    /' || true
  fi
done
echo "total executions: $total ($seconds s per target; logs in fuzz/target/fuzz-logs/)"
if [ $status -ne 0 ]; then
  echo "fuzz: findings (inputs in fuzz/artifacts/)" >&2
fi
exit $status
