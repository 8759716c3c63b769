// getMetrics(), metricsText() and ping(server) (issue 19) against real servers: the fault
// server's outcomes, crashes and stderr, a lazy server, a remote server that cannot be reached.

import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  FAULT_SERVER,
  faultServer,
  NODE,
  RecordingLogger,
  tempDir,
  toolByName,
  waitForStatus,
  waitUntil,
  type ManagerConfig,
  type ManagerOptions,
  type ServerConfig,
} from './helpers'

afterEach(cleanup)

type Payload = Record<string, unknown>

function make(servers: Record<string, ServerConfig>, options: ManagerOptions = {}) {
  const log = new RecordingLogger()
  const manager = createManager({ servers } as ManagerConfig, { logger: log.logger, ...options })
  return { manager, log }
}

const metricsOf = (manager: ReturnType<typeof createManager>, server: string) => {
  const found = manager.getMetrics().find((m) => m.server === server)
  if (!found) throw new Error(`no metrics for ${server}`)
  return found
}

/** Nearest-rank quantile, as the manager takes it. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(Math.max(Math.ceil(q * sorted.length), 1), sorted.length)
  return sorted[rank - 1]
}

interface Sample { name: string; labels: Record<string, string>; value: number }

/** The Prometheus text format 0.0.4, line by line: HELP and TYPE once per family, before its
 *  samples; samples `name{label="value",...} number`; label values with \\ \" \n escapes. */
function parsePrometheus(text: string): { types: Map<string, string>; samples: Sample[] } {
  expect(text.endsWith('\n')).toBe(true)
  const types = new Map<string, string>()
  const helps = new Set<string>()
  const samples: Sample[] = []
  let current: string | undefined
  for (const line of text.slice(0, -1).split('\n')) {
    let m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
    if (m) {
      expect(helps.has(m[1]), `HELP ${m[1]} twice`).toBe(false)
      helps.add(m[1])
      current = m[1]
      continue
    }
    m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|summary|histogram|untyped)$/.exec(line)
    if (m) {
      expect(m[1]).toBe(current)
      expect(types.has(m[1]), `TYPE ${m[1]} twice`).toBe(false)
      types.set(m[1], m[2])
      continue
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\} (\S+)$/.exec(line)
    expect(m, `not a sample line: ${JSON.stringify(line)}`).not.toBeNull()
    const [, name, rawLabels, rawValue] = m!
    expect(name, 'a sample of another family than the last TYPE').toBe(current)
    expect(types.has(name)).toBe(true)
    const labels: Record<string, string> = {}
    for (const l of rawLabels.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    }
    const value = Number(rawValue)
    expect(Number.isFinite(value), `value ${rawValue}`).toBe(true)
    samples.push({ name, labels, value })
  }
  return { types, samples }
}

describe('getMetrics', () => {
  it('counts every outcome the toolCall event reports; p50/p99 over the calls durations', async () => {
    const { manager } = make(
      { f: faultServer([], { toolTimeout: 300 }), idle: faultServer() },
      // A result that reads like a prompt injection is withheld: outcome `denied`.
      { detection: 'enhanced', onSuspicious: 'block' },
    )
    await manager.start()
    expect(manager.getMetrics().map((m) => m.server)).toEqual(manager.getStatus().map((s) => s.name))
    const before = metricsOf(manager, 'f')
    expect(before).toMatchObject({ server: 'f', status: 'ready', transport: 'stdio', calls: 0, errors: 0, timeouts: 0, aborts: 0, denied: 0, p50Ms: null, p99Ms: null, restarts: 0, lastError: null })
    const events: Payload[] = []
    manager.on('toolCall', (p: Payload) => events.push(p))
    const tool = (n: string) => toolByName(manager, n)
    for (const text of ['a', 'b', 'c']) await tool('mcp_f_echo').execute(`ok-${text}`, { text })
    await tool('mcp_f_fail').execute('error', {})
    await tool('mcp_f_is_error').execute('is-error', {})
    await tool('mcp_f_hang').execute('timeout', {})
    const abort = new AbortController()
    const pending = tool('mcp_f_hang').execute('aborted', {}, abort.signal)
    abort.abort()
    await pending
    await tool('mcp_f_inject').execute('denied', {})
    await waitUntil(() => events.length === 8)
    const outcomes = events.map((e) => e.outcome)
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'error', 'error', 'timeout', 'aborted', 'denied'])
    // An isError result is an `error` outcome of the toolCall event, and so counts in `errors`.
    expect(events[4]).toMatchObject({ toolCallId: 'is-error', outcome: 'error', error: 'the server flagged the result isError' })
    const m = metricsOf(manager, 'f')
    expect(m).toMatchObject({ calls: 8, errors: 2, timeouts: 1, aborts: 1, denied: 1, restarts: 0 })
    const durations = events.map((e) => e.durationMs as number)
    expect(m.p50Ms).toBe(quantile(durations, 0.5))
    expect(m.p99Ms).toBe(quantile(durations, 0.99))
    expect(m.p99Ms!).toBeGreaterThanOrEqual(m.p50Ms!)
    expect(m.p99Ms!).toBeGreaterThanOrEqual(300)
    // The last failed call (an abort or a block says nothing about the server).
    expect(m.lastError).toBe(events[5].error)
    expect(m.lastError).toContain('Request timed out')
    // The other server made no call.
    expect(metricsOf(manager, 'idle')).toMatchObject({ calls: 0, p50Ms: null, p99Ms: null, lastError: null })
  })

  it('a crash: restarts 1, lastError says why, stderr kept across the restart; uptime and startup', async () => {
    const marker = path.join(tempDir(), 'crashed')
    const { manager } = make({ f: faultServer(['--crash-after', 1, '--crash-marker', marker, '--stderr-chatter']) })
    await manager.start()
    const first = metricsOf(manager, 'f')
    expect(first.startup).not.toBeNull()
    for (const step of ['connectMs', 'initializeMs', 'listMs'] as const) {
      expect(typeof first.startup![step]).toBe('number')
      expect(first.startup![step]).toBeGreaterThanOrEqual(0)
    }
    expect(first.startup!.connectMs + first.startup!.initializeMs + first.startup!.listMs).toBeGreaterThan(0)
    const uptime = first.uptimeMs
    await waitUntil(() => metricsOf(manager, 'f').uptimeMs > uptime, { what: 'uptimeMs to grow' })

    const restarted = new Promise<void>((resolve) => {
      let errored = false
      manager.on('status', (p: Payload) => {
        if (p.status === 'error') errored = true
        if (errored && p.status === 'ready') resolve()
      })
    })
    await toolByName(manager, 'mcp_f_echo').execute('c', { text: 'x' })
    await restarted
    const m = metricsOf(manager, 'f')
    expect(m).toMatchObject({ status: 'ready', restarts: 1, calls: 1, errors: 0 })
    expect(m.lastError).toMatch(/code 1/)
    await waitUntil(() => metricsOf(manager, 'f').stderrTail.filter((l) => l === 'chatter: started 1').length === 2, { what: 'the second start\'s stderr' })
    const tail = metricsOf(manager, 'f').stderrTail
    expect(tail).toEqual(expect.arrayContaining(['chatter: call echo', 'fault-server: crashing after 1 call(s)']))
    expect(tail.indexOf('fault-server: crashing after 1 call(s)')).toBeLessThan(tail.lastIndexOf('chatter: started 1'))
    // The new session's uptime is counted from its own start.
    expect(metricsOf(manager, 'f').uptimeMs).toBeGreaterThanOrEqual(0)
    await manager.shutdown()
    expect(metricsOf(manager, 'f')).toMatchObject({ status: 'closed', uptimeMs: 0, restarts: 1 })
  })

  it('stderrTail: the last 20 lines, as logged (the log line unchanged)', async () => {
    const { manager, log } = make({ f: faultServer(['--stderr-chatter']) })
    await manager.start()
    const echo = toolByName(manager, 'mcp_f_echo')
    for (let i = 0; i < 30; i++) await echo.execute(`c${i}`, { text: String(i) })
    const logged = () => log.all('warn').map((e) => e.msg).filter((msg) => msg.startsWith("MCP server 'f' stderr: "))
    await waitUntil(() => logged().length === 33, { what: () => `33 stderr lines, have ${logged().length}` })
    expect(logged()[0]).toBe("MCP server 'f' stderr: chatter: started 1")
    const tail = metricsOf(manager, 'f').stderrTail
    expect(tail).toHaveLength(20)
    expect(tail).toEqual(logged().slice(-20).map((msg) => msg.slice("MCP server 'f' stderr: ".length)))
  })

  it('a remote server that cannot be reached: no stderr, no startup, its error', async () => {
    const { manager } = make({ r: { transport: 'http', url: 'http://127.0.0.1:9/mcp', restartOnCrash: false, timeout: 5000 } })
    await manager.start()
    const m = metricsOf(manager, 'r')
    expect(m).toMatchObject({ server: 'r', status: 'error', calls: 0, uptimeMs: 0, stderrTail: [], startup: null, restarts: 0 })
    expect(m.transport).toBeUndefined()
    expect(m.lastError).toEqual(expect.any(String))
    expect(m.lastError).toBe(manager.getMetrics()[0].lastError)
    await expect(manager.ping('r')).rejects.toThrow("ping: MCP server 'r' is not ready (status: error)")
  })

  it('secrets stay out: a server that writes its token to stderr, one that fails with it', async () => {
    const secret = 'metrics-secret-value-9f8e7d6c5b4a'
    process.env.MCP_NATIVE_METRICS_SECRET = secret
    try {
      const fault = JSON.stringify(pathToFileURL(FAULT_SERVER).href)
      const env = { API_TOKEN: 'secret://env/MCP_NATIVE_METRICS_SECRET' }
      const { manager, log } = make({
        talk: { command: NODE, args: ['-e', `process.stderr.write('my token is ' + process.env.API_TOKEN + '\\n'); import(${fault})`], env },
        fail: { command: NODE, args: ['-e', "console.error('failing with ' + process.env.API_TOKEN); process.exit(3)"], env, restartOnCrash: false },
      })
      await manager.start()
      await waitForStatus(manager, 'talk', 'ready')
      await waitUntil(() => log.has('warn', (m) => m.startsWith("MCP server 'talk' stderr: my token is")))
      await waitUntil(() => metricsOf(manager, 'fail').lastError)
      const talk = metricsOf(manager, 'talk')
      expect(talk.stderrTail).toEqual(['my token is [REDACTED]'])
      expect(metricsOf(manager, 'fail').stderrTail).toEqual(['failing with [REDACTED]'])
      const everything = JSON.stringify(manager.getMetrics()) + manager.metricsText()
      expect(everything).not.toContain(secret)
      expect(everything).toContain('[REDACTED]')
    } finally {
      delete process.env.MCP_NATIVE_METRICS_SECRET
    }
  })
})

describe('ping', () => {
  it('resolves the round trip in ms for a ready server', async () => {
    const { manager } = make({ f: faultServer() })
    await manager.start()
    const ms = await manager.ping('f')
    expect(typeof ms).toBe('number')
    expect(ms).toBeGreaterThanOrEqual(0)
    expect(Number.isFinite(ms)).toBe(true)
  })

  it('rejects, never throws: unknown server, bad argument types, after shutdown', async () => {
    const { manager } = make({ f: faultServer() })
    await manager.start()
    const bad: unknown[] = [undefined, null, 42, true, {}, ['f'], () => 'f', Symbol('f'), 10n]
    for (const value of bad) {
      let promise: Promise<number> | undefined
      expect(() => { promise = manager.ping(value as string) }).not.toThrow()
      expect(promise).toBeInstanceOf(Promise)
      await expect(promise).rejects.toThrow(/^ping: server must be a string, got /)
    }
    const noArgument = (manager.ping as unknown as () => Promise<number>).call(manager)
    await expect(noArgument).rejects.toThrow('ping: server must be a string, got undefined')
    await expect(manager.ping('nope')).rejects.toThrow("ping: no MCP server named 'nope'")
    await manager.shutdown()
    await expect(manager.ping('f')).rejects.toThrow("ping: MCP server 'f' is not ready (status: closed)")
  })

  it('an idle lazy server is started for it, as a call starts it', async () => {
    const { manager } = make({ lazy: faultServer([], { lazy: true }) })
    await manager.start()
    await waitUntil(() => manager.getStatus()[0].status === 'ready' && manager.getStatus()[0].running === false, { what: 'the discovery run to end' })
    expect(metricsOf(manager, 'lazy')).toMatchObject({ status: 'ready', uptimeMs: 0 })
    const ms = await manager.ping('lazy')
    expect(ms).toBeGreaterThanOrEqual(0)
    expect(manager.getStatus()[0].running).toBe(true)
    expect(metricsOf(manager, 'lazy').restarts).toBe(0)
  })
})

describe('metricsText', () => {
  it('parses as Prometheus text with the counters getMetrics reports', async () => {
    const name = 'we"ird\\na\nme'
    const { manager } = make({ f: faultServer([], { toolTimeout: 300 }), [name]: faultServer() })
    await manager.start()
    await toolByName(manager, 'mcp_f_echo').execute('a', { text: 'a' })
    await toolByName(manager, 'mcp_f_fail').execute('b', {})
    const text = manager.metricsText()
    const { types, samples } = parsePrometheus(text)
    expect(Object.fromEntries(types)).toEqual({
      mcp_native_tool_calls_total: 'counter',
      mcp_native_tool_call_outcomes_total: 'counter',
      mcp_native_tool_call_duration_ms: 'gauge',
      mcp_native_server_restarts_total: 'counter',
      mcp_native_server_uptime_seconds: 'gauge',
      mcp_native_server_up: 'gauge',
      mcp_native_server_tools: 'gauge',
    })
    const value = (metric: string, labels: Record<string, string>) =>
      samples.find((s) => s.name === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length)?.value
    const f = metricsOf(manager, 'f')
    expect(value('mcp_native_tool_calls_total', { server: 'f' })).toBe(2)
    expect(value('mcp_native_tool_call_outcomes_total', { server: 'f', outcome: 'error' })).toBe(1)
    for (const outcome of ['timeout', 'aborted', 'denied']) {
      expect(value('mcp_native_tool_call_outcomes_total', { server: 'f', outcome })).toBe(0)
    }
    expect(value('mcp_native_tool_call_duration_ms', { server: 'f', quantile: '0.5' })).toBe(f.p50Ms)
    expect(value('mcp_native_tool_call_duration_ms', { server: 'f', quantile: '0.99' })).toBe(f.p99Ms)
    expect(value('mcp_native_server_restarts_total', { server: 'f' })).toBe(0)
    expect(value('mcp_native_server_up', { server: 'f' })).toBe(1)
    expect(value('mcp_native_server_tools', { server: 'f' })).toBe(manager.getStatus()[0].toolCount)
    expect(value('mcp_native_server_uptime_seconds', { server: 'f' })).toBeGreaterThan(0)
    // The other server: its name escaped and read back; no calls, so no quantiles.
    expect(value('mcp_native_tool_calls_total', { server: name })).toBe(0)
    expect(samples.filter((s) => s.labels.server === name && s.name === 'mcp_native_tool_call_duration_ms')).toEqual([])
    expect(text).toContain('mcp_native_tool_calls_total{server="we\\"ird\\\\na\\nme"} 0\n')
  })
})
