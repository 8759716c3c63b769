#!/usr/bin/env bash
# The TypeScript SDK v2 (the real peer for the 2026-07-28 revision), in a directory of its own
# under target/: its zod 4 must not meet the zod 3 of the v1 SDK the repo's own packages use.
# Idempotent; scripts/test-all.sh and .ci/run call it.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=target/sdk-v2
if [ -f "$DIR/node_modules/@modelcontextprotocol/server/package.json" ] \
  && [ -f "$DIR/node_modules/@modelcontextprotocol/node/package.json" ]; then
  exit 0
fi
mkdir -p "$DIR"
[ -f "$DIR/package.json" ] || echo '{"name":"sdk-v2-peers","private":true}' > "$DIR/package.json"
(cd "$DIR" && npm install --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/server@2.4.0" "@modelcontextprotocol/node@2.1.2" \
  "@modelcontextprotocol/client@2.4.0" "zod@4.6.7")
