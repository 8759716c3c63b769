#!/usr/bin/env bash
# The official MCP conformance runner's SERVER scenarios against any MCP server reachable over
# Streamable HTTP. Written for McpServerHost and the gateway (`manager.serve()`); works against
# any server. No vitest; safe to call from CI.
#
#   bash scripts/conformance-server.sh URL [scenario[@revision]…]
#   bash scripts/conformance-server.sh --start 'PORT=3001 node srv.js' http://127.0.0.1:3001/mcp
#   bash scripts/conformance-server.sh --expected scripts/conformance-server-expected/everything.tsv URL
#
# Options (before the URL):
#   --start CMD        run CMD (bash -c, own process group) first, wait until URL answers HTTP
#                      (at most 20 s), stop it (the whole group) when done
#   --expected FILE    expected failures: lines "scenario@revision<TAB>check-id,check-id…"
#                      (# comments allowed). Such a run is an "expected failure" only if exactly
#                      those checks fail (checks.json); if it passes, or other checks fail, the
#                      run fails
#   --record FILE      write the failures of this run to FILE in that format (a new baseline)
#   --out DIR          results directory (default target/conformance-server-results)
# Environment: CONFORMANCE_REVISIONS (default "2025-11-25 2026-07-28 extension"; "all" for every
# revision the runner tags, 2025-03-26 and 2025-06-18 included), CONFORMANCE_TIMEOUT_MS
# (per scenario, default 30000).
#
# Setup (Node 22 and the runner under target/conformance-tools/) is shared with
# scripts/conformance.sh: scripts/lib/conformance-tools.sh. Results: one directory per
# scenario@revision with the runner's output (run.log) and checks.json, and summary.tsv
# (scenario, revision, result, checks, failed check ids). Exit status: non-zero on any failure not
# listed as expected, and on an expected failure that passes or fails differently.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=lib/conformance-tools.sh
source "$ROOT/scripts/lib/conformance-tools.sh"

START_CMD=
EXPECTED_FILE=
RECORD_FILE=
RESULTS=$ROOT/target/conformance-server-results
while [ $# -gt 0 ]; do
  case $1 in
    --start) START_CMD=$2; shift 2 ;;
    --expected) EXPECTED_FILE=$2; shift 2 ;;
    --record) RECORD_FILE=$2; shift 2 ;;
    --out) RESULTS=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    --*) echo "conformance-server: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: conformance-server.sh [--start CMD] [--expected FILE] [--record FILE] [--out DIR] URL [scenario[@revision]…]" >&2; exit 2; }
URL=$1
shift
REVISIONS=${CONFORMANCE_REVISIONS:-2025-11-25 2026-07-28 extension}
[ "$REVISIONS" = all ] && REVISIONS=
TIMEOUT_MS=${CONFORMANCE_TIMEOUT_MS:-30000}

# scenario@revision -> the check ids that must fail (sorted, comma-separated).
declare -A EXPECTED_FAILURES=()
if [ -n "$EXPECTED_FILE" ]; then
  while IFS=$'\t' read -r run ids; do
    [[ -z "$run" || "$run" == \#* ]] && continue
    EXPECTED_FAILURES[$run]=$ids
  done < "$EXPECTED_FILE"
fi

# 1. The runner and Node 22.
conformance_tools_install

# 2. The server, when we start it: its own process group, stopped on every exit path.
SERVER_PGID=
stop_server() {
  if [ -n "$SERVER_PGID" ]; then
    kill -TERM -- "-$SERVER_PGID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 -- "-$SERVER_PGID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$SERVER_PGID" 2>/dev/null || true
    SERVER_PGID=
  fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM
if [ -n "$START_CMD" ]; then
  mkdir -p "$RESULTS"
  setsid bash -c "$START_CMD" >"$RESULTS/server.log" 2>&1 < /dev/null &
  SERVER_PGID=$!
  # Ready when the URL answers anything over HTTP (a GET on /mcp is often 400/405: fine).
  ready=
  for _ in $(seq 1 200); do
    if curl -s -o /dev/null --max-time 1 "$URL"; then ready=1; break; fi
    kill -0 "$SERVER_PGID" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$ready" ] || { echo "conformance-server: $URL did not answer within 20 s"; cat "$RESULTS/server.log"; exit 1; } >&2
fi

# 3. The scenarios: every server scenario the runner lists, at the chosen revisions.
conformance_runs server "$REVISIONS" "$@"
echo "conformance-server: runner $CONFORMANCE_VERSION, ${#RUNS[@]} runs against $URL" >&2

# Failed check ids of a run, from the runner's checks.json (sorted, comma-separated).
failed_checks() {
  "$NODE22_BIN/node" -e '
    const fs = require("fs"), path = require("path")
    const ids = new Set()
    const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name === "checks.json") for (const c of JSON.parse(fs.readFileSync(p, "utf8")))
        if (c.status === "FAILURE" || c.status === "ERROR") ids.add(c.id)
    } }
    walk(process.argv[1])
    console.log([...ids].sort().join(","))
  ' "$1"
}

# 4. One runner call per scenario and revision.
for run in "${RUNS[@]}"; do rm -rf "$RESULTS/${run//\//_}"; done
mkdir -p "$RESULTS"
SUMMARY=$RESULTS/summary.tsv
printf 'scenario\trevision\tresult\tchecks\tfailed\n' > "$SUMMARY"
[ -z "$RECORD_FILE" ] || printf '# expected failures: scenario@revision<TAB>failed check ids (conformance-server.sh --record, %s)\n' "$URL" > "$RECORD_FILE"
passed=0
expected=0
skipped=0
unexpected=()
for run in "${RUNS[@]}"; do
  scenario=${run%@*}
  revision=${run#*@}
  out=$RESULTS/${scenario//\//_}@$revision
  mkdir -p "$out"
  args=(server --url "$URL" --scenario "$scenario" --timeout "$TIMEOUT_MS" -o "$out")
  [ "$revision" = extension ] || args+=(--spec-version "$revision")
  echo "=== conformance-server: $scenario @ $revision" >&2
  set +e
  PATH="$NODE22_BIN:$PATH" timeout $((TIMEOUT_MS / 1000 + 60)) "$RUNNER" "${args[@]}" >"$out/run.log" 2>&1
  status=$?
  set -e
  checks=$(conformance_checks "$out/run.log")
  failed=$(failed_checks "$out")
  # A run that fails without a failed check (the runner threw: e.g. a method the server lacks
  # before any check) is keyed by its exit status.
  key=$failed
  [ $status -eq 0 ] || [ -n "$key" ] || key=exit-$status
  want=${EXPECTED_FAILURES[$run]:-}
  if [ $status -eq 0 ] && [ -z "$want" ] && [ "${checks:-0/0}" = 0/0 ]; then
    result="not applicable (checks skipped)"
    skipped=$((skipped + 1))
  elif [ $status -eq 0 ] && [ -z "$want" ]; then
    result=pass
    passed=$((passed + 1))
  elif [ $status -ne 0 ] && [ -n "$want" ] && [ "$key" = "$want" ]; then
    result="expected failure"
    expected=$((expected + 1))
  else
    result=FAIL
    unexpected+=("$run")
    [ -z "$want" ] || echo "conformance-server: $run expected to fail [$want], failed [$key]" >&2
  fi
  if [ -n "$RECORD_FILE" ] && [ $status -ne 0 ]; then
    printf '%s\t%s\n' "$run" "$key" >> "$RECORD_FILE"
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$scenario" "$revision" "$result" "${checks:-0/0}" "$key" >> "$SUMMARY"
done

column -t -s $'\t' "$SUMMARY" 2>/dev/null || cat "$SUMMARY"
[ $expected -eq 0 ] || echo "conformance-server: $expected expected failure(s), each with exactly its listed checks failing"
[ ${#unexpected[@]} -eq 0 ] || echo "conformance-server: unexpected results in: ${unexpected[*]} (logs in $RESULTS)"
[ $skipped -eq 0 ] || echo "conformance-server: $skipped not applicable (every check skipped by the runner)"
echo "conformance-server: $passed passed, $expected expected failures, ${#unexpected[@]} failed ($SUMMARY)"
[ ${#unexpected[@]} -eq 0 ]
