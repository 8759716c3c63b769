// What `protocol: 'auto'` costs at start (issue 15): the time from `new McpManager` to a ready
// server with `auto` against the same server with its revision fixed, in the same run,
// alternating:
//   - server-everything over Streamable HTTP (a 2025-11-25 server: auto's `server/discover`
//     probe is refused, then `initialize`) against `protocol: '2025-11-25'`;
//   - the TypeScript SDK v2 over stdio, modern only (auto's `initialize` is refused naming
//     2026-07-28: the server is started again and opened with `server/discover`) against
//     `protocol: '2026-07-28'`; the auto start is measured first-time (nothing remembered);
//   - the TypeScript SDK v2 over stateless HTTP: auto against `protocol: '2026-07-28'`.
//
//   node bench/negotiation.mjs [--rounds 15] [--addon PATH]
//
// Needs target/sdk-v2 (bash scripts/install-sdk-v2.sh). Prints a markdown table of medians and
// ratios.

import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { opt, repo } from './lib/cli.mjs'

const rounds = Number(opt('--rounds', '15'))
const require = createRequire(import.meta.url)
const native = require(resolve(opt('--addon', resolve(repo, 'index.js'))))
const everything = resolve(repo, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js')
const v2 = resolve(repo, '__test__/fixtures/v2-server.mjs')

function startChild(args, env, ready) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  return new Promise((resolvePort, reject) => {
    let out = ''
    const look = (d) => {
      out += d
      const port = ready(out)
      if (port) resolvePort({ child, port })
    }
    child.stdout.on('data', look)
    child.stderr.on('data', look)
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)))
  })
}

async function startTime(server) {
  const t0 = performance.now()
  const manager = new native.McpManager({ servers: { s: server } })
  await manager.start()
  const ms = performance.now() - t0
  const [status] = manager.getStatus()
  await manager.shutdown()
  if (status.status !== 'ready') throw new Error(`not ready: ${JSON.stringify(status)}`)
  return { ms, revision: status.protocolVersion }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const port = 40_000 + Math.floor(Math.random() * 5000)
const ev = { child: spawn(process.execPath, [everything, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' }) }
for (let i = 0; ; i++) {
  const up = await fetch(`http://127.0.0.1:${port}/mcp`).then(() => true, () => false)
  if (up) break
  if (i > 300) throw new Error('server-everything did not start')
  await new Promise((r) => setTimeout(r, 50))
}
const v2http = await startChild([v2, 'http'], {}, (out) => Number(/port (\d+)/.exec(out)?.[1] ?? 0))

const cases = [
  ['server-everything, Streamable HTTP', { transport: 'http', url: `http://127.0.0.1:${port}/mcp` }, '2025-11-25'],
  ['TypeScript SDK v2, stdio modern-only', { command: process.execPath, args: [v2, 'stdio-modern'] }, '2026-07-28'],
  ['TypeScript SDK v2, stateless HTTP', { transport: 'http', url: `http://127.0.0.1:${v2http.port}/mcp` }, '2026-07-28'],
]
console.log(`| server | revision | auto (median ms) | fixed (median ms) | auto / fixed |`)
console.log(`|---|---|--:|--:|--:|`)
try {
  for (const [name, server, fixed] of cases) {
    await startTime(server) // warm-up
    const auto = []
    const pinned = []
    let revision
    for (let i = 0; i < rounds; i++) {
      const a = await startTime(server)
      revision = a.revision
      auto.push(a.ms)
      pinned.push((await startTime({ ...server, protocol: fixed })).ms)
    }
    const [ma, mf] = [median(auto), median(pinned)]
    console.log(`| ${name} | ${revision} | ${ma.toFixed(1)} | ${mf.toFixed(1)} | ${(ma / mf).toFixed(2)}× |`)
  }
} finally {
  ev.child.kill()
  v2http.child.kill()
}
