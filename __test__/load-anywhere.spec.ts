// The addon loads wherever Node loads an addon: in any number of worker threads, one after
// another and at once, beside the main thread; as several copies in one process; and a
// process that exits with calls in flight leaves no server behind (issue 35).
//
// Each scenario runs in a child process of its own (fixtures/worker-host.mjs, copies-host.mjs),
// so a crash shows as that child's signal instead of taking the test runner down. A server
// process is found by a tag among its arguments; its death is polled (bounded): there is no
// signal for the death of a process that is not our child.

import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, ECHO_SERVER, exitWithin, FAULT_SERVER, processesTagged, ROOT, spawnNode, tempDir, trackPids, waitUntil } from './helpers'

afterEach(cleanup)

const INDEX = path.join(ROOT, 'index.js')
const platformBinary = () => {
  const found = fs.readdirSync(ROOT).filter((f) => /^mcp-native\..*\.node$/.test(f))
  expect(found, 'the built addon at the package root').toHaveLength(1)
  return path.join(ROOT, found[0])
}

interface WorkerReport { n: number; mode: string; exitCode: number; text?: string; leftover: number[] }
interface HostReport { ok: boolean; error?: string; workers: WorkerReport[]; main: { during?: string; after?: string; leftover?: number[] } }

let tags = 0
const newTag = () => `load-anywhere-${process.pid}-${Date.now()}-${tags++}`

/** Runs worker-host.mjs with `plan` and returns its report, after checking it exited cleanly. */
async function runWorkers(plan: Record<string, unknown>, timeout = 240_000) {
  const tag = newTag()
  const host = spawnNode([path.join(ROOT, '__test__', 'fixtures', 'worker-host.mjs'), JSON.stringify({
    addon: INDEX, echo: ECHO_SERVER, fault: FAULT_SERVER, tag, ...plan,
  })])
  const exit = await exitWithin(host, timeout)
  expect(exit, `worker host: ${host.stderr()}\n${host.stdout()}`).toEqual({ code: 0, signal: null })
  const report: HostReport = JSON.parse(host.stdout().trim().split('\n').pop()!)
  expect(report.error).toBeUndefined()
  return { report, tag }
}

/** Each worker called its server, ended as its mode says, and left no process behind. */
function expectWorkers(report: HostReport, modes: string[]) {
  expect(report.workers.map((w) => w.mode)).toEqual(modes)
  for (const w of report.workers) {
    if (w.mode !== 'starting') expect(w.text, `worker ${w.n}`).toMatch(/\n---\nhello from load-anywhere-[-\d]+-w\d+\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>$/)
    expect(w.exitCode, `worker ${w.n} (${w.mode})`).toBe(w.mode === 'terminate' || w.mode === 'starting' ? 1 : 0)
    expect(w.leftover, `servers of worker ${w.n} (${w.mode}) still running after it ended`).toEqual([])
  }
}

// 20 one after another, half of them terminated in the middle of a call; a quarter of the rest
// end with process.exit() with their servers running, and two are terminated while starting.
const SEQUENTIAL = Array.from({ length: 20 }, (_, i) =>
  i % 2 === 0 ? 'terminate' : i % 8 === 3 ? 'exit' : i % 8 === 7 ? 'starting' : 'shutdown')
const CONCURRENT = ['terminate', 'shutdown', 'terminate', 'exit']

describe('worker threads', () => {
  it('20 workers one after another and 4 at once, beside a manager on the main thread', async () => {
    const { report, tag } = await runWorkers({ main: true, sequential: SEQUENTIAL, concurrent: CONCURRENT })
    expectWorkers(report, [...SEQUENTIAL, ...CONCURRENT])
    expect(report.main.during).toMatch(/\n---\nmain, while the workers run\n<<<END_EXTERNAL/)
    expect(report.main.after).toMatch(/\n---\nmain, after the workers\n<<<END_EXTERNAL/)
    expect(report.main.leftover).toEqual([])
    expect(processesTagged(`${tag}-main`)).toEqual([])
  }, 300_000)

  it('workers alone: the addon is loaded, unloaded with the last worker and loaded again', async () => {
    // Without the main thread holding the addon, each worker that ends is the last environment
    // using it: the runtime stops and the next worker starts it again (issue 35's SIGSEGV: the
    // second worker crashed in mimalloc's thread setup).
    const { report } = await runWorkers({ main: false, sequential: SEQUENTIAL, concurrent: CONCURRENT })
    expectWorkers(report, [...SEQUENTIAL, ...CONCURRENT])
  }, 300_000)

  it('a tool or a manager cannot cross to another thread: a clear error, never a crash', async () => {
    const tag = newTag()
    const script = `
      const { Worker } = require('node:worker_threads')
      const { McpManager } = require(${JSON.stringify(INDEX)})
      ;(async () => {
        const manager = new McpManager({ servers: { echo: { command: process.execPath, args: [${JSON.stringify(ECHO_SERVER)}, ${JSON.stringify(tag)}] } } })
        await manager.start()
        const tool = manager.getAgentTools()[0]
        const worker = new Worker(\`
          const { parentPort } = require('node:worker_threads')
          const { McpManager } = require(\${JSON.stringify(${JSON.stringify(INDEX)})})
          parentPort.once('message', (clone) => {
            let error
            try { McpManager.prototype.getAgentTools.call(clone) } catch (e) { error = e.name + ': ' + e.message }
            parentPort.postMessage({ keys: Object.keys(clone), error })
          })\`, { eval: true })
        let cloneError
        try { worker.postMessage(tool) } catch (e) { cloneError = e.name + ': ' + e.message }
        worker.postMessage(manager)
        const answer = await new Promise((resolve) => worker.once('message', resolve))
        await worker.terminate()
        const again = await tool.execute('after', { text: 'still here' })
        await manager.shutdown()
        console.log(JSON.stringify({ cloneError, answer, again: again.content[0].text }))
      })().catch((e) => { console.log(JSON.stringify({ failed: String(e.stack) })); process.exitCode = 1 })`
    const host = spawnNode(['-e', script])
    expect(await exitWithin(host, 60_000), host.stderr()).toEqual({ code: 0, signal: null })
    const out = JSON.parse(host.stdout().trim().split('\n').pop()!)
    expect(out.cloneError).toMatch(/^DataCloneError: .*could not be cloned/)
    expect(out.answer.error).toMatch(/^TypeError: /)
    expect(out.again).toMatch(/\n---\nstill here\n<<<END_EXTERNAL/)
    expect(processesTagged(tag)).toEqual([])
  })
})

describe('several copies in one process', () => {
  it('two copies of the built .node from different paths, each with a running manager', async () => {
    const binary = platformBinary()
    const dirs = [tempDir('mcp-native-copy-a-'), tempDir('mcp-native-copy-b-')]
    const addons = dirs.map((d) => {
      const file = path.join(d, path.basename(binary))
      fs.copyFileSync(binary, file)
      return file
    })
    const tag = newTag()
    const host = spawnNode([path.join(ROOT, '__test__', 'fixtures', 'copies-host.mjs'), JSON.stringify({
      addons: [...addons, INDEX], echo: ECHO_SERVER, fault: FAULT_SERVER, tag,
    })])
    expect(await exitWithin(host, 60_000), `${host.stderr()}\n${host.stdout()}`).toEqual({ code: 0, signal: null })
    const report = JSON.parse(host.stdout().trim().split('\n').pop()!)
    expect(report.error).toBeUndefined()
    expect(report.texts).toHaveLength(3)
    report.texts.forEach((text: string, i: number) => expect(text).toMatch(new RegExp(`\\n---\\ncopy ${i}\\n<<<END_EXTERNAL`)))
    for (let i = 0; i < 3; i++) expect(processesTagged(`${tag}-c${i}`)).toEqual([])
  })

  it.runIf(process.platform === 'linux')('the binary asks for no static TLS (DF_STATIC_TLS), which a second dlopen cannot give', () => {
    expect(elfDynamicFlags(fs.readFileSync(platformBinary())) & DF_STATIC_TLS).toBe(0)
  })
})

describe('process exit', () => {
  it('process.exit() with calls in flight in two copies: exits 0, no server left', async () => {
    const binary = platformBinary()
    const copy = path.join(tempDir('mcp-native-copy-'), path.basename(binary))
    fs.copyFileSync(binary, copy)
    const tag = newTag()
    const host = spawnNode([path.join(ROOT, '__test__', 'fixtures', 'copies-host.mjs'), JSON.stringify({
      addons: [INDEX, copy], echo: ECHO_SERVER, fault: FAULT_SERVER, tag, exitInFlight: true,
    })])
    await host.waitForLine((l) => l.includes('"inFlight":true'), 60_000)
    expect(await exitWithin(host, 30_000), host.stderr()).toEqual({ code: 0, signal: null })
    for (const i of [0, 1]) {
      const left = await waitUntil(() => (processesTagged(`${tag}-c${i}`).length === 0 ? true : undefined), {
        timeout: 10_000, what: () => `the servers of copy ${i} to end: ${processesTagged(`${tag}-c${i}`)}`,
      }).catch((e) => {
        trackPids(...processesTagged(`${tag}-c${i}`))
        throw e
      })
      expect(left).toBe(true)
    }
  })
})

const DT_FLAGS = 30n
const DF_STATIC_TLS = 0x10

/** DT_FLAGS of a 64-bit little-endian ELF shared object (0 when it has none). */
function elfDynamicFlags(elf: Buffer): number {
  expect(elf.subarray(0, 4).toString('latin1')).toBe('\x7fELF')
  expect(elf[4], 'ELFCLASS64').toBe(2)
  expect(elf[5], 'little-endian').toBe(1)
  const phoff = Number(elf.readBigUInt64LE(0x20))
  const phentsize = elf.readUInt16LE(0x36)
  const phnum = elf.readUInt16LE(0x38)
  for (let i = 0; i < phnum; i++) {
    const ph = phoff + i * phentsize
    if (elf.readUInt32LE(ph) !== 2) continue // PT_DYNAMIC
    const offset = Number(elf.readBigUInt64LE(ph + 8))
    const size = Number(elf.readBigUInt64LE(ph + 0x20))
    for (let at = offset; at + 16 <= offset + size; at += 16) {
      const tag = elf.readBigInt64LE(at)
      if (tag === 0n) break
      if (tag === DT_FLAGS) return Number(elf.readBigUInt64LE(at + 8))
    }
  }
  return 0
}
