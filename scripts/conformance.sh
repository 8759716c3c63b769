#!/usr/bin/env bash
# The official MCP conformance runner (@modelcontextprotocol/conformance) against the addon, for
# every client scenario that does not need OAuth. No vitest; safe to call from CI.
#
#   bash scripts/conformance.sh              # build a debug addon copy, run all scenarios
#   MCP_NATIVE_ADDON=path/to/x.node bash scripts/conformance.sh   # use a prebuilt addon
#   bash scripts/conformance.sh initialize tools_call             # only these scenarios
#
# What it sets up, all under target/ (nothing in the repo root is touched):
#   target/conformance-tools/    Node 22 (the runner needs >= 22; from npm's `node` package) and
#                                the runner, in a private package.json of their own
#   target/conformance-addon/    the addon, built by `napi build` for this run only
#   target/conformance-tools-next/  the runner's 0.2.0 line, for the scenarios only it has
#   target/conformance-results/  the runner's checks.json / stdout / stderr per scenario
# Expected failures (see docs/conformance.md) are passed to the runner as a baseline, so the
# exit status is non-zero only for an unexpected failure or a stale expectation.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
CONFORMANCE_VERSION=0.1.16
NODE_MAJOR=22
TOOLS=$ROOT/target/conformance-tools
ADDON_DIR=$ROOT/target/conformance-addon
RESULTS=$ROOT/target/conformance-results
CLIENT=$ROOT/__test__/conformance-client.mjs

SCENARIOS=("$@")
if [ ${#SCENARIOS[@]} -eq 0 ]; then
  SCENARIOS=(initialize tools_call sse-retry elicitation-sep1034-client-defaults http-standard-headers
    json-schema-2020-12-preservation)
fi
# Scenarios only the runner's 0.2.0 line has, run with that runner (its own directory).
CONFORMANCE_NEXT_VERSION=0.2.0-alpha.12
NEXT_SCENARIOS=(json-schema-2020-12-preservation http-standard-headers)
TOOLS_NEXT=$ROOT/target/conformance-tools-next
# None: the conformance client answers elicitation with the schema's defaults (docs/conformance.md).
EXPECTED_FAILURES=()

# 1. The runner and a Node >= 22 for it, in their own directory (its own package.json keeps
#    npm from walking up to the repo's and pruning the repo's node_modules).
if [ ! -x "$TOOLS/node_modules/.bin/conformance" ] || [ ! -x "$TOOLS/node_modules/node/bin/node" ]; then
  mkdir -p "$TOOLS"
  [ -f "$TOOLS/package.json" ] || echo '{"name":"conformance-tools","private":true}' > "$TOOLS/package.json"
  (cd "$TOOLS" && npm install --no-audit --no-fund --loglevel=error \
    "node@$NODE_MAJOR" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION")
fi
NODE22_BIN=$TOOLS/node_modules/node/bin
"$NODE22_BIN/node" --version >/dev/null
if [ ! -x "$TOOLS_NEXT/node_modules/.bin/conformance" ]; then
  mkdir -p "$TOOLS_NEXT"
  [ -f "$TOOLS_NEXT/package.json" ] || echo '{"name":"conformance-tools-next","private":true}' > "$TOOLS_NEXT/package.json"
  (cd "$TOOLS_NEXT" && npm install --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$CONFORMANCE_NEXT_VERSION")
fi

# 2. The addon: a copy of our own, so the repo-root build other suites load stays as it is.
if [ -z "${MCP_NATIVE_ADDON:-}" ]; then
  mkdir -p "$ADDON_DIR"
  npx napi build --platform --target x86_64-unknown-linux-gnu \
    --output-dir "$ADDON_DIR" --no-js --dts index.d.ts >&2
  MCP_NATIVE_ADDON=$(ls "$ADDON_DIR"/*.node | head -n1)
fi
export MCP_NATIVE_ADDON
echo "conformance: addon $MCP_NATIVE_ADDON" >&2

# 3. The scenarios, one runner call each.
mkdir -p "$RESULTS"
BASELINE=$RESULTS/expected-failures.yml
{
  if [ ${#EXPECTED_FAILURES[@]} -eq 0 ]; then
    echo "client: []"
  else
    echo "client:"
    for s in ${EXPECTED_FAILURES[@]+"${EXPECTED_FAILURES[@]}"}; do echo "  - $s"; done
  fi
} > "$BASELINE"

passed=0
failed=0
expected=0
failures=()
for scenario in "${SCENARIOS[@]}"; do
  echo "=== conformance scenario: $scenario" >&2
  is_expected=0
  for s in ${EXPECTED_FAILURES[@]+"${EXPECTED_FAILURES[@]}"}; do [ "$s" = "$scenario" ] && is_expected=1; done
  log=$RESULTS/$scenario.log
  set +e
  runner=$TOOLS
  for s in "${NEXT_SCENARIOS[@]}"; do [ "$s" = "$scenario" ] && runner=$TOOLS_NEXT; done
  PATH="$NODE22_BIN:$PATH" timeout 180 "$runner/node_modules/.bin/conformance" client \
    --command "$CLIENT" --scenario "$scenario" --timeout 30000 \
    --expected-failures "$BASELINE" -o "$RESULTS" >"$log" 2>&1
  status=$?
  set -e
  tail -n 15 "$log" >&2
  if [ $status -eq 0 ] && [ $is_expected -eq 1 ]; then
    expected=$((expected + 1))
  elif [ $status -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$scenario")
  fi
done

[ $expected -gt 0 ] && echo "conformance: $expected expected failure(s): ${EXPECTED_FAILURES[*]}"
[ $failed -gt 0 ] && echo "conformance: unexpected results in: ${failures[*]} (logs in $RESULTS)"
echo "conformance: $passed passed, $failed failed"
[ $failed -eq 0 ]
