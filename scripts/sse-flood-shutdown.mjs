#!/usr/bin/env node
// Repeats the hostile legacy SSE flood case of __test__/hostile-servers.spec.ts many times in one
// process: a manager calls `sse_endless` (events forever, never the answer) on
// __test__/fixtures/hostile-http.mjs, the call ends at its deadline, 8 MiB more arrive, then
// shutdown(); the peer must see the client close the stream within 2 s. A case that flakes one
// run in a few needs rounds, not one run, to tell a fix from luck.
//
//   node scripts/sse-flood-shutdown.mjs [--rounds N] [--addon PATH]
//
// Prints one line per round and a summary; exits 1 when any round's stream was not closed by the
// client in time. On such a round it prints the server process's CPU use and the sockets
// (`top`, `ss`), which tell a client that did not close from a peer that did not notice.

import { execFileSync, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { opt, repo } from '../bench/lib/cli.mjs'

const CLOSE_BOUND_MS = 2_000
const rounds = Number(opt('--rounds', '20'))
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`sse-flood-shutdown: --rounds must be a positive integer, not ${opt('--rounds')}`)
  process.exit(2)
}
const native = createRequire(import.meta.url)(resolve(opt('--addon', resolve(repo, 'index.js'))))

const peer = spawn(process.execPath, [resolve(repo, '__test__/fixtures/hostile-http.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] })
const events = []
let waiters = []
let pending = ''
peer.stdout.on('data', (chunk) => {
  pending += chunk
  for (let i; (i = pending.indexOf('\n')) >= 0; pending = pending.slice(i + 1)) {
    let ev
    try {
      ev = JSON.parse(pending.slice(0, i))
    } catch {
      continue
    }
    ev.at = performance.now()
    events.push(ev)
    for (const w of waiters) w()
  }
})

/** The first event matching `pred`, or null after `ms`. */
function waitFor(pred, ms) {
  return new Promise((done) => {
    const check = () => {
      const ev = events.find(pred)
      if (!ev) return
      clearTimeout(timer)
      waiters = waiters.filter((w) => w !== check)
      done(ev)
    }
    const timer = setTimeout(() => {
      waiters = waiters.filter((w) => w !== check)
      done(null)
    }, ms)
    waiters.push(check)
    check()
  })
}

const listening = await waitFor((e) => e.ev === 'listening', 10_000)
if (!listening) {
  console.error('sse-flood-shutdown: hostile-http.mjs did not start')
  process.exit(2)
}
const quiet = { debug() {}, info() {}, warn() {}, error() {} }
let late = 0
for (let round = 1; round <= rounds; round++) {
  events.length = 0
  const manager = new native.McpManager(
    { servers: { h: { transport: 'sse', url: `http://127.0.0.1:${listening.port}/ok/sse`, toolTimeout: 2_500, timeout: 10_000 } } },
    { logger: quiet, shutdownGraceMs: 500 },
  )
  await manager.start()
  const tool = manager.getAgentTools().find((t) => t.name === 'mcp_h_sse_endless')
  await tool.execute(`round-${round}`, {})
  const sent = () => Math.max(0, ...events.filter((e) => e.ev === 'sent').map((e) => e.bytes))
  const target = sent() + 8 * 1024 * 1024
  if (!(await waitFor((e) => e.ev === 'sent' && e.bytes >= target, 20_000))) console.log(`round ${round}: the flood stalled before 8 MiB more`)
  const shut = performance.now()
  await manager.shutdown()
  const closed = await waitFor((e) => e.ev === 'closed' && e.tool === 'sse_endless', CLOSE_BOUND_MS)
  if (closed?.byClient && closed.at - shut <= CLOSE_BOUND_MS) {
    console.log(`round ${round}: closed by the client ${Math.round(closed.at - shut)} ms after shutdown()`)
    continue
  }
  late++
  console.log(`round ${round}: not closed by the client within ${CLOSE_BOUND_MS} ms`)
  try {
    console.log(execFileSync('top', ['-b', '-n1', '-p', String(peer.pid)], { encoding: 'utf8' }).split('\n').slice(-3).join('\n'))
    console.log(execFileSync('ss', ['-tn', 'state', 'all', `( sport = :${listening.port} or dport = :${listening.port} )`], { encoding: 'utf8' }))
  } catch (error) {
    console.log(`(top/ss unavailable: ${error.message})`)
  }
  await waitFor((e) => e.ev === 'closed' && e.tool === 'sse_endless', 40_000)
}
peer.kill('SIGKILL')
console.log(`sse-flood-shutdown: ${rounds - late} of ${rounds} rounds closed by the client within ${CLOSE_BOUND_MS} ms`)
process.exit(late ? 1 : 0)
