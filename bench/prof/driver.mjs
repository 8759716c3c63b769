// A single-client loop to profile one scenario (perf, node --cpu-prof):
//
//   node bench/prof/driver.mjs --what tools|exec|conc|large|wrap|invalid [--client native|sdk|floor]
//        [--addon PATH] [--seconds S] [--bytes N] [--conc C]
//
// `--what large --gc` (needs `node --expose-gc`) times each call alone after a gc(), as the
// bench's large-result rows do, and prints the median; `--conc-first S` first runs 64 tiny
// calls in flight for S seconds (the bench runs those rows before the large ones).
//
// e.g.  perf record -e cpu-clock -F 2000 -g -o bench/prof/out/tools.data -- \
//         node --perf-basic-prof bench/prof/driver.mjs --what tools --addon bench/.native/prof/mcp-native.linux-x64-gnu.node
// Prints the operation count and the mean time per operation.

import { floorContender, nativeContender, sdkContender, serverSpec, loadNative } from '../lib/contenders.mjs'
import { wrapToolResult } from '../lib/openclaw-wrap.mjs'
import { genText } from '../lib/text.mjs'

const argv = process.argv.slice(2)
const opt = (f, d) => {
  const i = argv.indexOf(f)
  return i >= 0 ? argv[i + 1] : d
}
const what = opt('--what', 'exec')
const client = opt('--client', 'native')
const addon = opt('--addon', new URL('../.native/mcp-native.linux-x64-gnu.node', import.meta.url).pathname)
const seconds = Number(opt('--seconds', '5'))
const bytes = Number(opt('--bytes', '1000000'))
const conc = Number(opt('--conc', '64'))
const server = opt('--server', 'rust')

const contender = client === 'native' ? nativeContender(addon) : client === 'floor' ? floorContender() : sdkContender()
let ops = 0
const t0 = performance.now()
const end = t0 + seconds * 1000

if (what === 'wrap') {
  const text = genText(bytes)
  const native = loadNative(addon)
  const opts = { source: 'mcp_server', sender: 'bench', includeWarning: true }
  const run = client === 'native'
    ? (t) => native.scanAndWrapExternalContent(t, opts).wrapped
    : (t) => wrapToolResult(t, 'bench')
  while (performance.now() < end) { run(text); ops++ }
} else {
  const s = await contender.start([serverSpec(server, 's0', { tools: what === 'tools' ? 998 : 0 })])
  s.verify()
  const tStart = performance.now()
  const stop = tStart + seconds * 1000
  if (what === 'tools') {
    while (performance.now() < stop) { s.getTools(); ops++ }
  } else if (what === 'exec') {
    const call = s.caller('echo')
    while (performance.now() < stop) { await call({ text: 'hi' }); ops++ }
  } else if (what === 'conc') {
    const call = s.caller('echo')
    await Promise.all(Array.from({ length: conc }, async () => {
      while (performance.now() < stop) { await call({ text: 'hi' }); ops++ }
    }))
  } else if (what === 'invalid') {
    // native only: arguments that are not an object settle with an error result without any
    // I/O, so this is the cost of creating and settling a tool call's promise
    const call = s.caller('echo')
    while (performance.now() < stop) { await call([1]); ops++ }
  } else if (what === 'large' && argv.includes('--gc')) {
    const concFirst = Number(opt('--conc-first', '0'))
    if (concFirst > 0) {
      const echo = s.caller('echo')
      const until = performance.now() + concFirst * 1000
      await Promise.all(Array.from({ length: 64 }, async () => { while (performance.now() < until) await echo({ text: 'hi' }) }))
    }
    const call = s.caller('text')
    for (let i = 0; i < 2; i++) s.text(await call({ bytes }))
    const times = []
    const until = performance.now() + seconds * 1000
    while (performance.now() < until) {
      gc()
      const t = performance.now()
      const result = await call({ bytes })
      times.push(performance.now() - t)
      s.text(result)
    }
    times.sort((a, b) => a - b)
    const at = (q) => times[Math.floor(q * (times.length - 1))].toFixed(2)
    await s.shutdown()
    console.log(`${client} large, gc() before each: ${times.length} calls, median ${at(0.5)} ms (p25 ${at(0.25)}, p75 ${at(0.75)})`)
    process.exit(0)
  } else if (what === 'large') {
    const call = s.caller('text')
    while (performance.now() < stop) { s.text(await call({ bytes })); ops++ }
  }
  const dt = performance.now() - tStart
  await s.shutdown()
  console.log(`${client} ${what}: ${ops} ops in ${dt.toFixed(0)} ms, ${(dt / ops * 1000).toFixed(1)} µs/op`)
  process.exit(0)
}
const dt = performance.now() - t0
console.log(`${client} ${what}: ${ops} ops in ${dt.toFixed(0)} ms, ${(dt / ops * 1000).toFixed(1)} µs/op, ${(bytes / 1e6 * ops / (dt / 1000)).toFixed(0)} MB/s`)
