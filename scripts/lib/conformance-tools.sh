# The official MCP conformance runner and the Node >= 22 it needs, shared by
# scripts/conformance.sh (client scenarios, against the addon) and scripts/conformance-server.sh
# (server scenarios, against any MCP server URL). Sourced, not run; the caller sets ROOT (the
# repo root) and `set -euo pipefail`.
#
#   conformance_tools_install            installs (once) and sets NODE22_BIN and RUNNER
#   conformance_runs client|server REVS [scenario[@revision]…]
#                                        fills RUNS with "scenario@revision", one per revision
#                                        the runner tags the scenario with (`extension` once);
#                                        REVS limits revisions ("" = all of them, or e.g.
#                                        "2025-11-25 2026-07-28 extension"); arguments without
#                                        @ keep every revision of that scenario
#   conformance_checks LOG               "passed/total" from the runner's output, or empty

CONFORMANCE_VERSION=0.2.0-alpha.12
CONFORMANCE_NODE_MAJOR=22
CONFORMANCE_TOOLS=$ROOT/target/conformance-tools

conformance_tools_install() {
  # Its own package.json keeps npm from walking up to the repo's and pruning the repo's
  # node_modules.
  local installed
  installed=$(node -p "try { require('$CONFORMANCE_TOOLS/node_modules/@modelcontextprotocol/conformance/package.json').version } catch { '' }" 2>/dev/null || true)
  if [ "$installed" != "$CONFORMANCE_VERSION" ] || [ ! -x "$CONFORMANCE_TOOLS/node_modules/node/bin/node" ]; then
    mkdir -p "$CONFORMANCE_TOOLS"
    [ -f "$CONFORMANCE_TOOLS/package.json" ] || echo '{"name":"conformance-tools","private":true}' > "$CONFORMANCE_TOOLS/package.json"
    (cd "$CONFORMANCE_TOOLS" && npm install --no-audit --no-fund --loglevel=error \
      "node@$CONFORMANCE_NODE_MAJOR" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION")
  fi
  NODE22_BIN=$CONFORMANCE_TOOLS/node_modules/node/bin
  RUNNER=$CONFORMANCE_TOOLS/node_modules/.bin/conformance
  "$NODE22_BIN/node" --version >/dev/null
}

conformance_runs() {
  local mode=$1 revs=$2
  shift 2
  # What the runner lists: "  - name [rev,rev]" lines.
  local listed line name revision run arg
  mapfile -t listed < <(PATH="$NODE22_BIN:$PATH" "$RUNNER" list "--$mode" 2>/dev/null \
    | sed -n 's/^ *- \([^ ]*\) \[\(.*\)\]$/\1 \2/p')
  [ ${#listed[@]} -gt 0 ] || { echo "conformance: the runner listed no $mode scenarios" >&2; return 1; }
  RUNS=()
  for line in "${listed[@]}"; do
    name=${line%% *}
    local revisions=()
    IFS=',' read -r -a revisions <<< "${line#* }"
    for revision in "${revisions[@]}"; do
      if [ -z "$revs" ] || [[ " $revs " == *" $revision "* ]]; then RUNS+=("$name@$revision"); fi
    done
  done
  if [ $# -gt 0 ]; then
    local wanted=()
    for run in "${RUNS[@]}"; do
      for arg in "$@"; do
        if [ "$arg" = "$run" ] || [ "$arg" = "${run%@*}" ]; then wanted+=("$run"); fi
      done
    done
    RUNS=("${wanted[@]}")
  fi
  [ ${#RUNS[@]} -gt 0 ] || { echo "conformance: no scenario to run" >&2; return 1; }
}

conformance_checks() {
  sed -n 's/^Passed: \([0-9]*\/[0-9]*\).*/\1/p' "$1" | tail -n1
}
