#!/usr/bin/env node
// What a gateway costs per call: a tiny tools/call (`echo {text}`), sequential, measured with the
// TypeScript SDK v1 client through
//   (a) direct       SDK Client -> upstream (bench/rust-server or bench/node-server.mjs, stdio)
//   (b) sdk-gateway  SDK Client -> bench/sdk-gateway.mjs -> upstream
//   (d) native       SDK Client -> the native gateway (`manager.serve()`) -> upstream, once it
//                    exists: --native-gateway-cmd (see NATIVE GATEWAY HOOK below)
// Same upstream binary, same run, contenders alternating round by round; p50/p99/mean per
// contender and ratios. Not part of `npm run bench` (yet).
//
//   node bench/gateway.mjs [--servers rust,node] [--via stdio|http] [--calls 2000] [--rounds 10]
//                          [--warm 200] [--budget-s 120] [--conc 64] [--smoke] [--out FILE]
//                          [--native-gateway-cmd 'CMD … {config} …']
//
// --via: how the client reaches a gateway (stdio: the gateway is the client's child; http: the
// gateway is started with --http 0 and must print `listening <port>` or its URL; the client uses
// Streamable HTTP at http://127.0.0.1:<port>/mcp). The upstream is always a stdio child of the
// gateway. --calls is per contender, split over --rounds; --budget-s bounds each server's whole
// measurement. --conc: after the sequential rounds, each contender's throughput with that many
// calls in flight (--calls of them per round, the median of the rounds; 0: not measured).
// --smoke: 50 calls, 2 rounds (checks that it runs, never the numbers).

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { spawn, spawnSync } from 'node:child_process'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { NODE_SERVER, RUST_SERVER } from './lib/contenders.mjs'

const BENCH = dirname(fileURLToPath(import.meta.url))
const ROOT = join(BENCH, '..')
const SDK_GATEWAY = join(BENCH, 'sdk-gateway.mjs')

const argv = process.argv.slice(2)
const has = (f) => argv.includes(f)
const opt = (f, d) => {
  const i = argv.indexOf(f)
  return i >= 0 ? argv[i + 1] : d
}
if (has('--help') || has('-h')) {
  console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 20).join('\n'))
  process.exit(0)
}
const SMOKE = has('--smoke')
const SERVERS = opt('--servers', 'rust,node').split(',')
const VIA = opt('--via', 'stdio')
if (!['stdio', 'http'].includes(VIA)) throw new Error(`--via stdio|http, not ${VIA}`)
const CALLS = Number(opt('--calls', SMOKE ? 50 : 2000))
const ROUNDS = Math.max(1, Number(opt('--rounds', SMOKE ? 2 : 10)))
const WARM = Number(opt('--warm', SMOKE ? 5 : 200))
const BUDGET_MS = Number(opt('--budget-s', SMOKE ? 30 : 120)) * 1000
const NATIVE_CMD = opt('--native-gateway-cmd')
const CONC = Number(opt('--conc', 64))
const OUT = opt('--out')
const log = (...a) => console.error(...a)

// ------------------------------------------------------------------------------- upstreams

function upstreamSpec(kind) {
  if (kind === 'rust') {
    if (!existsSync(RUST_SERVER)) {
      log('bench: building bench/rust-server (release)')
      const r = spawnSync('cargo', ['build', '--release', '--quiet', '--manifest-path', join(BENCH, 'rust-server', 'Cargo.toml')], { stdio: 'inherit' })
      if (r.status !== 0) throw new Error('cargo build of bench/rust-server failed')
    }
    return { command: RUST_SERVER, args: [] }
  }
  if (kind === 'node') return { command: process.execPath, args: [NODE_SERVER] }
  throw new Error(`unknown server ${kind} (rust, node)`)
}

// ------------------------------------------------------------------------------- contenders
//
// A contender: { id, start() -> { call(args) -> Promise<result>, pid?, close() } }. `tool` is the
// name to call: 'echo' direct, '<upstream>__echo' through sdk-gateway; through the native
// gateway, whichever listed tool ends in 'echo' after a separator.

async function connectClient(transport) {
  const client = new Client({ name: 'bench-gateway', version: '1.0.0' }, { capabilities: {} })
  await client.connect(transport)
  return client
}

function pickTool(tools, want) {
  const names = tools.map((t) => t.name)
  const found = names.find((n) => n === want) ?? names.find((n) => n.endsWith(want) && /[^A-Za-z0-9]$/.test(n.slice(0, -want.length)))
  if (!found) throw new Error(`no tool '${want}' among ${JSON.stringify(names.slice(0, 20))}`)
  return found
}

/** A gateway process reached over stdio, or started with --http and reached over HTTP. */
async function viaGateway(command, args, env = {}) {
  if (VIA === 'stdio') {
    const transport = new StdioClientTransport({ command, args, env: { ...getDefaultEnvironment(), ...env }, stderr: 'inherit' })
    const client = await connectClient(transport)
    return { client, pid: transport.pid, stop: async () => {} }
  }
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`gateway printed no 'listening <port>' within 20 s: ${out}`)), 20_000)
    child.stdout.on('data', (d) => {
      out += d
      // `listening <port>` (bench/sdk-gateway.mjs), or the URL `openclaw-mcp-native serve --http` prints.
      const m = out.match(/listening (\d+)/) ?? out.match(/^http:\/\/127\.0\.0\.1:(\d+)\//m)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`gateway exited (${code}) before listening: ${out}`))
    })
  })
  const client = await connectClient(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)))
  const exited = new Promise((r) => child.once('exit', r))
  return {
    client,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM')
      const t = setTimeout(() => child.kill('SIGKILL'), 3_000)
      await exited
      clearTimeout(t)
    },
  }
}

function session(client, tool, extra = {}) {
  return {
    call: (args) => client.callTool({ name: tool, arguments: args }),
    close: async () => {
      await client.close()
      await extra.stop?.()
    },
    pid: extra.pid,
  }
}

const directContender = (kind, spec) => ({
  id: 'direct',
  async start() {
    const transport = new StdioClientTransport({ ...spec, env: getDefaultEnvironment(), stderr: 'inherit' })
    const client = await connectClient(transport)
    return session(client, pickTool((await client.listTools()).tools, 'echo'), { pid: transport.pid })
  },
})

const sdkGatewayContender = (kind, configPath) => ({
  id: 'sdk-gateway',
  async start() {
    const g = await viaGateway(process.execPath, [SDK_GATEWAY, '--config', configPath, ...(VIA === 'http' ? ['--http', '0'] : [])])
    return session(g.client, pickTool((await g.client.listTools()).tools, `${kind}__echo`), g)
  },
})

// ---- NATIVE GATEWAY HOOK ---------------------------------------------------------------------
// (d) Fill in once `manager.serve()` exists. --native-gateway-cmd is a shell command line that
// starts the native gateway over the upstreams in {config} (replaced by the path of a JSON file
// `{ "servers": { "<kind>": { "command", "args" } } }`, the McpManager config shape and
// sdk-gateway's), e.g.
//   --native-gateway-cmd 'node examples/serve.mjs --config {config}'
// With --via stdio it must serve MCP on its stdin/stdout; with --via http, {http} is replaced by
// `--http 0` and it must print `listening <port>` and serve /mcp. It is run with `bash -c 'exec …'`.
const nativeGatewayContender = (kind, configPath) => ({
  id: 'native-gateway',
  async start() {
    const line = NATIVE_CMD.replaceAll('{config}', configPath).replaceAll('{http}', VIA === 'http' ? '--http 0' : '')
    const g = await viaGateway('bash', ['-c', `exec ${line}`])
    return session(g.client, pickTool((await g.client.listTools()).tools, 'echo'), g)
  },
})
// ------------------------------------------------------------------------------------------------

// ------------------------------------------------------------------------------- measuring

function stats(xs) {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  const pct = (p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]
  return { n: s.length, p50: pct(0.5), p99: pct(0.99), mean: xs.reduce((a, b) => a + b, 0) / xs.length, min: s[0], max: s.at(-1) }
}

function rssMb(pid) {
  try {
    const kb = Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1])
    return Math.round(kb / 102.4) / 10
  } catch {
    return null
  }
}

async function measure(kind) {
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-gateway-'))
  const spec = upstreamSpec(kind)
  const configPath = join(dir, 'gateway.json')
  writeFileSync(configPath, JSON.stringify({ servers: { [kind]: spec } }))
  const contenders = [directContender(kind, spec), sdkGatewayContender(kind, configPath)]
  if (NATIVE_CMD) contenders.push(nativeGatewayContender(kind, configPath))
  const sessions = []
  const samples = {}
  const deadline = Date.now() + BUDGET_MS
  let budgetHit = false
  try {
    for (const c of contenders) {
      const t0 = performance.now()
      const s = await c.start()
      sessions.push([c.id, s])
      samples[c.id] = { start: performance.now() - t0, lat: [] }
      // Warm-up, and a check of what comes back (outside the timed region).
      for (let i = 0; i < WARM; i++) await s.call({ text: 'warm' })
      const r = await s.call({ text: 'check' })
      // The native gateway wraps every result as untrusted content (the SDK gateway passes it on).
      const text = r?.content?.[0]?.text
      const ok = c.id === 'native-gateway' ? /\n---\ncheck\n<<<END_EXTERNAL_UNTRUSTED_CONTENT/.test(text ?? '') : text === 'check'
      if (!ok) throw new Error(`${c.id}: unexpected result ${JSON.stringify(r).slice(0, 200)}`)
    }
    const perRound = Math.ceil(CALLS / ROUNDS)
    for (let round = 0; round < ROUNDS && !budgetHit; round++) {
      // Alternate the order round by round so that drift hits every contender alike.
      const order = sessions.map((_, i) => sessions[(i + round) % sessions.length])
      for (const [id, s] of order) {
        const lat = samples[id].lat
        for (let i = 0; i < perRound && lat.length < CALLS; i++) {
          const t = performance.now()
          await s.call({ text: 'x' })
          lat.push(performance.now() - t)
        }
        if (Date.now() > deadline) budgetHit = true
      }
    }
    // Throughput: CONC calls in flight, CALLS per round, rounds alternating as above.
    for (let round = 0; CONC > 0 && round < Math.min(ROUNDS, 5); round++) {
      const order = sessions.map((_, i) => sessions[(i + round) % sessions.length])
      for (const [id, s] of order) {
        let next = 0
        const t = performance.now()
        await Promise.all(Array.from({ length: CONC }, async () => {
          while (next < CALLS) {
            next++
            await s.call({ text: 'x' })
          }
        }))
        ;(samples[id].tput ??= []).push(CALLS / ((performance.now() - t) / 1000))
      }
    }
    for (const [id, s] of sessions) samples[id].rssMb = s.pid ? rssMb(s.pid) : null
  } finally {
    await Promise.allSettled(sessions.map(([, s]) => s.close()))
    rmSync(dir, { recursive: true, force: true })
  }
  const result = { server: kind, via: VIA, budgetHit, contenders: {} }
  const median = (xs) => (xs?.length ? [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] : null)
  for (const [id, x] of Object.entries(samples)) result.contenders[id] = { startMs: x.start, ...stats(x.lat), callsPerS: median(x.tput), rssMb: x.rssMb }
  const base = result.contenders.direct
  const sdk = result.contenders['sdk-gateway']
  const native = result.contenders['native-gateway']
  const ratio = (a, b) => (a && b ? { p50: a.p50 / b.p50, p99: a.p99 / b.p99, callsPerS: a.callsPerS && b.callsPerS ? a.callsPerS / b.callsPerS : null } : null)
  result.ratios = {
    'sdk-gateway/direct': ratio(sdk, base),
    'native-gateway/direct': ratio(native, base),
    'native-gateway/sdk-gateway': ratio(native, sdk),
  }
  return result
}

// ------------------------------------------------------------------------------- main

const f = (x, d = 3) => (x == null ? '-' : x.toFixed(d))
const results = []
const started = Date.now()
for (const kind of SERVERS) {
  log(`bench: gateway, upstream ${kind}, via ${VIA}: ${CALLS} calls per contender in ${ROUNDS} rounds (warm-up ${WARM})`)
  const r = await measure(kind)
  results.push(r)
  console.log(`\nupstream ${kind}, client -> gateway via ${VIA}${r.budgetHit ? ' (time budget hit: fewer calls)' : ''}`)
  console.log(`contender        n      p50 ms   p99 ms   mean ms  calls/s@${CONC}  start ms  RSS MB (the process the client talks to)`)
  for (const [id, c] of Object.entries(r.contenders)) {
    console.log(`${(id === 'direct' ? 'direct (stdio)' : id).padEnd(16)} ${String(c.n).padEnd(6)} ${f(c.p50).padStart(7)}  ${f(c.p99).padStart(7)}  ${f(c.mean).padStart(7)}  ${f(c.callsPerS, 0).padStart(10)}  ${f(c.startMs, 0).padStart(8)}  ${c.rssMb ?? '-'}`)
  }
  for (const [name, x] of Object.entries(r.ratios)) if (x) console.log(`ratio ${name}: p50 ${f(x.p50, 2)}x, p99 ${f(x.p99, 2)}x, calls/s ${f(x.callsPerS, 2)}x`)
  if (!NATIVE_CMD) console.log('native-gateway: not measured (no --native-gateway-cmd; manager.serve() not there yet)')
}
const report = {
  when: new Date().toISOString(), seconds: (Date.now() - started) / 1000, smoke: SMOKE,
  machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, loadavg: os.loadavg() },
  options: { servers: SERVERS, via: VIA, calls: CALLS, rounds: ROUNDS, warm: WARM, conc: CONC, nativeGatewayCmd: NATIVE_CMD ?? null },
  results,
}
if (OUT) {
  writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`)
  log(`bench: wrote ${OUT}`)
}
