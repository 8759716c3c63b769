// One host-RSS measurement in a fresh Node process (so the clients' heaps never mix):
//
//   node --expose-gc --single-threaded-gc --no-memory-reducer --min-semi-space-size=16 \
//        --max-semi-space-size=16 bench/rss-child.mjs --client native|sdk|langchain|floor \
//        --server rust|node --n N [--addon PATH]
//
// The V8 flags keep the heap from changing size behind the measurement's back: without
// --single-threaded-gc, pages freed by gc() go back to the OS seconds later from a background
// thread (RSS then drops by megabytes while slow servers connect); the memory reducer and
// new-space resizing move it on timers too.
//
// Loads the client, measures the baseline, connects N idle servers, lets them settle, measures
// again, shuts down, and prints one JSON line:
// { client, server, n, baselineKB, rssKB, baselineTotalKB, totalKB, heapKB } (rss* = RssAnon).

import { readFileSync } from 'node:fs'
import {
  floorContender, langchainContender, nativeContender, sdkContender, serverSpec,
} from './lib/contenders.mjs'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : dflt
}
const client = opt('--client')
const server = opt('--server', 'rust')
const n = Number(opt('--n', '1'))
const addon = opt('--addon')
const quick = argv.includes('--quick') // smoke runs: short settle times

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const gc = globalThis.gc ?? (() => {})

// Anonymous resident memory (heap, stacks, malloc arenas) from /proc/self/status: unlike the total
// RSS it does not move when the kernel drops or re-reads file-backed pages (the node binary, the
// addon) under memory pressure from the servers or other work on the machine.
function rssAnonBytes() {
  try {
    const kb = readFileSync('/proc/self/status', 'utf8').match(/^RssAnon:\s+(\d+) kB/m)
    if (kb) return Number(kb[1]) * 1024
  } catch {}
  return process.memoryUsage().rss
}

async function settled() {
  const anon = []
  const total = []
  for (let i = 0; i < 3; i++) {
    gc()
    gc()
    await sleep(quick ? 10 : 150)
    anon.push(rssAnonBytes())
    total.push(process.memoryUsage().rss)
  }
  anon.sort((a, b) => a - b)
  total.sort((a, b) => a - b)
  return { anon: anon[1], total: total[1] }
}

const timer = setTimeout(() => {
  console.error('rss-child: timed out')
  process.exit(3)
}, 120_000)

let contender
if (client === 'native') contender = nativeContender(addon)
else if (client === 'sdk') contender = sdkContender()
else if (client === 'langchain') contender = await langchainContender()
else if (client === 'floor') contender = floorContender()
if (!contender) {
  console.error(`rss-child: no client ${client}`)
  process.exit(2)
}

// Baseline: the client's code loaded and one throw-away round done (JIT, lazy modules, thread pools
// created), nothing connected.
{
  const warm = await contender.start([serverSpec(server, 'warm')])
  await warm.shutdown()
}
await sleep(quick ? 20 : Number(process.env.BENCH_RSS_SETTLE_MS ?? 1000))
const baseline = await settled()

const specs = Array.from({ length: n }, (_, i) => serverSpec(server, `s${i}`))
const session = await contender.start(specs)
session.verify()
await sleep(quick ? 20 : Number(process.env.BENCH_RSS_SETTLE_MS ?? 1000))
const after = await settled()
const heap = process.memoryUsage().heapUsed
await session.shutdown()
clearTimeout(timer)
console.log(JSON.stringify({
  client, server, n,
  baselineKB: baseline.anon / 1024, rssKB: after.anon / 1024,
  baselineTotalKB: baseline.total / 1024, totalKB: after.total / 1024,
  heapKB: heap / 1024,
}))
