#!/usr/bin/env node
// Chaos and soak run (issue 12): one McpManager over several fault-server instances that crash,
// hang, freeze, emit garbage and answer slowly, plus a healthy one; random tool calls with random
// aborts and caller timeouts for the given time; then shutdown and the checks. Prints a JSON
// report (or writes it to --out) and a one-line summary last; exits 1 when a check fails.
// What is checked and why the thresholds are what they are: docs/robustness.md.
//
//   node scripts/stress.mjs [--minutes N | --seconds N] [--servers K] [--concurrency C]
//                           [--seed S] [--rate R] [--out FILE] [--addon PATH] [--quiet]
//                           [--grace-ms MS] [--max-rss-growth-mb MB] [--max-fd-growth N]
//   npm run stress -- --minutes 10

import { createRequire } from 'node:module'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const FAULT_SERVER = path.join(ROOT, '__test__', 'fixtures', 'fault-server.mjs')

// ------------------------------------------------------------------------------------ options
const USAGE = `usage: node scripts/stress.mjs [--minutes N | --seconds N] [--servers K] [--concurrency C]
       [--seed S] [--rate R] [--out FILE] [--addon PATH] [--quiet]
       [--grace-ms MS] [--max-rss-growth-mb MB] [--max-fd-growth N]`

function parseOptions(argv) {
  const o = {
    seconds: 60,
    servers: 5,
    concurrency: 64, // calls in flight: the chaotic servers keep many of them waiting for seconds
    seed: (Math.random() * 2 ** 32) >>> 0,
    rate: 200, // tool calls per second over all workers; 0: as fast as they settle
    out: undefined,
    addon: undefined,
    quiet: false,
    graceMs: 1000,
    maxRssGrowthMb: 48,
    maxFdGrowth: 10,
  }
  const numeric = {
    '--minutes': (v) => (o.seconds = v * 60),
    '--seconds': (v) => (o.seconds = v),
    '--servers': (v) => (o.servers = v),
    '--concurrency': (v) => (o.concurrency = v),
    '--seed': (v) => (o.seed = v >>> 0),
    '--rate': (v) => (o.rate = v),
    '--grace-ms': (v) => (o.graceMs = v),
    '--max-rss-growth-mb': (v) => (o.maxRssGrowthMb = v),
    '--max-fd-growth': (v) => (o.maxFdGrowth = v),
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--help' || a === '-h') {
      console.log(USAGE)
      process.exit(0)
    } else if (a === '--quiet') {
      o.quiet = true
    } else if (a === '--out' || a === '--addon') {
      const v = argv[++i]
      if (v === undefined) usage(`${a} needs a value`)
      o[a.slice(2)] = path.resolve(v)
    } else if (a in numeric) {
      const v = Number(argv[++i])
      if (!Number.isFinite(v) || v < 0) usage(`${a} needs a non-negative number`)
      numeric[a](v)
    } else {
      usage(`unknown argument ${a}`)
    }
  }
  o.servers = Math.floor(o.servers)
  o.concurrency = Math.max(1, Math.floor(o.concurrency))
  if (o.servers < 2) usage('--servers must be at least 2 (one healthy, one chaotic)')
  if (o.seconds <= 0) usage('the run needs a duration above 0')
  return o
}
function usage(why) {
  console.error(`stress: ${why}\n${USAGE}`)
  process.exit(2)
}

const opts = parseOptions(process.argv.slice(2))

// ------------------------------------------------------------------------------------ helpers
// mulberry32: every random choice of the run comes from --seed.
function prng(seed) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const rand = prng(opts.seed)
const between = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1))
function weighted(entries) {
  let total = 0
  for (const e of entries) total += e.w
  let r = rand() * total
  for (const e of entries) if ((r -= e.w) < 0) return e
  return entries[entries.length - 1]
}

const now = () => performance.now()
const MB = 1024 * 1024
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d

// V8's gc(), without needing --expose-gc on the command line: memory is compared after a full GC.
let gc = () => {}
try {
  v8.setFlagsFromString('--expose-gc')
  gc = vm.runInNewContext('gc')
} catch {}

function memory() {
  gc()
  const status = fs.readFileSync('/proc/self/status', 'utf8')
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN) * 1024
  return { rss: process.memoryUsage.rss(), rssAnon: kb('RssAnon'), heapUsed: process.memoryUsage().heapUsed }
}
const fdCount = () => fs.readdirSync('/proc/self/fd').length

const failures = []
function fail(check, detail) {
  const f = failures.find((x) => x.check === check)
  if (f) {
    f.count++
    if (f.examples.length < 5 && detail !== undefined) f.examples.push(detail)
  } else {
    failures.push({ check, count: 1, examples: detail === undefined ? [] : [detail] })
  }
}

// Everything the run must never see.
const unexpected = { unhandledRejections: 0, uncaughtExceptions: 0 }
process.on('unhandledRejection', (reason) => {
  unexpected.unhandledRejections++
  fail('unhandled rejection', String(reason?.stack ?? reason).slice(0, 500))
})
process.on('uncaughtException', (error) => {
  unexpected.uncaughtExceptions++
  fail('uncaught exception', String(error?.stack ?? error).slice(0, 500))
})

const say = (line) => opts.quiet || process.stderr.write(`stress: ${line}\n`)

// ------------------------------------------------------------------------------------ /proc
// Every process on the machine: pid, ppid, state, cmdline and whether it carries this run's
// marker (in its cmdline, or MCP_STRESS_RUN=<run id> in its environment, which every server and
// everything it starts inherits, even after being reparented to init).
function processTable(runId) {
  const table = new Map()
  const envMarker = Buffer.from(`\0MCP_STRESS_RUN=${runId}\0`)
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    let stat
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      continue // gone meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    let cmdline = ''
    let marked = false
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
      marked = cmdline.includes(runId)
    } catch {}
    if (!marked) {
      try {
        marked = Buffer.concat([Buffer.from('\0'), fs.readFileSync(`/proc/${pid}/environ`)]).includes(envMarker)
      } catch {}
    }
    table.set(pid, { pid, state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]), cmdline, marked })
  }
  return table
}

const ownCmdline = fs.readFileSync('/proc/self/cmdline', 'utf8').replaceAll('\0', ' ').trim()

// Processes this run left: descendants of this process (zombies included: unreaped children)
// and anything carrying the marker. The orphan guard (forked without exec, so its cmdline is
// ours) lives as long as this process by design and is reported apart.
function leftProcesses(runId) {
  const table = processTable(runId)
  const descends = (p) => {
    for (let hops = 0; p && p.ppid > 1 && hops < 64; hops++) {
      if (p.ppid === process.pid) return true
      p = table.get(p.ppid)
    }
    return false
  }
  const left = []
  const guards = []
  for (const p of table.values()) {
    if (p.pid === process.pid) continue
    const desc = descends(p)
    if (!desc && !p.marked) continue
    const entry = { pid: p.pid, ppid: p.ppid, pgid: p.pgid, state: p.state, cmdline: p.cmdline.slice(0, 200) }
    if (desc && p.ppid === process.pid && !p.marked && p.cmdline === ownCmdline && p.state !== 'Z') guards.push(entry)
    else left.push(entry)
  }
  return { left, guards }
}
const countMarked = (runId) => [...processTable(runId).values()].filter((p) => p.marked && p.pid !== process.pid).length

// ------------------------------------------------------------------------------------ servers
const runId = `mcpstress-${process.pid}-${opts.seed.toString(16)}-${Math.random().toString(36).slice(2, 8)}`
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `${runId}-`))

// Each chaotic server gets one of these, in turn; the first server is always the healthy one.
// toolTimeout is short on the chaotic ones so that many calls end by their deadline.
const PROFILES = {
  healthy: { toolTimeout: 10000, resources: true, flags: () => ['--resources'] },
  crashy: {
    toolTimeout: 3000,
    // Crashes per call and on its own, leaves a SIGTERM-proof grandchild in its group each time.
    flags: (i) => ['--chaos-crash', '0.003', '--chaos-die-ms', '20000', '--chaos-slow', '0.2', '--chaos-slow-ms', '1500',
      '--grandchild', path.join(tmp, `grandchild-${i}.pid`)],
  },
  hangy: {
    toolTimeout: 2500,
    // Never answers some calls, freezes (stops reading stdin), and only SIGKILL stops it.
    flags: () => ['--chaos-hang', '0.15', '--chaos-freeze', '0.02', '--chaos-freeze-ms', '4000',
      '--ignore-sigterm', '--ignore-stdin-close'],
  },
  garbage: {
    toolTimeout: 4000,
    resources: true,
    // Bad bytes around its answers, raw answers too deep or not UTF-8, now and then a crash.
    flags: () => ['--chaos-garbage', '0.3', '--raw-answers', '--resources', '--chaos-crash', '0.002'],
  },
  slow: {
    toolTimeout: 3000,
    // Slow to start and to answer (often beyond the deadline), chatty on stderr.
    flags: () => ['--chaos-slow', '0.5', '--chaos-slow-ms', '5000', '--latency', '20', '--init-delay', '300',
      '--stderr-chatter'],
  },
  mixed: {
    toolTimeout: 2000,
    flags: () => ['--chaos-crash', '0.004', '--chaos-hang', '0.05', '--chaos-slow', '0.1', '--chaos-freeze', '0.01',
      '--chaos-freeze-ms', '2000', '--chaos-garbage', '0.1', '--raw-answers', '--chaos-die-ms', '30000'],
  },
}
const CHAOTIC = ['crashy', 'hangy', 'garbage', 'slow', 'mixed']

const servers = []
for (let i = 0; i < opts.servers; i++) {
  const profile = i === 0 ? 'healthy' : CHAOTIC[(i - 1) % CHAOTIC.length]
  const p = PROFILES[profile]
  servers.push({
    index: i,
    name: `s${i}_${profile}`,
    prefix: `s${i}`,
    profile,
    healthy: profile === 'healthy',
    toolTimeout: p.toolTimeout,
    resources: Boolean(p.resources),
    args: [FAULT_SERVER, ...p.flags(i), '--chaos-seed', String((opts.seed + i * 7919) >>> 0), '--tag', runId],
    tools: new Map(), // tool name -> the last AgentTool seen for it
    stats: { calls: 0, ok: 0, errors: {} },
  })
}
const shutdownGraceMs = 1000
const connectTimeout = 5000

function serverConfig(list) {
  const config = { servers: {} }
  for (const s of list) {
    config.servers[s.name] = {
      command: process.execPath,
      args: s.args,
      env: { MCP_STRESS_RUN: runId },
      toolPrefix: s.prefix,
      timeout: connectTimeout,
      toolTimeout: s.toolTimeout,
      restartOnCrash: true,
      maxRestarts: 1000,
      resources: s.resources,
    }
  }
  return config
}

// ------------------------------------------------------------------------------------ the addon
const require = createRequire(import.meta.url)
const addonPath = opts.addon ?? path.join(ROOT, 'index.js')
const mcp = require(addonPath)

// ------------------------------------------------------------------------------------ logging
const log = { lines: { debug: 0, info: 0, warn: 0, error: 0 }, events: {}, examples: {} }
const LOG_EVENTS = [
  ['connected', /' connected \(/],
  ['failedToStart', /failed to start/],
  ['exitedUnexpectedly', /exited unexpectedly/],
  ['restarting', /restarting in/],
  ['stopped', /' stopped$/],
  ['stderr', /' stderr: /],
  ['suspicious', /suspicious patterns/],
  ['resources', /resource/i],
]
function logger(level) {
  return (message) => {
    log.lines[level]++
    if (level === 'debug') return
    const text = String(message)
    const event = LOG_EVENTS.find(([, re]) => re.test(text))?.[0] ?? `other ${level}`
    log.events[event] = (log.events[event] ?? 0) + 1
    const ex = (log.examples[event] ??= [])
    if (ex.length < 3) ex.push(text.slice(0, 300))
  }
}
const mcpLogger = { debug: logger('debug'), info: logger('info'), warn: logger('warn'), error: logger('error') }

// ------------------------------------------------------------------------------------ calls
const BIG = 'x'.repeat(256 * 1024)
const ODD_SIGNALS = [
  () => 'not a signal',
  () => 42,
  () => ({ aborted: 'yes' }),
  () => ({ aborted: 1 }),
  () => ({ get aborted() { throw new Error('aborted getter throws') } }),
  () => ({ aborted: false, addEventListener() { throw new Error('addEventListener throws') } }),
]

// What to call on a server, with the arguments and how to check a successful answer.
function chooseCall(server, token) {
  const healthy = server.healthy
  const menu = [
    { w: 30, tool: 'echo', args: () => ({ text: token }), check: (t) => t.includes(token) },
    // Large payloads stay at 256 KB: wrapping runs on the runtime's worker threads and a debug
    // build takes ~0.2 s per MB, which would show up as other calls' lateness.
    { w: healthy ? 2 : 3, tool: 'echo', big: true, args: () => ({ text: token + BIG.slice(0, between(32, healthy ? 128 : 256) * 1024) }), check: (t) => t.includes(token) },
    { w: 8, tool: 'add', args: () => { const a = between(0, 1e6); const b = between(0, 1e6); return { a, b, sum: String(a + b) } }, check: (t, a) => t.includes(a.sum) },
    { w: 15, tool: 'slow', args: () => ({ ms: between(0, healthy ? 1000 : 3000) }), check: (t, a) => t.includes(`slept ${a.ms} ms`) },
    { w: healthy ? 0 : 8, tool: 'hang', args: () => ({}) },
    { w: 4, tool: 'fail', args: () => ({}), toolError: true },
    { w: 3, tool: 'is_error', args: () => ({}), toolError: true },
    { w: 3, tool: 'big', args: () => ({ bytes: between(0, 256) * 1024 }), check: (t, a) => t.length >= a.bytes },
    { w: 2, tool: 'mixed', args: () => ({}), check: (t) => t.includes('first') && t.includes('last') },
    { w: 2, tool: 'image', args: () => ({}) },
    { w: 2, tool: 'inject', args: () => ({}) },
    { w: 2, tool: 'schema', args: () => ({ mode: rand() < 0.5 ? 'fast' : 'slow', count: between(1, 9), tags: ['a', token] }), check: (t) => t.includes(token) },
    { w: server.profile === 'crashy' || server.profile === 'mixed' ? 0.5 : 0, tool: 'exit', args: () => ({ code: between(0, 3) }) },
    { w: healthy ? 0 : 2, tool: 'deep', args: () => ({ depth: between(100, 400) }) },
    { w: healthy ? 0 : 2, tool: 'bad_utf8', args: () => ({}) },
    // Arguments JSON cannot carry: an error result at once, never a throw.
    { w: 1, tool: 'echo', args: () => { const o = { text: token }; o.self = o; return o }, badArgs: true },
  ].filter((m) => m.w > 0 && server.tools.has(m.tool))
  if (menu.length === 0) return null
  const m = weighted(menu)
  const { sum, ...args } = m.args()
  return { ...m, agentTool: server.tools.get(m.tool), args, expected: { ...args, sum } }
}

const totals = {
  started: 0,
  settled: 0,
  ok: 0,
  byClass: {},
  watchdog: 0, // still pending at deadline + grace when looked at (the worker moves on)
  syncThrows: 0,
  rejections: 0,
  notPromise: 0,
  malformedResults: 0,
  wrongAnswers: 0,
  spuriousAborts: 0,
  earlyTimeouts: 0,
  healthyFailures: 0,
  updates: 0,
  updatesAfterSettle: 0,
  afterShutdown: { started: 0, settled: 0 },
}
// Settle time beyond the call's deadline (the earlier of its abort and start + toolTimeout), for
// calls that were still running at their deadline. Buckets in ms.
const LATE_EDGES = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, Infinity]
const late = { counts: new Array(LATE_EDGES.length).fill(0), max: -Infinity, worst: [] }
function recordLate(call, ms) {
  if (ms > late.max) late.max = ms
  late.counts[LATE_EDGES.findIndex((e) => ms <= e)]++
  if (late.worst.length < 5 || ms > late.worst[late.worst.length - 1].lateMs) {
    late.worst.push({
      lateMs: round(ms), server: call.server.name, tool: call.tool, signal: call.signalKind, result: call.resultClass,
      onUpdate: call.onUpdate, startedAtSeconds: round((call.start - loadStart) / 1000, 2), elapsedMs: round(now() - call.start), toolTimeout: call.server.toolTimeout,
    })
    late.worst.sort((a, b) => b.lateMs - a.lateMs)
    late.worst.length = Math.min(late.worst.length, 5)
  }
}
function latePercentile(q) {
  const n = late.counts.reduce((a, b) => a + b, 0)
  let seen = 0
  for (let i = 0; i < late.counts.length; i++) {
    seen += late.counts[i]
    if (seen >= q * n) return LATE_EDGES[i]
  }
  return 0
}

const pending = new Map()
let loadStart = 0 // performance.now() when the load began
let nextId = 1
let shutdownStarted = false

function classify(text) {
  if (/is not ready/.test(text)) return 'notReady'
  if (/Request timed out/.test(text)) return 'timeout'
  if (/aborted by the caller/i.test(text)) return 'aborted'
  if (/Connection closed/.test(text)) return 'closed'
  if (/bad input|tool reported an error/.test(text)) return 'toolError'
  if (/argument|JSON|circular|cyclic/i.test(text)) return 'badArgs'
  if (/MCP error -32603/.test(text)) return 'protocol'
  if (/MCP error/.test(text)) return 'serverError'
  return 'other'
}

function startCall(server, { afterShutdown = false } = {}) {
  const id = nextId++
  const token = `tok-${id}-${Math.floor(rand() * 2 ** 32).toString(36)}`
  const choice = chooseCall(server, token)
  if (!choice) return null
  const start = now()
  const call = {
    id,
    server,
    tool: choice.tool,
    start,
    toolDeadline: start + server.toolTimeout,
    abortAt: Infinity, // when the signal actually fired
    plannedAbort: Infinity,
    signalKind: 'none',
    signal: undefined,
    settled: false,
    resultClass: undefined,
    onUpdate: false,
  }
  // The caller's side: nothing, an abort at a random time, a timeout signal, an already
  // aborted signal, or something that is not an AbortSignal (which counts as none).
  const r = rand()
  const upTo = Math.round(server.toolTimeout * 1.2)
  if (r < 0.05) {
    const c = new AbortController()
    c.abort()
    call.signal = c.signal
    call.signalKind = 'pre-aborted'
    call.abortAt = call.plannedAbort = start
  } else if (r < 0.3) {
    const c = new AbortController()
    const ms = between(0, upTo)
    call.signal = c.signal
    call.signalKind = 'abort'
    call.plannedAbort = start + ms
    call.abortTimer = setTimeout(() => {
      call.abortAt = now()
      c.abort()
    }, ms)
  } else if (r < 0.5) {
    const ms = between(1, upTo)
    call.signal = AbortSignal.timeout(ms)
    call.signalKind = 'timeout'
    call.plannedAbort = start + ms
    call.signal.addEventListener('abort', () => (call.abortAt = now()), { once: true })
  } else if (r < 0.53) {
    call.signal = ODD_SIGNALS[between(0, ODD_SIGNALS.length - 1)]()
    call.signalKind = 'odd'
  }
  const onUpdate = rand() < 0.3
    ? () => {
      totals.updates++
      if (call.settled) {
        totals.updatesAfterSettle++
        fail('onUpdate called after the call settled', `${server.name}/${call.tool}`)
      }
    }
    : undefined
  call.onUpdate = Boolean(onUpdate)

  totals.started++
  if (afterShutdown) totals.afterShutdown.started++
  server.stats.calls++
  pending.set(id, call)
  let promise
  try {
    promise = choice.agentTool.execute(`stress-${id}`, choice.args, call.signal, onUpdate)
  } catch (error) {
    totals.syncThrows++
    fail('execute threw synchronously', `${server.name}/${call.tool}: ${error?.message ?? error}`)
    promise = Promise.resolve({ content: [{ type: 'text', text: `threw: ${error?.message}` }], details: { error: true } })
  }
  if (!(promise instanceof Promise)) {
    totals.notPromise++
    fail('execute did not return a Promise', `${server.name}/${call.tool}`)
    promise = Promise.resolve(promise)
  }
  call.promise = promise.then(
    (result) => settle(call, choice, result, afterShutdown),
    (error) => {
      totals.rejections++
      fail('execute rejected', `${server.name}/${call.tool}: ${error?.message ?? error}`)
      settle(call, choice, undefined, afterShutdown)
    },
  )
  return call
}

function settle(call, choice, result, afterShutdown) {
  const at = now()
  call.settled = true
  pending.delete(call.id)
  clearTimeout(call.abortTimer)
  clearTimeout(call.watchdogTimer)
  totals.settled++
  if (afterShutdown) totals.afterShutdown.settled++
  const server = call.server

  // Shape: exactly what the README promises.
  const text = result?.content?.[0]?.text
  if (!result || !Array.isArray(result.content) || typeof text !== 'string' || typeof result.details !== 'object' || result.details === null) {
    totals.malformedResults++
    fail('result of the wrong shape', `${server.name}/${call.tool}: ${JSON.stringify(result)?.slice(0, 200)}`)
    call.resultClass = 'malformed'
  } else if (result.details.error === true) {
    call.resultClass = classify(text)
  } else if (result.details.externalContent?.untrusted === true) {
    call.resultClass = 'ok'
    if (choice.check && !choice.check(text, choice.expected)) {
      totals.wrongAnswers++
      fail('a successful result is not the answer to its own call', `${server.name}/${call.tool}: ${text.slice(0, 300)}`)
    }
  } else {
    totals.malformedResults++
    call.resultClass = 'malformed'
    fail('result neither error nor wrapped external content', `${server.name}/${call.tool}`)
  }
  const cls = call.resultClass
  totals.byClass[cls] = (totals.byClass[cls] ?? 0) + 1
  if (cls === 'ok') {
    totals.ok++
    server.stats.ok++
  } else {
    server.stats.errors[cls] = (server.stats.errors[cls] ?? 0) + 1
  }

  if (afterShutdown && cls === 'ok') fail('a call after shutdown() succeeded', `${server.name}/${call.tool}`)

  // Consistency: aborted only when the caller aborted, timed out only after toolTimeout.
  const aborted = call.signal instanceof AbortSignal && call.signal.aborted
  if (cls === 'aborted' && !aborted) {
    totals.spuriousAborts++
    fail('"aborted" result for a call whose signal did not abort', `${server.name}/${call.tool} (${call.signalKind})`)
  }
  if (cls === 'timeout' && at - call.start < server.toolTimeout - 20) {
    totals.earlyTimeouts++
    fail('timed out before toolTimeout', `${server.name}/${call.tool} after ${round(at - call.start)} ms of ${server.toolTimeout}`)
  }
  if (server.healthy && !afterShutdown && !shutdownStarted) {
    const fine = cls === 'ok' || (cls === 'toolError' && choice.toolError) || (cls === 'badArgs' && choice.badArgs) || (cls === 'aborted' && aborted)
    if (!fine) {
      totals.healthyFailures++
      fail('a call to the healthy server failed', `${call.tool} (${call.signalKind}): ${text?.slice(0, 300)}`)
    }
  }

  // Settle time beyond the deadline, for calls still running at their deadline.
  const deadline = Math.min(call.toolDeadline, call.abortAt)
  if (at >= deadline) recordLate(call, at - deadline)
}

// ------------------------------------------------------------------------------------ the run
// Resolves once every pending call has settled, or at the latest deadline + grace of those
// still pending (what is left then is judged by the caller).
async function drain() {
  const list = [...pending.values()]
  if (list.length === 0) return
  const latest = Math.max(now(), ...list.map((c) => Math.min(c.toolDeadline, c.plannedAbort)))
  let timer
  await Promise.race([
    Promise.all(list.map((c) => c.promise)),
    new Promise((r) => (timer = setTimeout(r, latest + opts.graceMs - now()))),
  ])
  clearTimeout(timer)
}

function refreshTools(manager) {
  const t0 = now()
  const tools = manager.getAgentTools()
  const ms = now() - t0
  for (const tool of tools) {
    const m = /^mcp_(s\d+)_(.+)$/.exec(tool.name)
    const server = m && servers.find((s) => s.prefix === m[1])
    if (server) server.tools.set(m[2], tool)
  }
  return ms
}

// A throw-away manager first, so that what the addon sets up once per process (its runtime,
// the orphan guard, the promise bridge) is in the baseline and not counted as growth.
async function prewarm() {
  const s = { ...servers[0], name: 'prewarm', prefix: 'pw', tools: new Map() }
  const m = new mcp.McpManager(serverConfig([s]), {})
  await m.start()
  const echo = m.getAgentTools().find((t) => t.name === 'mcp_pw_echo')
  if (!echo) throw new Error('the pre-warm server did not come up: is the addon built?')
  const r = await echo.execute('prewarm', { text: 'hello' })
  if (r.details?.error) throw new Error(`pre-warm call failed: ${r.content[0].text}`)
  await m.shutdown()
}

async function main() {
  const t0 = now()
  const startedAt = new Date().toISOString()
  const report = {
    tool: 'scripts/stress.mjs',
    startedAt,
    command: `node scripts/stress.mjs ${process.argv.slice(2).join(' ')}`.trim(),
    options: { ...opts },
    addon: { path: addonPath, nativeVersion: mcp.nativeVersion?.() },
    node: process.version,
    runId,
  }
  const memStart = memory()
  say(`seed ${opts.seed}, ${opts.servers} servers, concurrency ${opts.concurrency}, ${opts.seconds} s, rate ${opts.rate || 'unlimited'}/s`)

  await prewarm()
  const memBase = memory()
  const fdBase = fdCount()

  const checked = mcp.validateMcpConfig(serverConfig(servers))
  if (!checked.success) throw new Error(`config: ${checked.error}`)
  const manager = new mcp.McpManager(checked.data, { logger: mcpLogger, shutdownGraceMs })
  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()

  const tStart = now()
  await manager.start()
  const startMs = now() - tStart
  refreshTools(manager)
  if (servers[0].tools.size === 0) throw new Error(`the healthy server did not start: ${JSON.stringify(manager.getStatus())}`)
  const tLoad = now()
  loadStart = tLoad

  // Sampling (memory, fds, statuses, live server processes) while the calls run.
  const samples = { rssPeak: 0, rssAnonPeak: 0, fdPeak: 0, markedPeak: 0, getAgentToolsMaxMs: 0, statuses: {} }
  const readyNow = new Set(servers.map((s) => s.name))
  const sample = () => {
    const rss = process.memoryUsage.rss()
    samples.rssPeak = Math.max(samples.rssPeak, rss)
    const anon = Number(/^RssAnon:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024
    samples.rssAnonPeak = Math.max(samples.rssAnonPeak, anon)
    samples.fdPeak = Math.max(samples.fdPeak, fdCount())
    readyNow.clear()
    for (const st of manager.getStatus()) {
      if (st.status === 'ready') readyNow.add(st.name)
      const per = (samples.statuses[st.name] ??= {})
      per[st.status] = (per[st.status] ?? 0) + 1
      if (st.name === servers[0].name && st.status !== 'ready' && !shutdownStarted) {
        fail('the healthy server was not ready', `${st.status} at ${round((now() - tLoad) / 1000)} s`)
      }
    }
  }
  let sampleCount = 0
  const sampler = setInterval(() => {
    sample()
    if (++sampleCount % 4 === 0) samples.markedPeak = Math.max(samples.markedPeak, countMarked(runId))
  }, 500)
  const timeline = [] // [seconds, rss MB, rssAnon MB, fds, live server processes]
  const progress = setInterval(() => {
    const m = process.memoryUsage.rss()
    const anon = Number(/^RssAnon:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024
    timeline.push([Math.round((now() - tLoad) / 1000), round(m / MB), round(anon / MB), fdCount(), countMarked(runId)])
    say(`${Math.round((now() - tLoad) / 1000)} s: ${totals.started} calls, ${pending.size} pending, ok ${totals.ok}, rss ${round(m / MB)} MB, fds ${fdCount()}, restarts ${log.events.restarting ?? 0}, failures ${failures.length}`)
  }, Math.max(5_000, Math.min(60_000, opts.seconds * 100)))

  // The load: C workers, each with one call at a time, paced to --rate overall. Memory is
  // compared at two quiet points, with the servers up and no call in flight: after the warm-up
  // (25% of the run, 15..60 s: the allocator's arenas and V8's heap take that long to reach
  // their working size) and at the end of the load. Workers wait while `paused` is set.
  let stopping = false
  let paused = null // a promise workers wait on
  let resume
  let stop
  const stopped = new Promise((r) => (stop = r))
  const endTimer = setTimeout(() => stop('time'), opts.seconds * 1000)
  const warmMs = Math.min(60_000, Math.max(15_000, opts.seconds * 250)) // 25% of the run, 15..60 s
  let warmTimer
  const warmDue = new Promise((r) => (warmTimer = setTimeout(r, warmMs)))
  async function quietPoint() {
    paused = new Promise((r) => (resume = r))
    await drain()
    const point = { atSeconds: round((now() - tLoad) / 1000), ...memory(), fd: fdCount(), pendingLeft: pending.size }
    return point
  }
  let interrupted = false
  process.once('SIGINT', () => {
    interrupted = true
    say('SIGINT: ending the run early (again to kill)')
    stop('SIGINT')
  })
  const interval = opts.rate > 0 ? 1000 / opts.rate : 0
  let nextSlot = now()
  let lastRefresh = now()
  let resourceOp = null
  const resourceStats = { started: 0, settled: 0, maxMs: 0, late: 0 }
  // getResourceContext reads each ready server's list and resources one after another, each
  // bounded by that server's `timeout`: 1 list + 5 reads per server with resources.
  const resourceBound = servers.filter((s) => s.resources).length * 6 * connectTimeout

  async function worker() {
    while (!stopping) {
      if (paused) {
        await paused
        continue
      }
      if (interval) {
        nextSlot = Math.max(nextSlot + interval, now())
        const wait = nextSlot - now()
        if (wait >= 1) await new Promise((r) => setTimeout(r, wait))
        if (stopping || paused) continue
      }
      if (now() - lastRefresh > 1000) {
        lastRefresh = now()
        samples.getAgentToolsMaxMs = Math.max(samples.getAgentToolsMaxMs, refreshTools(manager))
      }
      if (!resourceOp && rand() < 0.01) {
        resourceStats.started++
        const t = now()
        resourceOp = manager.getResourceContext().then(
          (text) => {
            if (typeof text !== 'string') fail('getResourceContext did not resolve a string', typeof text)
          },
          (e) => fail('getResourceContext rejected', String(e?.message ?? e)),
        ).finally(() => {
          const ms = now() - t
          resourceStats.settled++
          resourceStats.maxMs = Math.max(resourceStats.maxMs, ms)
          if (ms > resourceBound + opts.graceMs) resourceStats.late++
          resourceOp = null
        })
      }
      // Mostly servers that are up (calls to the others fail at once and would crowd them out).
      const known = servers.filter((s) => s.tools.size > 0) // never empty: the healthy one
      const up = known.filter((s) => readyNow.has(s.name))
      const candidates = up.length > 0 && rand() < 0.85 ? up : known
      const server = candidates[between(0, candidates.length - 1)]
      const call = startCall(server)
      if (!call) continue
      // Wait for the call, but never past its deadline + grace: a call that does not settle
      // must not take its worker with it (it stays in `pending` and is judged at the end).
      const bound = Math.min(call.toolDeadline, call.plannedAbort) + opts.graceMs - now()
      await Promise.race([
        call.promise,
        new Promise((r) => {
          call.watchdogTimer = setTimeout(() => {
            if (!call.settled) totals.watchdog++
            r()
          }, Math.max(0, bound))
        }),
      ])
    }
  }
  const workers = Array.from({ length: opts.concurrency }, worker)

  let warm = null
  if ((await Promise.race([warmDue, stopped])) === undefined) {
    warm = await quietPoint()
    say(`warm-up done at ${warm.atSeconds} s: rssAnon ${round(warm.rssAnon / MB)} MB, fds ${warm.fd}`)
    const r = resume
    paused = null
    r()
  }
  clearTimeout(warmTimer)
  const why = await stopped
  clearTimeout(endTimer)
  const runSeconds = (now() - tLoad) / 1000
  const memEndRun = await quietPoint()
  stopping = true
  resume()
  paused = null
  const fdEndRun = memEndRun.fd
  const liveBeforeShutdown = countMarked(runId)

  // Shutdown with calls in flight: one random call per worker, started right before it, and
  // shutdown() called twice at once (idempotent).
  for (let i = 0; i < opts.concurrency; i++) {
    const known = servers.filter((s) => s.tools.size > 0)
    startCall(known[between(0, known.length - 1)])
  }
  const pendingAtShutdown = pending.size
  shutdownStarted = true
  const tShut = now()
  const shut = await Promise.allSettled([manager.shutdown(), manager.shutdown()])
  const shutdownMs = now() - tShut
  for (const s of shut) if (s.status === 'rejected') fail('shutdown rejected', String(s.reason))
  const afterShutdownScan = leftProcesses(runId)

  // Calls after shutdown: each settles at once with an error.
  for (const server of servers) {
    const call = startCall(server, { afterShutdown: true })
    if (call) call.toolDeadline = call.start // expected at once
  }

  // Every call must settle: wait for the rest, up to the latest deadline + grace.
  await drain()
  let boundTimer
  const unsettled = [...pending.values()].map((c) => ({
    server: c.server.name, tool: c.tool, signal: c.signalKind, ageMs: Math.round(now() - c.start),
  }))
  for (const u of unsettled) fail('call never settled', u)
  if (resourceOp) {
    await Promise.race([resourceOp, new Promise((r) => (boundTimer = setTimeout(r, resourceBound + opts.graceMs)))])
    clearTimeout(boundTimer)
  }
  await Promise.race([Promise.all(workers), new Promise((r) => (boundTimer = setTimeout(r, opts.graceMs)))])
  clearTimeout(boundTimer)

  clearInterval(sampler)
  clearInterval(progress)
  loop.disable()
  const memEnd = memory()
  const fdEnd = fdCount()
  const finalScan = leftProcesses(runId)

  // Leave nothing behind whatever happened: kill what this run left (by pid; all carry the marker
  // or descend from this process), after recording it.
  for (const p of finalScan.left) {
    if (p.state === 'Z') continue
    try {
      process.kill(p.pid, 'SIGKILL')
    } catch {}
  }
  fs.rmSync(tmp, { recursive: true, force: true })

  // ---------------------------------------------------------------- checks
  const grace = opts.graceMs
  if (totals.started !== totals.settled) fail('calls started != settled', `${totals.started} started, ${totals.settled} settled`)
  if (resourceStats.started !== resourceStats.settled) fail('getResourceContext never settled', resourceStats)
  if (resourceStats.late > 0) fail('getResourceContext beyond its bound', `${resourceStats.late} (max ${round(resourceStats.maxMs)} ms, bound ${resourceBound} ms)`)
  if (late.max > grace) fail(`a call settled more than ${grace} ms after its deadline`, late.worst)
  const shutdownBound = 2 * shutdownGraceMs + grace
  if (shutdownMs > shutdownBound) fail('shutdown() took longer than 2 x shutdownGraceMs + grace', `${round(shutdownMs)} ms > ${shutdownBound} ms`)
  if (afterShutdownScan.left.length > 0) fail('processes left when shutdown() resolved', afterShutdownScan.left)
  if (finalScan.left.length > 0) fail('processes left at the end', finalScan.left)
  if (finalScan.guards.length > 1) fail('more than one orphan guard', finalScan.guards)
  // Each server is one process, the crashy ones two (their grandchild); a crashed server's group
  // is reaped before its restart, so more than twice the servers at once means they pile up.
  if (samples.markedPeak > 2 * servers.length) fail('server processes piled up during the run', `${samples.markedPeak} at once for ${servers.length} servers`)
  const fdGrowth = fdEnd - fdBase
  if (fdGrowth > opts.maxFdGrowth) fail(`fd growth over ${opts.maxFdGrowth}`, `${fdBase} -> ${fdEnd}`)
  const rssGrowth = warm ? memEndRun.rssAnon - warm.rssAnon : null
  if (rssGrowth !== null && rssGrowth > opts.maxRssGrowthMb * MB) {
    fail(`anonymous RSS grew over ${opts.maxRssGrowthMb} MB after warm-up`, `${round(warm.rssAnon / MB)} -> ${round(memEndRun.rssAnon / MB)} MB`)
  }
  if (totals.started === 0 || totals.ok === 0) fail('no successful call at all', totals)

  const pass = failures.length === 0
  const loopDelay = { maxMs: round(loop.max / 1e6), p99Ms: round(loop.percentile(99) / 1e6) }
  Object.assign(report, {
    pass,
    ended: why,
    interrupted,
    durationSeconds: round(runSeconds),
    totalSeconds: round((now() - t0) / 1000),
    servers: servers.map((s) => ({
      name: s.name, profile: s.profile, toolTimeout: s.toolTimeout,
      flags: s.args.slice(1).filter((a) => a !== runId && a !== '--tag' && !a.startsWith(tmp)).join(' '),
      calls: s.stats.calls, ok: s.stats.ok, errors: s.stats.errors, statusSamples: samples.statuses[s.name] ?? {},
    })),
    startMs: round(startMs),
    calls: {
      started: totals.started,
      settled: totals.settled,
      unsettled: unsettled.length,
      unsettledCalls: unsettled.slice(0, 20),
      ok: totals.ok,
      byResult: totals.byClass,
      pendingAtShutdown,
      afterShutdown: totals.afterShutdown,
      stillPendingAtDeadlinePlusGrace: totals.watchdog,
      syncThrows: totals.syncThrows,
      rejections: totals.rejections,
      malformedResults: totals.malformedResults,
      wrongAnswers: totals.wrongAnswers,
      spuriousAborts: totals.spuriousAborts,
      earlyTimeouts: totals.earlyTimeouts,
      healthyFailures: totals.healthyFailures,
      progressUpdates: totals.updates,
      updatesAfterSettle: totals.updatesAfterSettle,
      perSecond: round(totals.started / runSeconds),
    },
    beyondDeadline: {
      graceMs: grace,
      maxMs: late.max === -Infinity ? null : round(late.max),
      p50Ms: latePercentile(0.5),
      p99Ms: latePercentile(0.99),
      callsAtDeadline: late.counts.reduce((a, b) => a + b, 0),
      histogramMs: Object.fromEntries(LATE_EDGES.map((e, i) => [`<=${e}`, late.counts[i]])),
      worst: late.worst,
    },
    resourceContext: { ...resourceStats, maxMs: round(resourceStats.maxMs), boundMs: resourceBound },
    unexpected,
    memoryMB: {
      note: 'rssAnon (anonymous pages) is what the growth check uses; rss also counts the addon file pages',
      start: mb(memStart),
      baseline: mb(memBase),
      warm: warm && { atSeconds: warm.atSeconds, ...mb(warm) },
      endOfLoad: { atSeconds: memEndRun.atSeconds, ...mb(memEndRun) },
      end: mb(memEnd),
      peak: { rss: round(samples.rssPeak / MB), rssAnon: round(samples.rssAnonPeak / MB) },
      growthAfterWarmup: rssGrowth === null ? null : round(rssGrowth / MB),
      growthOverRun: round((memEnd.rssAnon - memBase.rssAnon) / MB),
      maxGrowthMB: opts.maxRssGrowthMb,
      timeline: { columns: ['s', 'rss', 'rssAnon', 'fds', 'serverProcesses'], rows: timeline },
    },
    fds: { baseline: fdBase, endOfLoad: fdEndRun, peak: samples.fdPeak, end: fdEnd, growth: fdGrowth, maxGrowth: opts.maxFdGrowth },
    processes: {
      liveServerProcessesPeak: samples.markedPeak,
      liveBeforeShutdown,
      leftWhenShutdownResolved: afterShutdownScan.left,
      leftAtEnd: finalScan.left,
      orphanGuards: finalScan.guards.length,
    },
    shutdown: { ms: round(shutdownMs), boundMs: shutdownBound, shutdownGraceMs },
    getAgentToolsMaxMs: round(samples.getAgentToolsMaxMs, 2),
    eventLoopDelay: loopDelay,
    log,
    failures,
  })

  const text = JSON.stringify(report, null, 2)
  if (opts.out) {
    fs.mkdirSync(path.dirname(opts.out), { recursive: true })
    fs.writeFileSync(opts.out, `${text}\n`)
    console.log(`stress: report written to ${path.relative(process.cwd(), opts.out) || opts.out}`)
  } else {
    console.log(text)
  }
  for (const f of failures) console.log(`stress: FAIL ${f.check} (${f.count}x): ${JSON.stringify(f.examples).slice(0, 600)}`)
  const leftCount = finalScan.left.length + afterShutdownScan.left.length
  console.log(
    `stress: ${pass ? 'PASS' : 'FAIL'} ${round(runSeconds)} s seed=${opts.seed} servers=${opts.servers} concurrency=${opts.concurrency}: ` +
      `calls ${totals.started} started/${totals.settled} settled (ok ${totals.ok}, ${Object.entries(totals.byClass).filter(([k]) => k !== 'ok').map(([k, v]) => `${k} ${v}`).join(', ')}), ` +
      `max beyond deadline ${late.max === -Infinity ? '-' : round(late.max)} ms (grace ${grace}), ` +
      `unhandled ${unexpected.unhandledRejections + unexpected.uncaughtExceptions}, ` +
      `rssAnon ${mb(memBase).rssAnon}->${mb(memEnd).rssAnon} MB (peak rss ${round(samples.rssPeak / MB)}, after warm-up ${rssGrowth === null ? '-' : `${rssGrowth >= 0 ? '+' : ''}${round(rssGrowth / MB)}`} MB), ` +
      `fds ${fdGrowth >= 0 ? '+' : ''}${fdGrowth}, restarts ${log.events.restarting ?? 0}, shutdown ${Math.round(shutdownMs)} ms, ` +
      `left processes ${leftCount}${failures.length ? `, ${failures.length} failed check(s)` : ''}`,
  )
  process.exitCode = pass ? 0 : 1

  // After shutdown nothing may keep Node alive: the process must now exit by itself.
  setTimeout(() => {
    console.log(`stress: FAIL the process did not exit by itself 10 s after shutdown; alive: ${process.getActiveResourcesInfo().join(', ')}`)
    process.exit(1)
  }, 10_000).unref()
}

function mb(m) {
  return { rss: round(m.rss / MB), rssAnon: round(m.rssAnon / MB), heapUsed: round(m.heapUsed / MB) }
}

main().catch((error) => {
  console.error(`stress: the harness itself failed: ${error?.stack ?? error}`)
  fs.rmSync(tmp, { recursive: true, force: true })
  process.exit(1)
})
