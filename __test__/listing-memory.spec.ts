// Issue 37, item 4: a huge tool listing's peak memory is bounded by what is kept.
//
// A stdio server lists 100,000 tools (plus the fault server's own) in one ~19 MB `tools/list`
// answer; the manager keeps `maxTools` (10,000) of them. Reading the answer used to take the
// whole listing through rmcp's parser (every tool a full value, buffered twice): +417 MB on a
// release build. Now the transport cuts a large answer down to what is kept before rmcp reads
// it. Each case runs in a child host (__test__/fixtures/listing-host.mjs) whose peak RSS above
// its baseline is the kernel's high-water mark (VmHWM, reset after the baseline) and, as a
// cross-check, this process's samples of the child's /proc/<pid>/status every 50 ms (taken
// after a warm-up start, see WARM_UP).
// A bound on memory, not on time. LISTING_MEMORY_ADDON=<path to a .node> runs the host on
// another build (how it was checked against the build before the change).

import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAULT_BUILTIN_TOOLS, FAULT_SERVER, NODE, ROOT } from './helpers'

/** The hostile HTTP fixture's own tools, listed before its --tools ones. */
const HOSTILE_HTTP_TOOLS = 17

const TOOLS = 100_000
/** Peak RSS growth allowed, as a multiple of the listing's size. */
const PEAK_PER_LISTING_BYTE = 5

let dir: string
let file: string
let listingBytes: number

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'listing-memory-'))
  file = path.join(dir, 'tools.json')
  const tools = []
  for (let i = 0; i < TOOLS; i++) {
    tools.push({
      name: `tool_${i}`,
      description: `Tool number ${i}: looks up the query.`,
      inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'What to look up' } }, required: ['query'] },
    })
  }
  const text = JSON.stringify(tools)
  fs.writeFileSync(file, text)
  // The answer is the array plus its envelope: the array is the size that matters.
  listingBytes = Buffer.byteLength(text)
})

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

interface HostReport {
  baselineKB: number
  peakKB: number | null
  status: Array<{ name: string; status: string; toolCount: number }>
  first?: string
  last?: string
  warnings: string[]
}

function rssKB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) : undefined
  } catch {
    return undefined
  }
}

/**
 * What the host starts and stops first, so that the baseline holds what any start costs once
 * per process (runtime threads and their arenas, the addon's code paged in: tens of MB of a
 * debug build's 350 MB file): a listing of 20,000 small tools (~0.9 MB) cut to 10.
 */
const WARM_UP = { command: NODE, args: [FAULT_SERVER, '--tools', '20000'], maxTools: 10, timeout: 60_000 }

/** Runs the host over one server; its report and the highest RSS sampled from outside. */
async function host(server: Record<string, unknown>): Promise<{ report: HostReport; sampledKB: number }> {
  const args = ['--expose-gc', path.join(ROOT, '__test__', 'fixtures', 'listing-host.mjs'), JSON.stringify(server), JSON.stringify(WARM_UP)]
  const child = spawn(NODE, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // LISTING_MEMORY_ADDON: another build of the addon for the host (to compare builds).
    env: process.env.LISTING_MEMORY_ADDON
      ? { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: process.env.LISTING_MEMORY_ADDON }
      : process.env,
  })
  // Sampled from the host's baseline on (it says when it took it).
  let sampledKB = 0
  let sampling = false
  const sampler = setInterval(() => {
    if (sampling) sampledKB = Math.max(sampledKB, rssKB(child.pid!) ?? 0)
  }, 50)
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += d
    sampling ||= out.includes('{"baseline":true}')
  })
  child.stderr.on('data', (d) => (err += d))
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  clearInterval(sampler)
  const line = out.trim().split('\n').pop() ?? ''
  if (code !== 0 || !line.startsWith('{')) throw new Error(`listing host failed (${code}): ${err.slice(-2000)}`)
  return { report: JSON.parse(line), sampledKB }
}

function server(extra: Record<string, unknown> = {}) {
  return { command: NODE, args: [FAULT_SERVER, '--tools-file', file], timeout: 120_000, ...extra }
}

describe.runIf(process.platform === 'linux')('a huge listing (issue 37)', () => {
  it('reads 100,000 tools keeping 10,000 within 5× the listing above the baseline', async () => {
    const { report, sampledKB } = await host(server())
    const listed = TOOLS + FAULT_BUILTIN_TOOLS.length
    expect(report.status[0]).toMatchObject({ status: 'ready', toolCount: 10_000 })
    // The first 10,000 in the server's order: its own tools, then tool_0 on.
    expect(report.first).toBe(`MCP: big/${FAULT_BUILTIN_TOOLS[0]}`)
    expect(report.last).toBe(`MCP: big/tool_${10_000 - FAULT_BUILTIN_TOOLS.length - 1}`)
    // The warning still says how many were listed.
    expect(report.warnings).toContain(
      `MCP server 'big' lists ${listed} tools, more than its maxTools (10000): only the first 10000 are offered`,
    )
    const peakKB = Math.max(report.peakKB ?? 0, sampledKB)
    const growthMB = (peakKB - report.baselineKB) / 1024
    const boundMB = (PEAK_PER_LISTING_BYTE * listingBytes) / 1048576
    console.log(`[listing-memory] ${listed} tools, ${(listingBytes / 1048576).toFixed(1)} MB: peak +${growthMB.toFixed(0)} MB (bound ${boundMB.toFixed(0)} MB)`)
    expect(growthMB).toBeLessThanOrEqual(boundMB)
  }, 180_000)

  it('counts the filtered tools past maxTools, and leaves out those the filter drops', async () => {
    // tool_1, tool_10…19, tool_100…199, …, tool_10000…19999: 11,111 pass the filter.
    const { report, sampledKB } = await host(server({ toolFilter: { include: ['tool_1*'] } }))
    expect(report.status[0]).toMatchObject({ status: 'ready', toolCount: 10_000 })
    expect(report.warnings).toContain(
      "MCP server 'big' lists 11111 tools, more than its maxTools (10000): only the first 10000 are offered",
    )
    const peakKB = Math.max(report.peakKB ?? 0, sampledKB)
    expect((peakKB - report.baselineKB) / 1024).toBeLessThanOrEqual((PEAK_PER_LISTING_BYTE * listingBytes) / 1048576)
  }, 180_000)

  describe('over Streamable HTTP and legacy SSE', () => {
    let http: ReturnType<typeof spawn>
    let port = 0

    beforeAll(async () => {
      http = spawn(NODE, [path.join(ROOT, '__test__', 'fixtures', 'hostile-http.mjs'), '--tools', String(TOOLS)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      port = await new Promise<number>((resolve, reject) => {
        let buf = ''
        http.stdout!.on('data', (d) => {
          buf += d
          const m = /"ev":"listening","port":(\d+)/.exec(buf)
          if (m) resolve(Number(m[1]))
        })
        http.on('exit', (code) => reject(new Error(`hostile-http exited (${code})`)))
      })
    })

    afterAll(() => {
      http?.kill('SIGKILL')
    })

    for (const [transport, kind] of [
      ['http', 'mcp'],
      ['sse', 'sse'],
    ] as const) {
      it(`${transport}: reads 100,000 tools keeping 10,000 within 5× the listing`, async () => {
        const { report, sampledKB } = await host({ transport, url: `http://127.0.0.1:${port}/ok/${kind}`, timeout: 120_000, ...(transport === 'http' ? { sseFallback: false } : {}) })
        const listed = TOOLS + HOSTILE_HTTP_TOOLS
        expect(report.status[0]).toMatchObject({ status: 'ready', toolCount: 10_000 })
        expect(report.last).toBe(`MCP: big/tool_${10_000 - HOSTILE_HTTP_TOOLS - 1}`)
        expect(report.warnings).toContain(
          `MCP server 'big' lists ${listed} tools, more than its maxTools (10000): only the first 10000 are offered`,
        )
        const growthMB = (Math.max(report.peakKB ?? 0, sampledKB) - report.baselineKB) / 1024
        console.log(`[listing-memory] ${transport}: ${listed} tools: peak +${growthMB.toFixed(0)} MB`)
        expect(growthMB).toBeLessThanOrEqual((PEAK_PER_LISTING_BYTE * listingBytes) / 1048576)
      }, 180_000)
    }
  })
})
