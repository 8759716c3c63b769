// The first call to an idle server (issue 14): native with `idleTimeoutMs` (the call starts the
// stopped server again and waits for it) against what a client without idle support does for
// the same call — the TypeScript SDK's Client spawning the server, initializing, calling, and
// closing — in the same run, same server (examples/echo-server.mjs), alternating.
//
//   node bench/idle.mjs [--rounds 20] [--addon PATH] [--out FILE]
//
// Also the warm call (server running) for scale. Prints a markdown table with p50/p90 and the
// ratio, and, with --out, JSON.

import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { opt, repo } from './lib/cli.mjs'

const rounds = Number(opt('--rounds', '20'))
const require = createRequire(import.meta.url)
const native = require(resolve(opt('--addon', resolve(repo, 'index.js'))))
const server = resolve(repo, 'examples/echo-server.mjs')
const IDLE_MS = 200

const manager = new native.McpManager({ servers: { e: { command: process.execPath, args: [server], idleTimeoutMs: IDLE_MS } } })
await manager.start()
const echo = manager.getAgentTools().find((t) => t.name === 'mcp_e_echo')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const idle = async () => {
  for (let i = 0; i < 500 && manager.getStatus()[0].running; i++) await sleep(20)
  if (manager.getStatus()[0].running) throw new Error('the server did not go idle')
}

async function nativeCold() {
  await idle()
  const t = performance.now()
  const r = await echo.execute('c', { text: 'hi' })
  const ms = performance.now() - t
  if (r.details.error) throw new Error(r.content[0].text)
  return ms
}

async function nativeWarm() {
  const t = performance.now()
  await echo.execute('w', { text: 'hi' })
  return performance.now() - t
}

async function sdkCold() {
  const t = performance.now()
  const client = new Client({ name: 'bench', version: '1.0.0' })
  // The same environment the native client gives its servers: the SDK's default is a short
  // allowlist, and a variable such as NODE_EXTRA_CA_CERTS alone costs Node ~30 ms of start-up.
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [server], stderr: 'ignore', env: { ...process.env } }))
  await client.callTool({ name: 'echo', arguments: { text: 'hi' } })
  const ms = performance.now() - t
  await client.close()
  return ms
}

const samples = { nativeCold: [], sdkCold: [], nativeWarm: [] }
for (let i = 0; i < rounds; i++) {
  samples.nativeCold.push(await nativeCold())
  samples.nativeWarm.push(await nativeWarm())
  samples.sdkCold.push(await sdkCold())
}
await manager.shutdown()

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const row = (label, xs) => `| ${label} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 90).toFixed(1)} |`
console.log(`${rounds} rounds, idleTimeoutMs ${IDLE_MS}, examples/echo-server.mjs, node ${process.version}\n`)
console.log('| call | p50 (ms) | p90 (ms) |\n|---|--:|--:|')
console.log(row('native, first call after idle (restarts the server)', samples.nativeCold))
console.log(row('SDK Client: spawn + initialize + call', samples.sdkCold))
console.log(row('native, warm call', samples.nativeWarm))
console.log(`\nratio native cold / SDK spawn+call, p50: ${(pct(samples.nativeCold, 50) / pct(samples.sdkCold, 50)).toFixed(2)}`)
const out = opt('--out')
if (out) writeFileSync(out, JSON.stringify(samples, null, 2))
