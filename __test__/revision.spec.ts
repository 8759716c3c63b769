// The 2026-07-28 revision (issue 15): `protocol` per server, `auto` negotiation over stdio and
// Streamable HTTP, `_meta`-carrying stateless sessions, multi-round-trip requests
// (`input_required`) answered through the host's callbacks, and list changes through
// `subscriptions/listen`. Peers: the TypeScript SDK v2 (stdio dual-era, stdio modern-only,
// stateless HTTP), a Python `mcp` 2.x server, server-everything (a 2025-11-25 server).

import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  fileLines,
  NODE,
  RecordingLogger,
  ROOT,
  spawnNode,
  startEverythingHttp,
  statusOf,
  tempDir,
  toolByName,
  waitUntil,
  wrappedBody,
  type ManagerConfig,
  type ManagerOptions,
  type ServerConfig,
  type ToolResult,
} from './helpers'

afterEach(cleanup)

const V2 = path.join(ROOT, '__test__', 'fixtures', 'v2-server.mjs')
const INIT_FIRST = path.join(ROOT, '__test__', 'fixtures', 'initialize-first-server.mjs')
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
const PYTHON = process.env.PYTHON ?? 'python3'
const PY_SERVER = path.join(ROOT, 'tests', 'peers', 'py_revision.py')
const TASK_SERVER = path.join(ROOT, '__test__', 'fixtures', 'task-server.mjs')

async function start(servers: Record<string, ServerConfig>, options: Record<string, unknown> = {}) {
  const log = new RecordingLogger()
  const manager = createManager({ servers } as ManagerConfig, { logger: log.logger, ...options } as ManagerOptions)
  await manager.start()
  return { manager, log }
}

const call = (manager: ReturnType<typeof createManager>, name: string, args: Record<string, unknown> = {}) =>
  toolByName(manager, name).execute('c', args) as Promise<ToolResult>
const text = (r: ToolResult) => ('error' in r.details ? r.content[0].text : wrappedBody(r))
const revision = (manager: ReturnType<typeof createManager>, name: string) =>
  (statusOf(manager, name) as { protocolVersion?: string } | undefined)?.protocolVersion

async function v2Http(): Promise<string> {
  const server = spawnNode([V2, 'http'])
  const line = await server.waitForLine((l) => l.startsWith('port '), 15_000)
  return `http://127.0.0.1:${line.slice(5).trim()}/mcp`
}

const accept = { elicitation: async () => ({ action: 'accept', content: { yes: true } }) }

describe('protocol: auto', () => {
  it('TypeScript SDK v2 over stateless HTTP: 2026-07-28, tools called with _meta', async () => {
    const url = await v2Http()
    const { manager } = await start({ v2: { transport: 'http', url } })
    expect(statusOf(manager, 'v2')?.status).toBe('ready')
    expect(revision(manager, 'v2')).toBe('2026-07-28')
    expect(text(await call(manager, 'mcp_v2_echo', { text: 'héllo' }))).toBe('héllo')
  })

  it('TypeScript SDK v2 over stdio, modern only: the refused handshake leads to server/discover', async () => {
    const { manager, log } = await start({ v2: { command: NODE, args: [V2, 'stdio-modern'] } })
    expect(statusOf(manager, 'v2')?.status).toBe('ready')
    expect(revision(manager, 'v2')).toBe('2026-07-28')
    expect(text(await call(manager, 'mcp_v2_echo', { text: 'x' }))).toBe('x')
    // (The server's own stderr warns about its badheader tool; that is not the client's.)
    expect(log.messages('warn').concat(log.messages('error')).filter((m) => !m.includes(' stderr: '))).toEqual([])
  })

  it('TypeScript SDK v2 over stdio, dual-era: the handshake is answered, so 2025-11-25', async () => {
    const { manager } = await start({ v2: { command: NODE, args: [V2, 'stdio'] } }, accept)
    expect(revision(manager, 'v2')).toBe('2025-11-25')
    // The same tool's input_required reaches the host as the server's own elicitation request.
    expect(text(await call(manager, 'mcp_v2_confirm'))).toBe('answer accept {"yes":true}')
  })

  it("protocol: '2026-07-28' over stdio opens with server/discover", async () => {
    const { manager } = await start({ v2: { command: NODE, args: [V2, 'stdio'], protocol: '2026-07-28' } }, accept)
    expect(revision(manager, 'v2')).toBe('2026-07-28')
    expect(text(await call(manager, 'mcp_v2_confirm'))).toBe('answer accept {"yes":true}')
  })

  it('a fixed older revision is the one asked for', async () => {
    const url = await v2Http()
    const { manager } = await start({ v2: { transport: 'http', url, protocol: '2025-06-18' } })
    expect(revision(manager, 'v2')).toBe('2025-06-18')
    expect(text(await call(manager, 'mcp_v2_echo', { text: 'old' }))).toBe('old')
  })

  it('Python mcp 2.x: stateless Streamable HTTP negotiates 2026-07-28, stdio stays on the handshake', async () => {
    const port = 45_000 + Math.floor(Math.random() * 3000)
    const { spawn } = await import('node:child_process')
    const child = spawn(PYTHON, [PY_SERVER, 'http', String(port)], { stdio: 'ignore' })
    try {
      await waitUntil(async () => fetch(`http://127.0.0.1:${port}/mcp`, { method: 'GET' }).then(() => true, () => false), {
        timeout: 20_000,
        what: 'python server',
      })
      const { manager } = await start({
        http: { transport: 'http', url: `http://127.0.0.1:${port}/mcp` },
        stdio: { command: PYTHON, args: [PY_SERVER, 'stdio'] },
      })
      expect(revision(manager, 'http')).toBe('2026-07-28')
      expect(revision(manager, 'stdio')).toBe('2025-11-25')
      expect(text(await call(manager, 'mcp_http_echo', { text: 'py' }))).toBe('py')
      expect(text(await call(manager, 'mcp_stdio_echo', { text: 'py' }))).toBe('py')
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('server-everything (2025-11-25) over stdio and HTTP: the probe is refused, the handshake follows', async () => {
    const { url } = await startEverythingHttp()
    const { manager } = await start({
      http: { transport: 'http', url },
      stdio: { command: NODE, args: [EVERYTHING, 'stdio'] },
    })
    expect(revision(manager, 'http')).toBe('2025-11-25')
    expect(revision(manager, 'stdio')).toBe('2025-11-25')
    expect(text(await call(manager, 'mcp_http_echo', { message: 'hi' }))).toBe('Echo: hi')
  })

  it('a stdio server that exits unless initialize comes first is never sent server/discover', async () => {
    const starts = path.join(tempDir(), 'starts')
    const { manager } = await start({ s: { command: NODE, args: [INIT_FIRST, starts], restartOnCrash: false } })
    expect(statusOf(manager, 's')?.status).toBe('ready')
    expect(revision(manager, 's')).toBe('2025-11-25')
    expect(text(await call(manager, 'mcp_s_ping'))).toBe('pong')
    expect(fileLines(starts)).toHaveLength(1)
  })

  it('an unknown revision is a config error naming the choices', async () => {
    const make = () =>
      createManager({ servers: { s: { command: NODE, args: [V2], protocol: '2099-01-01' } } } as any, {
        logger: new RecordingLogger().logger,
      } as ManagerOptions)
    expect(make).toThrow(/servers\.s\.protocol: Invalid protocol '2099-01-01': expected 'auto', '2026-07-28'/)
  })
})

describe('2026-07-28 sessions', () => {
  it('input_required: elicitation and roots fulfilled by the host, requestState sent back unchanged', async () => {
    const url = await v2Http()
    const asked: unknown[] = []
    const { manager } = await start(
      { v2: { transport: 'http', url } },
      {
        elicitation: async (request: unknown, { server }: { server: string }) => {
          asked.push({ request, server })
          return { action: 'accept', content: { yes: true } }
        },
        roots: [{ uri: 'file:///work/project', name: 'project' }],
      },
    )
    expect(revision(manager, 'v2')).toBe('2026-07-28')
    expect(text(await call(manager, 'mcp_v2_confirm'))).toBe('answer accept {"yes":true}')
    expect(asked).toEqual([{ server: 'v2', request: expect.objectContaining({ message: 'Proceed?' }) }])
    expect(text(await call(manager, 'mcp_v2_roots'))).toBe('roots [{"uri":"file:///work/project","name":"project"}]')
  })

  it('without the roots option a 2026-07-28 server is never told "no roots": the call that needs them fails', async () => {
    // The SDK v2 server reads the request's declared capabilities and refuses to ask (-32021);
    // a server that asks anyway gets the call failed by the client (session/input_required.rs).
    const url = await v2Http()
    const { manager } = await start({ v2: { transport: 'http', url } })
    expect(revision(manager, 'v2')).toBe('2026-07-28')
    const r = await call(manager, 'mcp_v2_roots')
    expect('error' in r.details).toBe(true)
    expect(r.content[0].text).not.toContain('roots [')
  })

  it('input_required on prompts/get: the host answers, the prompt comes back', async () => {
    const url = await v2Http()
    const { manager } = await start({ v2: { transport: 'http', url } }, { elicitation: async () => ({ action: 'accept', content: { name: 'Ada' } }) })
    const prompt = await manager.getPrompt('v2', 'greeting')
    expect(prompt.messages.map((m: any) => wrappedBody({ content: [{ type: 'text', text: m.content.text }] } as any))).toEqual(['Hello, Ada'])
  })

  it('without an elicitation callback the capability is not declared, and the server says so', async () => {
    const url = await v2Http()
    const { manager } = await start({ v2: { transport: 'http', url } })
    const result = await call(manager, 'mcp_v2_confirm')
    expect(text(result)).toMatch(/^MCP tool error \(v2\/confirm\): .*do not declare the required capability/)
  })

  it('x-mcp-header: parameters mirrored into Mcp-Param-* (Base64 when not plain ASCII); an invalid annotation drops its tool, named', async () => {
    const url = await v2Http()
    const { manager, log } = await start({ v2: { transport: 'http', url } })
    const seen = JSON.parse(text(await call(manager, 'mcp_v2_route', { region: 'eu-west-1', note: 'héllo wörld' })))
    expect(seen).toEqual({
      'mcp-param-region': 'eu-west-1',
      'mcp-param-note': `=?base64?${Buffer.from('héllo wörld').toString('base64')}?=`,
    })
    expect(manager.getAgentTools().map((t) => t.name)).not.toContain('mcp_v2_badheader')
    expect(log.entries.filter((e) => e.level === 'warn').map((e) => e.msg)).toEqual([
      expect.stringMatching(/^MCP server 'v2': tool 'badheader' is left out: its x-mcp-header annotations are invalid \('n': /),
    ])
  })

  it('a list change arrives on the subscriptions/listen stream', async () => {
    const { manager } = await start({ v2: { command: NODE, args: [V2, 'stdio-modern'] } })
    expect(revision(manager, 'v2')).toBe('2026-07-28')
    const changed = new Promise<any>((resolve) => manager.on('toolsChanged', (e: any) => e.added.length && e.added.includes('mcp_v2_grown') && resolve(e)))
    await call(manager, 'mcp_v2_grow')
    expect((await changed).added).toEqual(['mcp_v2_grown'])
    expect(text(await call(manager, 'mcp_v2_grown'))).toBe('grown')
  })
})

describe('tasks (SEP-1686, 2025-11-25)', () => {
  it("server-everything's simulate-research-query (taskSupport: required) runs as a task; status messages reach onUpdate", async () => {
    const { manager } = await start({ e: { command: NODE, args: [EVERYTHING, 'stdio'] } })
    const updates: string[] = []
    const result = (await toolByName(manager, 'mcp_e_simulate-research-query').execute('t', { topic: 'rust' }, undefined, (u: any) =>
      updates.push(u.content[0].text),
    )) as ToolResult
    expect(text(result)).toContain('# Research Report: rust')
    // Updates travel on their own queue: they may land after the result.
    await waitUntil(() => updates.some((u) => u.includes('Gathering sources...')), { what: () => `a status update (got ${updates.length})` })
  })

  it('taskTimeout bounds the whole task, and the task is cancelled with tasks/cancel', async () => {
    const log = path.join(tempDir(), 'methods')
    const { manager } = await start({ t: { command: NODE, args: [TASK_SERVER, log], taskTimeout: 600, toolTimeout: 60_000 } })
    const result = await call(manager, 'mcp_t_slow')
    expect(text(result)).toMatch(/^MCP tool error \(t\/slow\): .*timed out/)
    await waitUntil(() => fileLines(log).includes('tasks/cancel "task-1"'), { what: 'tasks/cancel for task-1' })
    expect(fileLines(log)).toContain('tools/call {"ttl":600}')
    expect(fileLines(log).filter((l) => l.startsWith('tasks/get')).length).toBeGreaterThan(0)
  })

  it("an abort cancels the task", async () => {
    const log = path.join(tempDir(), 'methods')
    const { manager } = await start({ t: { command: NODE, args: [TASK_SERVER, log] } })
    const controller = new AbortController()
    const pending = toolByName(manager, 'mcp_t_slow').execute('a', {}, controller.signal) as Promise<ToolResult>
    await waitUntil(() => fileLines(log).some((l) => l.startsWith('tasks/get')), { what: 'the first tasks/get' })
    controller.abort()
    await pending.catch(() => undefined)
    await waitUntil(() => fileLines(log).includes('tasks/cancel "task-1"'), { what: 'tasks/cancel for task-1' })
  })

  it('a required-task tool of a server that does not declare tasks is left out, named in a warning', async () => {
    const { manager, log } = await start({ t: { command: NODE, args: [TASK_SERVER, '', '--no-task-capability'] } })
    expect(manager.getAgentTools().map((t) => t.name)).toEqual(['mcp_t_quick'])
    expect(log.messages('warn')).toContain(
      "MCP server 't': tool 'slow' is left out: it runs only as a task, and the server does not declare tasks for tools/call",
    )
  })
})
