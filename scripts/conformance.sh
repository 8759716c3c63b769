#!/usr/bin/env bash
# The official MCP conformance runner (@modelcontextprotocol/conformance, 0.2.0 line) against
# the addon: every client scenario it lists, OAuth ones included, at every revision the scenario is
# tagged with (2025-06-18, 2025-11-25, 2026-07-28; `extension` scenarios run once). No vitest;
# safe to call from CI.
#
#   bash scripts/conformance.sh                       # build a debug addon copy, run them all
#   MCP_NATIVE_ADDON=path/to/x.node bash scripts/conformance.sh   # use a prebuilt addon
#   bash scripts/conformance.sh tools_call@2026-07-28 initialize  # only these (all revisions
#                                                                 # of a scenario without @)
#
# What it sets up, all under target/ (nothing in the repo root is touched):
#   target/conformance-tools/    Node 22 (the runner needs >= 22; from npm's `node` package) and
#                                the runner, in a private package.json of their own
#   target/conformance-addon/    the addon, built by `napi build` for this run only
#   target/conformance-results/  per scenario and revision: the runner's output and checks.json,
#                                and summary.tsv (scenario, revision, result, checks)
# Expected failures (docs/conformance.md) are listed below with the text their log must show:
# the run fails if one passes, or fails for another reason.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=lib/conformance-tools.sh
source "$ROOT/scripts/lib/conformance-tools.sh"
ADDON_DIR=$ROOT/target/conformance-addon
RESULTS=$ROOT/target/conformance-results
CLIENT=$ROOT/__test__/conformance-client.mjs

# scenario@revision -> the text its failure must contain (reasons: docs/conformance.md). None
# today: every scenario the runner lists passes.
declare -A EXPECTED_FAILURES=()

# 1. The runner and a Node >= 22 for it, in their own directory (scripts/lib/conformance-tools.sh).
conformance_tools_install

# 2. The addon: a copy of our own, so the repo-root build other suites load stays as it is.
if [ -z "${MCP_NATIVE_ADDON:-}" ]; then
  mkdir -p "$ADDON_DIR"
  npx napi build --platform --target x86_64-unknown-linux-gnu \
    --output-dir "$ADDON_DIR" --no-js --dts index.d.ts >&2
  MCP_NATIVE_ADDON=$(ls "$ADDON_DIR"/*.node | head -n1)
fi
export MCP_NATIVE_ADDON
echo "conformance: runner $CONFORMANCE_VERSION, addon $MCP_NATIVE_ADDON" >&2

# 3. Every client scenario the runner lists (OAuth's auth/* included), at every revision.
conformance_runs client "" "$@"

# 4. One runner call per scenario and revision.
rm -rf "$RESULTS" && mkdir -p "$RESULTS"
SUMMARY=$RESULTS/summary.tsv
printf 'scenario\trevision\tresult\tchecks\n' > "$SUMMARY"
passed=0
expected=0
skipped=0
unexpected=()
for run in "${RUNS[@]}"; do
  scenario=${run%@*}
  revision=${run#*@}
  out=$RESULTS/${scenario//\//_}@$revision
  mkdir -p "$out"
  args=(client --command "$CLIENT" --scenario "$scenario" --timeout 30000 -o "$out")
  [ "$revision" = extension ] || args+=(--spec-version "$revision")
  echo "=== conformance: $scenario @ $revision" >&2
  set +e
  PATH="$NODE22_BIN:$PATH" timeout 180 "$RUNNER" "${args[@]}" >"$out/run.log" 2>&1
  status=$?
  set -e
  checks=$(conformance_checks "$out/run.log")
  reason=${EXPECTED_FAILURES[$run]:-}
  if [ $status -eq 0 ] && [ -z "$reason" ] && [ "${checks:-0/0}" = 0/0 ]; then
    # The runner passes a scenario whose every check was skipped (the sep-2640 skills
    # extension: this client never lists skills). Not counted as a pass.
    result="not applicable (checks skipped)"
    skipped=$((skipped + 1))
  elif [ $status -eq 0 ] && [ -z "$reason" ]; then
    result=pass
    passed=$((passed + 1))
  elif [ $status -ne 0 ] && [ -n "$reason" ] && grep -qF -- "$reason" "$out/run.log"; then
    result="expected failure"
    expected=$((expected + 1))
  else
    result=FAIL
    unexpected+=("$run")
    tail -n 25 "$out/run.log" >&2
  fi
  printf '%s\t%s\t%s\t%s\n' "$scenario" "$revision" "$result" "${checks:-0/0}" >> "$SUMMARY"
done

column -t -s $'\t' "$SUMMARY" 2>/dev/null || cat "$SUMMARY"
[ $expected -gt 0 ] && echo "conformance: $expected expected failure(s), each for its documented reason"
[ ${#unexpected[@]} -gt 0 ] && echo "conformance: unexpected results in: ${unexpected[*]} (logs in $RESULTS)"
[ $skipped -gt 0 ] && echo "conformance: $skipped not applicable (every check skipped by the runner)"
echo "conformance: $passed passed, ${#unexpected[@]} failed"
[ ${#unexpected[@]} -eq 0 ]
