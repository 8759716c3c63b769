#!/usr/bin/env bash
# Every test of the package: the Rust core (no Node), the addon's build and its types, and the
# vitest suites against the built addon. `npm test` runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')

echo "== Rust core: cargo test (--no-default-features: no napi) =="
# One test at a time: several suites start real peers (moto, OpenBao, HTTP servers) and time
# their recovery; on a 2-core machine parallel peers make those timings noisy.
cargo test --no-default-features --target "$host" -- --test-threads=1

echo "== Build the addon ($host, debug) =="
npx napi build --platform --target "$host" --js binding.js --dts binding.d.ts

echo "== Types: a strict TypeScript program using the whole API =="
npx tsc -p __test__/types/tsconfig.json
echo "tsc --strict: ok"

echo "== vitest =="
# The TypeScript SDK v2 server the 2026-07-28 suites start (its own directory under target/).
bash scripts/install-sdk-v2.sh
# The real OpenClaw gateway (openclaw@2026.9.6) and Node 24 the plugin's end-to-end suite runs
# (__test__/openclaw-e2e.spec.ts), under target/openclaw-host.
bash scripts/install-openclaw.sh
results=.vitest-results.json
rm -f "$results"
status=0
npx vitest run --reporter=default --reporter=json --outputFile="$results" || status=$?
if [ -f "$results" ]; then
  node -e '
    const r = require(process.argv[1]);
    console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
  ' "$PWD/$results"
else
  echo "vitest: 0 passed, 1 failed"
  status=1
fi
exit $status
