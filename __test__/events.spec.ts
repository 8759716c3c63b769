// manager.on / off (issue 13, part 6): status, toolsChanged, toolCall (the audit record of
// every call, whatever its outcome) and serverLog, against the fault server.

import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  FAULT_SERVER,
  faultServer,
  NODE,
  RecordingLogger,
  ROOT,
  tempDir,
  toolByName,
  waitUntil,
  type ManagerConfig,
  type ManagerOptions,
  type ServerConfig,
} from './helpers'

afterEach(cleanup)

type Payload = Record<string, unknown>

function recorder(manager: ReturnType<typeof createManager>, ...names: string[]) {
  const seen: Array<[string, Payload]> = []
  for (const name of names) manager.on(name as never, (p: Payload) => seen.push([name, p]))
  return seen
}

function make(servers: Record<string, ServerConfig>, options: ManagerOptions = {}) {
  const log = new RecordingLogger()
  const manager = createManager({ servers } as ManagerConfig, { logger: log.logger, ...options })
  return { manager, log }
}

describe('events', () => {
  it('status: connecting, ready; a crash is error with the reason, then the restart', async () => {
    const { manager } = make({ f: faultServer() })
    const seen = recorder(manager, 'status')
    await manager.start()
    await waitUntil(() => seen.length >= 2)
    expect(seen.slice(0, 2).map(([, p]) => [p.previous, p.status])).toEqual([['disconnected', 'connecting'], ['connecting', 'ready']])
    await toolByName(manager, 'mcp_f_exit').execute('c', { code: 3 })
    const error = await waitUntil(() => seen.find(([, p]) => p.status === 'error'))
    expect(error[1]).toMatchObject({ server: 'f', previous: 'ready', error: expect.stringContaining('exited with code 3') })
    await waitUntil(() => seen.filter(([, p]) => p.status === 'ready').length === 2, { timeout: 10_000 })
  })

  it('toolCall: one record per call with its outcome: ok, error, timeout, aborted', async () => {
    const { manager } = make({ f: faultServer([], { toolTimeout: 300 }) })
    await manager.start()
    const seen = recorder(manager, 'toolCall')
    const tool = (n: string) => toolByName(manager, n)
    await tool('mcp_f_echo').execute('id-ok', { text: 'x' })
    await tool('mcp_f_fail').execute('id-error', {})
    await tool('mcp_f_hang').execute('id-timeout', {})
    const abort = new AbortController()
    const pending = tool('mcp_f_hang').execute('id-aborted', {}, abort.signal)
    abort.abort()
    await pending
    await tool('mcp_f_echo').execute('id-args', 5 as unknown as Record<string, unknown>)
    await waitUntil(() => seen.length === 5)
    const byId = Object.fromEntries(seen.map(([, p]) => [p.toolCallId, p]))
    expect(byId['id-ok']).toMatchObject({ type: 'tool.executed', server: 'f', tool: 'echo', agentTool: 'mcp_f_echo', outcome: 'ok' })
    expect(byId['id-ok'].error).toBeUndefined()
    expect(typeof byId['id-ok'].durationMs).toBe('number')
    expect(byId['id-error']).toMatchObject({ type: 'tool.failed', outcome: 'error', error: 'MCP tool error (f/fail): MCP error -32602: bad input' })
    expect(byId['id-timeout']).toMatchObject({ type: 'tool.failed', outcome: 'timeout' })
    expect(byId['id-aborted']).toMatchObject({ type: 'tool.failed', outcome: 'aborted' })
    expect(byId['id-args']).toMatchObject({ outcome: 'error', error: 'MCP tool error (f/echo): tool arguments must be an object' })
  })

  it('toolsChanged: the first listing adds every tool; a restart that lists a new tool adds it', async () => {
    const marker = path.join(tempDir(), 'crashed')
    const { manager } = make({ f: faultServer(['--crash-after', 1, '--crash-marker', marker]) })
    const seen = recorder(manager, 'toolsChanged')
    await manager.start()
    const first = await waitUntil(() => seen[0])
    expect(first[1].server).toBe('f')
    expect(first[1].added).toContain('mcp_f_echo')
    expect(first[1].removed).toEqual([])
    await toolByName(manager, 'mcp_f_echo').execute('c', { text: 'crash after this' })
    const second = await waitUntil(() => seen.find(([, p]) => (p.added as string[]).includes('mcp_f_restarted')), { timeout: 10_000 })
    expect(second[1]).toMatchObject({ server: 'f', removed: [], changed: [] })
    expect(second[1].added).toEqual(['mcp_f_restarted'])
  })

  it('serverLog: the server message with its level and logger; the logger gets it at the mapped level', async () => {
    const { manager, log } = make({ f: faultServer(['--logging']) })
    await manager.start()
    const seen = recorder(manager, 'serverLog')
    await toolByName(manager, 'mcp_f_log').execute('c', { level: 'error', data: { disk: 'full' } })
    await toolByName(manager, 'mcp_f_log').execute('c', { level: 'info', data: 'started' })
    await waitUntil(() => seen.length === 2)
    expect(seen[0][1]).toEqual({ server: 'f', level: 'error', logger: 'fault', data: { disk: 'full' } })
    expect(seen[1][1]).toMatchObject({ level: 'info', data: 'started' })
    await log.waitFor('error', `MCP server 'f' log: {"disk":"full"}`)
    await log.waitFor('info', "MCP server 'f' log: started")
  })

  it('a throwing listener does not break the manager or other listeners; off removes one', async () => {
    const { manager } = make({ f: faultServer() })
    await manager.start()
    const calls: string[] = []
    const thrower = () => {
      throw new Error('listener bug')
    }
    const keeper = (p: Payload) => calls.push(String(p.toolCallId))
    manager.on('toolCall', thrower)
    manager.on('toolCall', keeper)
    await toolByName(manager, 'mcp_f_echo').execute('one', { text: 'x' })
    await waitUntil(() => calls.length === 1)
    manager.off('toolCall', keeper)
    manager.off('toolCall', thrower)
    const last = recorder(manager, 'toolCall')
    await toolByName(manager, 'mcp_f_echo').execute('two', { text: 'x' })
    await waitUntil(() => last.length === 1)
    expect(calls).toEqual(['one'])
  })

  it('bad arguments to on/off throw naming them', () => {
    const { manager } = make({})
    expect(() => manager.on('nope' as never, () => {})).toThrow("on: event must be one of 'status', 'toolsChanged', 'toolCall', 'serverLog'")
    expect(() => manager.on('status', 5 as never)).toThrow('on: listener must be a function, got a number')
  })

  it('a listener does not keep the host alive after shutdown()', () => {
    const code = `
      const { McpManager } = require(process.argv[1])
      ;(async () => {
        const m = new McpManager({ servers: { s: { command: process.argv[2], args: [process.argv[3]] } } })
        m.on('status', () => {})
        m.on('toolCall', () => {})
        await m.start()
        await m.shutdown()
        console.log('done')
      })().catch((e) => { console.error(e); process.exit(1) })`
    const r = spawnSync(NODE, ['-e', code, path.join(ROOT, 'index.js'), NODE, FAULT_SERVER], { timeout: 20_000, encoding: 'utf8' })
    expect(r.error, r.stderr).toBeUndefined()
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('done')
  })
})

describe('logLevel', () => {
  it('is sent as logging/setLevel to a server that declares logging, and not to others', async () => {
    const withLogging = path.join(tempDir(), 'with.log')
    const without = path.join(tempDir(), 'without.log')
    const { manager } = make({
      a: faultServer(['--logging', '--request-log', withLogging], { logLevel: 'warning' } as Partial<ServerConfig>),
      b: faultServer(['--request-log', without], { logLevel: 'warning' } as Partial<ServerConfig>),
    })
    await manager.start()
    const { fileLines } = await import('./helpers')
    expect(fileLines(withLogging).some((l) => l.startsWith('logging/setLevel'))).toBe(true)
    expect(fileLines(without).some((l) => l.startsWith('logging/setLevel'))).toBe(false)
    expect(() => createManager({ servers: { c: faultServer([], { logLevel: 'loud' } as Partial<ServerConfig>) } } as ManagerConfig)).toThrow(
      /servers\.c\.logLevel: Invalid logLevel 'loud'/,
    )
  })

  it("server-everything's simulated log reaches serverLog listeners", async () => {
    const everything: ServerConfig = {
      command: NODE,
      args: [path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'],
      logLevel: 'debug',
    } as ServerConfig
    const { manager } = make({ e: everything })
    await manager.start()
    const seen = recorder(manager, 'serverLog')
    await toolByName(manager, 'mcp_e_toggle-simulated-logging').execute('c', {})
    const [, first] = await waitUntil(() => seen[0], { timeout: 10_000 })
    expect(first).toMatchObject({ server: 'e', level: expect.stringMatching(/^(debug|info|notice|warning|error|critical|alert|emergency)$/) })
    expect(String(first.data)).toMatch(/-level message|level-message/)
  })
})
