// What servers ask of their client (issue 14, part 1): sampling, elicitation (form and URL
// modes) and roots answered by the host's callbacks, against server-everything (stdio and
// Streamable HTTP) and a Python `mcp` server that elicits with a schema.

import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  faultServer,
  NODE,
  RecordingLogger,
  startEverythingHttp,
  ROOT,
  toolByName,
  waitUntil,
  wrappedBody,
  type ManagerConfig,
  type ManagerOptions,
  type ServerConfig,
  type ToolResult,
} from './helpers'

afterEach(cleanup)

const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
const PYTHON = process.env.PYTHON ?? 'python3'
const stdio: ServerConfig = { command: NODE, args: [EVERYTHING, 'stdio'] }

async function start(servers: Record<string, ServerConfig>, options: Record<string, unknown> = {}, wantTools: string[] = []) {
  const log = new RecordingLogger()
  const manager = createManager({ servers } as ManagerConfig, { logger: log.logger, ...options } as ManagerOptions)
  await manager.start()
  // server-everything offers these tools only to a client that declared the capability, in a
  // tools/list_changed right after the handshake.
  await waitUntil(() => wantTools.every((t) => manager.getAgentTools().some((x) => x.name === t)), {
    timeout: 15_000,
    what: () => `tools ${wantTools.join(', ')} (have: ${manager.getAgentTools().map((t) => t.name).join(', ')})`,
  })
  return { manager, log }
}

const call = (manager: ReturnType<typeof createManager>, name: string, args: Record<string, unknown> = {}) =>
  toolByName(manager, name).execute('c', args) as Promise<ToolResult>
const text = (r: ToolResult) => ('error' in r.details ? r.content[0].text : wrappedBody(r))

const reply = { role: 'assistant', content: { type: 'text', text: 'a reply from the host model' }, model: 'host-model', stopReason: 'endTurn' }

describe('sampling', () => {
  it('a callback that answers, throws or times out (its signal aborted)', async () => {
    const seen: Array<{ request: any; server: string }> = []
    let mode: 'answer' | 'throw' | 'hang' = 'answer'
    let aborted = false
    const { manager } = await start(
      { e: { ...stdio, toolTimeout: 1500 } },
      {
        sampling: async (request: any, { server, signal }: { server: string; signal: AbortSignal }) => {
          seen.push({ request, server })
          if (mode === 'throw') throw new Error('no model today')
          if (mode === 'hang') {
            await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
            aborted = true
            return reply
          }
          return reply
        },
      },
      ['mcp_e_trigger-sampling-request'],
    )
    const ok = await call(manager, 'mcp_e_trigger-sampling-request', { prompt: 'hello', maxTokens: 5 })
    expect(text(ok)).toContain('a reply from the host model')
    expect(seen[0].server).toBe('e')
    expect(seen[0].request.messages[0].content.text).toContain('hello')
    expect(seen[0].request.maxTokens).toBe(5)

    mode = 'throw'
    const thrown = await call(manager, 'mcp_e_trigger-sampling-request', { prompt: 'x' })
    expect(text(thrown)).toContain('the sampling callback failed: no model today')

    // The server's own call times out at the same toolTimeout; the callback's signal fires.
    mode = 'hang'
    await call(manager, 'mcp_e_trigger-sampling-request', { prompt: 'x' })
    await waitUntil(() => aborted, { what: 'the sampling signal to abort' })
  })

  it('without a callback nothing is declared: the tool is not offered', async () => {
    const { manager } = await start({ e: stdio })
    const names = manager.getAgentTools().map((t) => t.name)
    expect(names).toContain('mcp_e_echo')
    expect(names).not.toContain('mcp_e_trigger-sampling-request')
    expect(names).not.toContain('mcp_e_trigger-elicitation-request')
    expect(names).not.toContain('mcp_e_get-roots-list')
  })
})

describe('elicitation', () => {
  it('server-everything over Streamable HTTP: accept, decline, and an invalid answer never sent', async () => {
    const { url } = await startEverythingHttp()
    let answer: unknown = { action: 'accept', content: { name: 'Ada', check: true, integer: 7 } }
    const requests: any[] = []
    const { manager, log } = await start(
      { e: { transport: 'http', url } as ServerConfig },
      {
        elicitation: (request: any) => {
          requests.push(request)
          return answer
        },
      },
      ['mcp_e_trigger-elicitation-request'],
    )
    const accepted = await call(manager, 'mcp_e_trigger-elicitation-request')
    expect(text(accepted)).toContain('Ada')
    expect(requests[0].requestedSchema.properties.name.type).toBe('string')

    answer = { action: 'decline' }
    expect(text(await call(manager, 'mcp_e_trigger-elicitation-request'))).toMatch(/decline/i)

    // integer 1000 is past the schema's maximum 100: the server gets an error, not the content.
    answer = { action: 'accept', content: { name: 'Ada', integer: 1000 } }
    const invalid = await call(manager, 'mcp_e_trigger-elicitation-request')
    expect(text(invalid)).not.toContain('1000')
    expect(log.all('warn').some((e) => /elicitation request answered with an error: the elicitation answer does not match requestedSchema/.test(e.msg))).toBe(true)

    answer = 'yes please'
    await call(manager, 'mcp_e_trigger-elicitation-request')
    expect(log.all('warn').some((e) => /the elicitation callback's answer is not \{ action/.test(e.msg))).toBe(true)
  })

  it('a Python server eliciting with a schema: a valid answer reaches the tool, an invalid one never does', async () => {
    let answer: unknown = { action: 'accept', content: { name: 'Grace', age: 85 } }
    const { manager } = await start(
      { py: { command: PYTHON, args: [path.join(ROOT, 'tests', 'peers', 'py_elicit.py')] } },
      { elicitation: () => answer },
    )
    expect(text(await call(manager, 'mcp_py_register'))).toBe('accepted: Grace (85)')
    answer = { action: 'accept', content: { name: 'Grace', age: -1 } }
    const invalid = text(await call(manager, 'mcp_py_register'))
    expect(invalid).toMatch(/elicitation failed: .*does not match requestedSchema/)
    expect(invalid).not.toContain('-1)')
    answer = { action: 'cancel' }
    expect(text(await call(manager, 'mcp_py_register'))).toBe('no answer: cancel')
  })

  it('URL mode over stdio: the callback gets the URL and the elicitation id', async () => {
    const requests: any[] = []
    const { manager } = await start(
      { e: stdio },
      {
        elicitation: (request: any) => {
          requests.push(request)
          return { action: 'accept' }
        },
      },
      ['mcp_e_trigger-url-elicitation'],
    )
    const r = await call(manager, 'mcp_e_trigger-url-elicitation', { url: 'https://example.invalid/login', elicitationId: 'el-1' })
    expect(requests[0]).toMatchObject({ mode: 'url', url: 'https://example.invalid/login', elicitationId: 'el-1' })
    expect(text(r)).toMatch(/accept/i)
  })

  it('without a callback an elicitation is declined, as before', async () => {
    const { manager } = await start({ py: { command: PYTHON, args: [path.join(ROOT, 'tests', 'peers', 'py_elicit.py')] } })
    expect(text(await call(manager, 'mcp_py_register'))).toBe('no answer: decline')
  })
})

describe('roots', () => {
  it('an array, then setRoots: the server is told and re-reads them', async () => {
    const { manager } = await start(
      { e: stdio, py: { command: PYTHON, args: [path.join(ROOT, 'tests', 'peers', 'py_elicit.py')] } },
      { roots: [{ uri: 'file:///work/a', name: 'a' }] },
      ['mcp_e_get-roots-list'],
    )
    const logs: string[] = []
    manager.on('serverLog', (p: { data: unknown }) => logs.push(String(p.data)))
    expect(text(await call(manager, 'mcp_e_get-roots-list'))).toContain('URI: file:///work/a')
    expect(text(await call(manager, 'mcp_py_roots'))).toBe('file:///work/a a')

    await manager.setRoots(async ({ server }: { server: string }) => [{ uri: `file:///work/${server}` }, { uri: 'file:///shared', name: 'shared' }])
    // server-everything caches roots and asks again on roots/list_changed (it logs when it has).
    await waitUntil(() => logs.some((l) => l.includes('Roots updated: 2 root(s)')), { what: 'server-everything to re-read its roots' })
    expect(text(await call(manager, 'mcp_e_get-roots-list'))).toContain('URI: file:///work/e')
    expect(text(await call(manager, 'mcp_py_roots'))).toBe('file:///work/py\nfile:///shared shared')
  })

  it('without the roots option no capability is declared and roots/list is Method not found (-32601), as on the TypeScript SDK', async () => {
    const { manager, log } = await start({ f: faultServer(['--ask-roots']) })
    expect(text(await call(manager, 'mcp_f_roots'))).toMatch(/^error -32601: /)
    // The spec's answer for a capability never declared is not a failure worth a warning.
    expect(log.messages('warn')).toEqual([])
    await manager.shutdown()
    const given = await start({ f: faultServer(['--ask-roots']) }, { roots: [{ uri: 'file:///work/a', name: 'a' }] })
    expect(JSON.parse(text(await call(given.manager, 'mcp_f_roots')))).toEqual({ roots: [{ uri: 'file:///work/a', name: 'a' }] })
  })

  it('bad roots and callbacks are named; setRoots without the roots option rejects', async () => {
    expect(() => createManager({ servers: {} }, { roots: [{ uri: 'https://x' }] } as never)).toThrow("Invalid roots: roots[0].uri must be a file:// URI, got 'https://x'")
    expect(() => createManager({ servers: {} }, { roots: 'file:///x' } as never)).toThrow(/Invalid roots: expected an array of \{ uri, name\? \} or a function returning one, got a string/)
    expect(() => createManager({ servers: {} }, { sampling: 42 } as never)).toThrow('Invalid sampling: expected a function, got a number')
    const m = createManager({ servers: {} })
    await expect(m.setRoots([{ uri: 'file:///x' }])).rejects.toThrow(/without the roots option/)
    const r = createManager({ servers: {} }, { roots: [] } as never)
    await expect(r.setRoots([{ name: 'no uri' }] as never)).rejects.toThrow('Invalid setRoots: roots: roots[0].uri must be a string')
  })
})
