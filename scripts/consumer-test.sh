#!/usr/bin/env bash
# The package as a user meets it: a fresh project in a temporary directory outside the repo
# installs the packed root and platform tarballs (no repository devDependencies in reach), then
#   - loads it with require and with import, starts a manager on a real stdio MCP server (the
#     example server shipped in the package), calls a tool, shuts down; and from worker threads
#     (one after another and at once, beside the main thread; each worker's server must end with
#     its thread);
#   - compiles a TypeScript program using the whole public API with tsc --strict under
#     moduleResolution node16 (CommonJS and ESM files) and bundler;
#   - does the runtime checks again on Node 22 and 24 (the `node` npm package; the machine's
#     Node is untouched);
#   - removes the platform package and checks the load error names it.
# Prints `consumer: N passed, N failed`; exits non-zero on any failure.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

if ! ls dist/openclaw-mcp-native-[0-9]*.tgz >/dev/null 2>&1; then
  bash scripts/pack.sh || exit 1
fi
root_tgz=$(ls "$repo"/dist/openclaw-mcp-native-[0-9]*.tgz)
platform_tgz=$(ls "$repo"/dist/openclaw-mcp-native-*-*.tgz | grep -v "^$root_tgz$")

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-native-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
check() {
  local name=$1
  shift
  if "$@" >"$work/last.log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    sed 's/^/     /' "$work/last.log"
  fi
}

cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "$root_tgz" "$platform_tgz" typescript@5.9.3 @types/node@20 >/dev/null 2>&1 \
  || { echo "FAIL npm install of the tarballs"; echo "consumer: 0 passed, 1 failed"; exit 1; }

cat > consumer.cjs <<'JS'
const assert = require('node:assert/strict')
const { McpManager, nativeVersion } = require('@openclaw/mcp-native')
const pkg = require('@openclaw/mcp-native/package.json')
assert.equal(nativeVersion(), pkg.version)
const server = require.resolve('@openclaw/mcp-native/examples/echo-server.mjs')
;(async () => {
  const manager = new McpManager({ servers: { example: { command: process.execPath, args: [server] } } })
  await manager.start()
  assert.equal(manager.getStatus()[0].status, 'ready')
  const echo = manager.getAgentTools().find((t) => t.name === 'mcp_example_echo')
  const result = await echo.execute('call-1', { text: 'from a consumer (cjs)' })
  assert.match(result.content[0].text, /\nSource: MCP Server\nFrom: example\n---\nfrom a consumer \(cjs\)\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>$/)
  await manager.shutdown()
  assert.equal(manager.getStatus()[0].status, 'closed')
})().catch((e) => { console.error(e); process.exit(1) })
JS
cat > consumer.mjs <<'JS'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { McpManager, wrapExternalContent } from '@openclaw/mcp-native'
const server = createRequire(import.meta.url).resolve('@openclaw/mcp-native/examples/echo-server.mjs')
const manager = new McpManager({ servers: { example: { command: process.execPath, args: [server] } } })
await manager.start()
const add = manager.getAgentTools().find((t) => t.name === 'mcp_example_add')
const result = await add.execute('call-2', { a: 2, b: 40 })
assert.match(result.content[0].text, /\n---\n42\n<<<END_EXTERNAL_UNTRUSTED_CONTENT/)
assert.ok(wrapExternalContent('x', { source: 'api', format: 'legacy' }).includes('<<<EXTERNAL_UNTRUSTED_CONTENT>>>'))
await manager.shutdown()
JS
cat > consumer-worker.cjs <<'JS'
// The package in worker threads: three one after another, then two at once, each with its own
// manager, beside one on the main thread. Every other worker ends with its server running: the
// end of its thread must stop it.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { Worker } = require('node:worker_threads')
const { McpManager } = require('@openclaw/mcp-native')
const server = require.resolve('@openclaw/mcp-native/examples/echo-server.mjs')
const job = `
  const { parentPort, workerData } = require('node:worker_threads')
  const { McpManager } = require('@openclaw/mcp-native')
  ;(async () => {
    const m = new McpManager({ servers: { example: { command: process.execPath, args: [workerData.server, workerData.tag] } } })
    await m.start()
    const echo = m.getAgentTools().find((t) => t.name === 'mcp_example_echo')
    parentPort.postMessage((await echo.execute('w', { text: 'from worker ' + workerData.n })).content[0].text)
    if (workerData.n % 2) await m.shutdown()
  })()`
const tagged = (tag) => fs.readdirSync('/proc').filter((p) => {
  try { return /^\d+$/.test(p) && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(tag) && !/^\S+ \(.*\) [ZX]/.test(fs.readFileSync(`/proc/${p}/stat`, 'utf8')) } catch { return false }
})
async function gone(tag) {
  for (const deadline = Date.now() + 10000; tagged(tag).length > 0;) {
    assert.ok(Date.now() < deadline, `the server of ${tag} outlived its worker`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
function run(n) {
  const tag = `consumer-worker-${process.pid}-${n}`
  return new Promise((resolve, reject) => {
    let text
    const w = new Worker(job, { eval: true, workerData: { server, tag, n } })
    w.on('message', (t) => (text = t))
    w.on('error', reject)
    w.on('exit', (code) => {
      assert.equal(code, 0)
      assert.match(text, new RegExp(`\n---\nfrom worker ${n}\n<<<END_EXTERNAL_UNTRUSTED_CONTENT`))
      gone(tag).then(resolve, reject)
    })
  })
}
;(async () => {
  const main = new McpManager({ servers: { example: { command: process.execPath, args: [server] } } })
  await main.start()
  for (const n of [0, 1, 2]) await run(n)
  await Promise.all([run(3), run(4)])
  const echo = main.getAgentTools().find((t) => t.name === 'mcp_example_echo')
  assert.match((await echo.execute('m', { text: 'main' })).content[0].text, /\n---\nmain\n<<<END_EXTERNAL/)
  await main.shutdown()
})().catch((e) => { console.error(e); process.exit(1) })
JS
sed "s#'../../index.js'#'@openclaw/mcp-native'#" "$repo/__test__/types/usage.ts" > usage.ts
cp usage.ts usage.mts
cat > tsconfig.node16.json <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "target": "ES2022", "module": "node16",
    "moduleResolution": "node16", "types": ["node"], "skipLibCheck": false },
  "files": ["usage.ts", "usage.mts"] }
JSON
cat > tsconfig.bundler.json <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "target": "ES2022", "module": "esnext",
    "moduleResolution": "bundler", "types": ["node"], "skipLibCheck": false },
  "files": ["usage.ts"] }
JSON

tsc=./node_modules/.bin/tsc
check "tsc --strict, moduleResolution node16 (.ts and .mts)" "$tsc" -p tsconfig.node16.json
check "tsc --strict, moduleResolution bundler" "$tsc" -p tsconfig.bundler.json

run_on() {
  local node=$1 label=$2
  check "require() on $label" "$node" consumer.cjs
  check "import on $label" "$node" consumer.mjs
  [ "$(uname -s)" = Linux ] && check "worker threads, one after another and at once, on $label" "$node" consumer-worker.cjs
}
run_on "$(command -v node)" "Node $(node --version) (system)"
for major in 22 24; do
  prefix="$repo/target/node-versions/$major"
  if [ ! -x "$prefix/node_modules/.bin/node" ]; then
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "node@$major" >/dev/null 2>&1
  fi
  if [ -x "$prefix/node_modules/.bin/node" ]; then
    run_on "$prefix/node_modules/.bin/node" "Node $("$prefix/node_modules/.bin/node" --version)"
  else
    echo "skip Node $major: the node@$major package did not install here"
  fi
done

platform_dir=$(ls -d node_modules/@openclaw/mcp-native-*)
platform_name=${platform_dir#node_modules/}
mv "$platform_dir" "$work/hidden-platform"
missing() {
  node -e '
    try { require("@openclaw/mcp-native"); process.exit(1) } catch (e) {
      if (e.code !== "ERR_MCP_NATIVE_BINARY_MISSING" || !e.message.includes(process.argv[1])) {
        console.error(e.message); process.exit(1)
      }
      console.log(e.message)
    }' "$platform_name"
}
check "a missing platform package is named in the load error ($platform_name)" missing
mv "$work/hidden-platform" "$platform_dir"

echo "consumer: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
