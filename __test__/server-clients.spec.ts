// The client drivers in __test__/fixtures/clients (TypeScript SDK v1, SDK v2, Python `mcp` 2.x)
// against real servers, over stdio and Streamable HTTP: @modelcontextprotocol/server-everything
// (which proves the drivers list, call, receive progress and log notifications, and cancel),
// the SDK-written gateway in front of it, McpServerHost with JS tools, and the native gateway
// (`manager.serve()`) in front of server-everything.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanup, NODE, printedUrl, ROOT, trackPids } from './helpers'

const CLIENTS = path.join(ROOT, '__test__', 'fixtures', 'clients')
const SDK_GATEWAY = path.join(ROOT, 'bench', 'sdk-gateway.mjs')
const NATIVE_GATEWAY = path.join(ROOT, '__test__', 'fixtures', 'gateway-process.mjs')
const HOST = path.join(ROOT, '__test__', 'fixtures', 'host-server.mjs')
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')

const DRIVERS = {
  'sdk-v1': [NODE, path.join(CLIENTS, 'sdk-v1-client.mjs')],
  'sdk-v2': [NODE, path.join(CLIENTS, 'sdk-v2-client.mjs')],
  python: ['python3', path.join(CLIENTS, 'python-client.py')],
} as const

type Connect = { command: string; args: string[] } | { url: string }
interface Line {
  op: string
  ok: boolean
  step?: number
  result?: any
  error?: { message: string; code?: unknown }
  cancelled?: boolean
  progress?: Array<{ progress: number; total?: number }>
  logs?: unknown[]
  ms?: number
}

/** Runs one driver with a script; resolves to its JSON lines. Bounded: killed after 60 s. */
function drive(driver: keyof typeof DRIVERS, script: object): Promise<{ lines: Line[]; code: number | null; stderr: string }> {
  const [cmd, file] = DRIVERS[driver]
  return new Promise((resolve) => {
    execFile(cmd, [file, JSON.stringify({ timeoutMs: 50_000, ...script })],
      { timeout: 60_000, killSignal: 'SIGKILL', maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const lines = stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Line)
        resolve({ lines, code: error ? ((error as any).code ?? null) : 0, stderr })
      })
  })
}

/** What a target must offer for the script below. */
interface Target {
  name: string
  connect: () => Connect
  echo: { name: string; args: object; text: RegExp }
  /** A tool that reports progress for about `seconds` when given these arguments. */
  slow: (seconds: number, steps: number) => { name: string; args: object }
  /** A tool call after which the server sends at least one log notification (level debug). */
  log?: { name: string; args: object }
}

let httpUrl = ''

/** server-everything over Streamable HTTP on 127.0.0.1:port; resolves once it says (on stderr)
 *  that it listens, rejects if it exits first or stays silent for 8 s (three tries stay inside
 *  the 30 s hook timeout, so none is started after the hook gave up). */
function startEverythingHttp(port: number): Promise<void> {
  const child = spawn(NODE, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] })
  trackPids(child.pid!)
  started.push(child)
  return new Promise((resolve, reject) => {
    let err = ''
    const timer = setTimeout(() => reject(new Error(`server-everything silent for 8 s: ${err}`)), 8_000)
    child.stderr!.on('data', (d) => {
      err += d
      if (err.includes(`listening on port ${port}`)) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server-everything exited (${code}): ${err}`))
    })
  })
}
const started: ChildProcess[] = []

beforeAll(async () => {
  for (let attempt = 0; attempt < 3 && !httpUrl; attempt++) {
    const port = 43_000 + Math.floor(Math.random() * 4000)
    try {
      await startEverythingHttp(port)
      httpUrl = `http://127.0.0.1:${port}/mcp`
    } catch {
      // port taken (it exits): another one
    }
  }
  if (!httpUrl) throw new Error('server-everything over HTTP did not start')
})
afterAll(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM')
  await cleanup()
})

const everything = {
  echo: { name: 'echo', args: { message: 'hi there' }, text: /^Echo: hi there$/ },
  slow: (seconds: number, steps: number) => ({ name: 'trigger-long-running-operation', args: { duration: seconds, steps } }),
  log: { name: 'toggle-simulated-logging', args: {} },
}
// The SDK-written gateway (bench/sdk-gateway.mjs) in front of server-everything: the shape the
// native gateway will have (prefixed tool names, progress and cancellation forwarded).
const GATEWAY_CONFIG = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'server-clients-')), 'gateway.json')
fs.writeFileSync(GATEWAY_CONFIG, JSON.stringify({ servers: { everything: { command: NODE, args: [EVERYTHING] } } }))
afterAll(() => fs.rmSync(path.dirname(GATEWAY_CONFIG), { recursive: true, force: true }))
const viaGateway = {
  echo: { ...everything.echo, name: 'everything__echo' },
  slow: (seconds: number, steps: number) => ({ ...everything.slow(seconds, steps), name: 'everything__trigger-long-running-operation' }),
  log: { name: 'everything__toggle-simulated-logging', args: {} },
}
// The native gateway (manager.serve()) in front of server-everything: the manager's tool names,
// every result wrapped as untrusted content, progress and cancellation passed through, and (over
// stdio, below) server-everything's log messages relayed as the gateway's own.
const viaNative = {
  echo: { name: 'mcp_everything_echo', args: { message: 'hi there' }, text: /\nFrom: everything\n---\nEcho: hi there\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>$/ },
  slow: (seconds: number, steps: number) => ({ ...everything.slow(seconds, steps), name: 'mcp_everything_trigger-long-running-operation' }),
}
/** Starts `node <args>` (a fixture that prints `{"url": ...}` on stdout once it listens) and
 *  resolves the URL; rejects if it exits first. */
function startPrintingUrl(args: string[], what: string): Promise<string> {
  const child = spawn(NODE, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  trackPids(child.pid!)
  started.push(child)
  return printedUrl(child, what)
}
let nativeHttpUrl = ''
beforeAll(async () => {
  nativeHttpUrl = await startPrintingUrl([NATIVE_GATEWAY, GATEWAY_CONFIG, 'http'], 'the native gateway')
}, 30_000)
// McpServerHost with JS tools (fixtures/host-server.mjs), over stdio and Streamable HTTP.
const onHost = {
  echo: { name: 'echo', args: { text: 'hi there' }, text: /^hi there$/ },
  slow: (seconds: number, steps: number) => ({ name: 'long_operation', args: { duration: seconds, steps } }),
  log: { name: 'logs', args: {} },
}
let hostHttpUrl = ''
beforeAll(async () => {
  hostHttpUrl = await startPrintingUrl([HOST, 'http'], 'the host')
}, 30_000)
const TARGETS: Target[] = [
  { name: 'server-everything stdio', connect: () => ({ command: NODE, args: [EVERYTHING] }), ...everything },
  { name: 'server-everything http', connect: () => ({ url: httpUrl }), ...everything },
  {
    name: 'sdk-gateway stdio -> server-everything',
    connect: () => ({ command: NODE, args: [SDK_GATEWAY, '--config', GATEWAY_CONFIG] }),
    ...viaGateway,
  },
  { name: 'McpServerHost stdio', connect: () => ({ command: NODE, args: [HOST, 'stdio'] }), ...onHost },
  { name: 'McpServerHost http', connect: () => ({ url: hostHttpUrl }), ...onHost },
  // Over stdio each driver has a gateway (and a server-everything) of its own, so its toggle of
  // the simulated logging starts it; the HTTP gateway's one upstream session is shared by the
  // drivers, whose toggles would turn it on and off in turn.
  {
    name: 'native gateway stdio -> server-everything',
    connect: () => ({ command: NODE, args: [NATIVE_GATEWAY, GATEWAY_CONFIG, 'stdio'] }),
    ...viaNative,
    log: { name: 'mcp_everything_toggle-simulated-logging', args: {} },
  },
  { name: 'native gateway http -> server-everything', connect: () => ({ url: nativeHttpUrl }), ...viaNative },
]

describe.each(TARGETS)('client drivers against $name', (target) => {
  it.each(Object.keys(DRIVERS) as Array<keyof typeof DRIVERS>)('%s: list, call, progress, logs, cancel', async (driver) => {
    const slow = target.slow(1, 4)
    const hang = target.slow(20, 20)
    const steps: object[] = [
      { op: 'listTools' },
      { op: 'callTool', ...target.echo },
      { op: 'callTool', ...slow, progress: true },
      { op: 'callTool', ...hang, progress: true, cancelAfterMs: 1_500 },
      { op: 'ping' },
      { op: 'callTool', name: 'no-such-tool', args: {} },
    ]
    if (target.log) steps.unshift({ op: 'setLoggingLevel', level: 'debug' }, { op: 'callTool', ...target.log })
    const { lines, code, stderr } = await drive(driver, { connect: target.connect(), steps })
    expect(code, stderr).toBe(0)
    expect(lines[0], stderr).toMatchObject({ op: 'connect', ok: true })
    const byStep = (i: number) => lines.find((l) => l.step === i + (target.log ? 2 : 0))!
    expect(lines.at(-1)).toMatchObject({ op: 'close', ok: true })

    const tools = byStep(0)
    expect(tools.ok, JSON.stringify(tools.error)).toBe(true)
    const names = tools.result.tools.map((t: { name: string }) => t.name)
    expect(names).toEqual(expect.arrayContaining([target.echo.name, slow.name]))

    const echo = byStep(1)
    expect(echo.ok, JSON.stringify(echo.error)).toBe(true)
    expect(echo.result.content[0].text).toMatch(target.echo.text)

    // Progress: one notification per step, in order. The last one is sent just before the
    // result, and the SDKs drop a progress notification they handle after the response settled
    // the request (SDK v1, v2 and Python all do, now and then): at least the first three.
    const progressed = byStep(2)
    expect(progressed.ok, JSON.stringify(progressed.error)).toBe(true)
    const seen = progressed.progress!.map((p) => p.progress)
    expect(seen.slice(0, 3)).toEqual([1, 2, 3])
    expect([3, 4]).toContain(seen.length)
    expect(progressed.progress!.every((p) => p.total === 4)).toBe(true)

    // Cancellation: the call ends when the driver gives up, not when the tool would have.
    const cancelled = byStep(3)
    expect(cancelled).toMatchObject({ ok: false, cancelled: true })
    expect(cancelled.ms!).toBeGreaterThanOrEqual(1_400)
    expect(cancelled.ms!).toBeLessThan(10_000)
    expect(cancelled.progress!.length).toBeGreaterThanOrEqual(1)

    // The session is still usable after a cancelled call.
    expect(byStep(4)).toMatchObject({ op: 'ping', ok: true })

    // An unknown tool: a JSON-RPC error or an isError result, never a crash of the driver.
    const unknown = byStep(5)
    expect(unknown.ok === false || unknown.result?.isError === true).toBe(true)

    if (target.log) {
      const logs = lines.flatMap((l) => l.logs ?? [])
      expect(logs.length, 'log notifications received').toBeGreaterThanOrEqual(1)
    }
  }, 90_000)
})

describe('client drivers: the script contract', () => {
  it.each(Object.keys(DRIVERS) as Array<keyof typeof DRIVERS>)('%s: a bad script is one JSON error line and exit 2', async (driver) => {
    const { lines, code } = await drive(driver, { steps: [] })
    expect(code).toBe(2)
    expect(lines).toEqual([expect.objectContaining({ op: 'script', ok: false })])
  })

  it.each(Object.keys(DRIVERS) as Array<keyof typeof DRIVERS>)('%s: a server that cannot be reached is a connect error line, exit 0', async (driver) => {
    // A port nothing listens on: the HTTP server's own port plus one is not guaranteed free, so
    // use a closed port the kernel just gave back.
    const net = await import('node:net')
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port
        s.close(() => resolve(p))
      })
    })
    const { lines, code } = await drive(driver, { connect: { url: `http://127.0.0.1:${port}/mcp` }, steps: [{ op: 'listTools' }] })
    expect(code).toBe(0)
    expect(lines[0]).toMatchObject({ op: 'connect', ok: false })
  })
})
