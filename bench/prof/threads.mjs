// Host CPU per call at N calls in flight, split by thread (Linux: /proc/self/task/*/stat):
//
//   node bench/prof/threads.mjs [--client native|sdk] [--addon PATH] [--seconds S] [--conc N]
//
// Runs `echo` calls against the Rust bench server for S seconds twice (the first as warm-up)
// and prints calls/s, user + sys µs per call of the whole process, and per thread name (the
// JS thread is `node`, the addon's are `tokio-rt-worker`; clock ticks are 10 ms, so use a few
// seconds).

import fs from 'node:fs'
import { nativeContender, sdkContender, serverSpec } from '../lib/contenders.mjs'

const argv = process.argv.slice(2)
const opt = (f, d) => {
  const i = argv.indexOf(f)
  return i >= 0 ? argv[i + 1] : d
}
const client = opt('--client', 'native')
const addon = opt('--addon', new URL('../.native/mcp-native.linux-x64-gnu.node', import.meta.url).pathname)
const seconds = Number(opt('--seconds', '3'))
const conc = Number(opt('--conc', '64'))

const contender = client === 'native' ? nativeContender(addon) : sdkContender()
const s = await contender.start([serverSpec('rust', 's0', { tools: 0 })])
const call = s.caller('echo')

/** Ticks of user and system time per thread name. */
function threads() {
  const by = {}
  for (const t of fs.readdirSync('/proc/self/task')) {
    let stat
    try {
      stat = fs.readFileSync(`/proc/self/task/${t}/stat`, 'utf8')
    } catch {
      continue // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    by[`${t} ${name}`] = { name, user: Number(fields[11]), sys: Number(fields[12]) }
  }
  return by
}

for (const round of ['warm-up', 'measured']) {
  let calls = 0
  const before = threads()
  const cpu = process.cpuUsage()
  const stop = performance.now() + seconds * 1000
  await Promise.all(Array.from({ length: conc }, async () => {
    while (performance.now() < stop) {
      await call({ text: 'hi' })
      calls++
    }
  }))
  const used = process.cpuUsage(cpu)
  const after = threads()
  if (round === 'warm-up') continue
  const perName = {}
  for (const [key, t] of Object.entries(after)) {
    const was = before[key] ?? { user: 0, sys: 0 }
    const sum = (perName[t.name] ??= { user: 0, sys: 0 })
    sum.user += t.user - was.user
    sum.sys += t.sys - was.sys
  }
  const us = (v) => (v / calls).toFixed(2)
  console.log(`${client}: ${calls} calls, ${(calls / seconds).toFixed(0)} calls/s, CPU per call ${us(used.user + used.system)} µs (user ${us(used.user)}, sys ${us(used.system)})`)
  const tick = 1e6 / 100 // µs per clock tick
  for (const [name, t] of Object.entries(perName)) {
    if (t.user + t.sys > 0) console.log(`  ${name}: user ${us(t.user * tick)}, sys ${us(t.sys * tick)} µs per call`)
  }
}
await s.shutdown()
process.exit(0)
