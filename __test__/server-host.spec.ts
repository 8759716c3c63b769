// McpServerHost: JS tools served as an MCP server (fixtures/host-server.mjs), driven by the
// TypeScript SDK v1 client over stdio and over Streamable HTTP (stateful and stateless).

import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { native, NODE, ROOT } from './helpers'

const FIXTURE = path.join(ROOT, '__test__', 'fixtures', 'host-server.mjs')

/** Every stderr line of the host, and a way to wait for one. */
class Lines {
  lines: string[] = []
  private waiters: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = []

  constructor(stream: Readable) {
    let partial = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      partial += chunk
      const parts = partial.split('\n')
      partial = parts.pop() ?? ''
      for (const line of parts) {
        this.lines.push(line)
        this.waiters = this.waiters.filter((w) => !(w.match(line) && (w.resolve(line), true)))
      }
    })
  }

  /** The first line (already seen or to come) that contains `text`. */
  waitFor(text: string): Promise<string> {
    const seen = this.lines.find((l) => l.includes(text))
    if (seen !== undefined) return Promise.resolve(seen)
    return new Promise((resolve) => this.waiters.push({ match: (l) => l.includes(text), resolve }))
  }
}

interface Connection {
  client: Client
  stderr: Lines
  transportErrors: Error[]
  close(): Promise<void>
  child?: ChildProcess
  url?: string
}

const open: Connection[] = []

afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => {})
})

function newClient(): Client {
  return new Client({ name: 'server-host-spec', version: '1.0.0' }, { capabilities: {} })
}

async function connectStdio(): Promise<Connection> {
  const transport = new StdioClientTransport({ command: NODE, args: [FIXTURE, 'stdio'], stderr: 'pipe' })
  const stderr = new Lines(transport.stderr as Readable)
  const transportErrors: Error[] = []
  const client = newClient()
  await client.connect(transport)
  // After connect: the client's own onerror hook is in place by now.
  const previous = transport.onerror
  transport.onerror = (e) => {
    transportErrors.push(e)
    previous?.(e)
  }
  const c: Connection = { client, stderr, transportErrors, close: () => client.close() }
  open.push(c)
  return c
}

async function startHttpHost(stateless: boolean): Promise<{ child: ChildProcess; stderr: Lines; url: string }> {
  const child = spawn(NODE, [FIXTURE, 'http', ...(stateless ? ['stateless'] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stderr = new Lines(child.stderr!)
  const stdout = new Lines(child.stdout!)
  const line = await stdout.waitFor('"url"')
  return { child, stderr, url: JSON.parse(line).url }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode })
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
}

async function connectHttp(stateless: boolean): Promise<Connection> {
  const { child, stderr, url } = await startHttpHost(stateless)
  const transport = new StreamableHTTPClientTransport(new URL(url))
  const transportErrors: Error[] = []
  const client = newClient()
  await client.connect(transport)
  const c: Connection = {
    client,
    stderr,
    transportErrors,
    child,
    url,
    close: async () => {
      await client.close().catch(() => {})
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL')
        await exited(child)
      }
    },
  }
  open.push(c)
  return c
}

const textOf = (result: any): string =>
  (result.content as any[]).filter((c) => c.type === 'text').map((c) => c.text).join('\n')

const transports = [
  ['stdio', () => connectStdio()],
  ['http', () => connectHttp(false)],
  ['http stateless', () => connectHttp(true)],
] as const

describe.each(transports)('McpServerHost over %s', (name, connect) => {
  const stateless = name === 'http stateless'

  it('initializes, lists the tools and calls one', async () => {
    const { client, stderr } = await connect()
    expect(client.getServerVersion()).toMatchObject({ name: 'host-fixture', version: '1.0.0' })
    expect(client.getInstructions()).toBe('Tools for the McpServerHost tests.')
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, logging: {} })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual([
      'echo', 'slow', 'long_operation', 'hang', 'quick_hang', 'throws', 'garbage', 'images', 'logs', 'structured', 'add_late',
    ])
    const echo = tools[0]
    expect(echo).toMatchObject({
      title: 'Echo',
      description: 'Echoes text back',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      annotations: { readOnlyHint: true },
    })
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } })
    expect(result.isError).toBeFalsy()
    expect(result.content).toEqual([{ type: 'text', text: 'hello' }])
    // The handler saw the request's JSON-RPC id.
    expect(await stderr.waitFor('EVENT echo request ')).toMatch(/EVENT echo request \d+/)
  })

  it('sends progress while a call runs', async () => {
    const { client } = await connect()
    const progress: Array<{ progress: number; total?: number; message?: string }> = []
    const result = await client.callTool({ name: 'slow', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    })
    expect(textOf(result)).toBe('slow done')
    expect(progress).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ])
  })

  it("a cancelled call aborts the handler's signal", async () => {
    const { client, stderr } = await connect()
    const controller = new AbortController()
    const call = client.callTool({ name: 'hang', arguments: {} }, undefined, { signal: controller.signal })
    await stderr.waitFor('EVENT hang started')
    controller.abort('the user gave up')
    await expect(call).rejects.toThrow()
    // Stateless, the client's notifications/cancelled is a request of its own that no call
    // belongs to: what ends the call is its HTTP request going away.
    if (stateless) await client.close()
    expect(await stderr.waitFor('EVENT hang aborted')).toBe(
      'EVENT hang aborted: the client cancelled the request or went away',
    )
    if (stateless) return
    // The host still serves.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after')
  })

  it('a call past its time limit is an error result and its signal aborts', async () => {
    const { client, stderr } = await connect()
    const result = await client.callTool({ name: 'quick_hang', arguments: {} })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toBe("Tool 'quick_hang' timed out after 300 ms")
    expect(await stderr.waitFor('EVENT quick_hang aborted')).toBe(
      'EVENT quick_hang aborted: the tool timed out after 300 ms',
    )
  })

  it('throws, garbage and invalid arguments are error results', async () => {
    const { client } = await connect()
    const thrown = await client.callTool({ name: 'throws', arguments: {} })
    expect(thrown).toMatchObject({ isError: true, content: [{ type: 'text', text: 'kaboom' }] })
    const garbage = await client.callTool({ name: 'garbage', arguments: {} })
    expect(garbage.isError).toBe(true)
    expect(textOf(garbage)).toContain("Tool 'garbage': the tool returned a number; expected { content: [...]")
    const invalid = await client.callTool({ name: 'echo', arguments: { text: 42 } })
    expect(invalid.isError).toBe(true)
    expect(textOf(invalid)).toMatch(/^Invalid arguments for tool 'echo': at \/text: 42 is not of type "string"/)
    const missing = await client.callTool({ name: 'echo', arguments: {} })
    expect(textOf(missing)).toContain('"text" is a required property')
    // An unknown tool is a protocol error (-32602).
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool: nope/)
  })

  it('structured content is checked and mirrored as text', async () => {
    const { client } = await connect()
    const result = await client.callTool({ name: 'structured', arguments: { n: 21 } })
    expect(result.structuredContent).toEqual({ doubled: 42 })
    expect(textOf(result)).toBe('{"doubled":42}')
  })

  it('the response rules cut a result with a notice', async () => {
    const { client } = await connect()
    const result = await client.callTool({ name: 'images', arguments: {} })
    const content = result.content as any[]
    expect(content.filter((c) => c.type === 'image')).toHaveLength(10)
    const notice = content[content.length - 1]
    expect(notice.type).toBe('text')
    expect(notice.text).toContain('dropped image (item 11): more than maxImages 10')
    expect(notice.text).toContain('dropped image (item 13): type image/svg+xml is not an allowed image type')
  })

  it('log messages follow the level the client sets', async () => {
    const { client } = await connect()
    const messages: any[] = []
    let heard: () => void = () => {}
    const warning = new Promise<void>((resolve) => (heard = resolve))
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      messages.push(n.params)
      if (n.params.level === 'warning') heard()
    })
    await client.setLoggingLevel('warning')
    expect(textOf(await client.callTool({ name: 'logs', arguments: {} }))).toBe('logged')
    await warning
    const warningOnly = [{ level: 'warning', data: { careful: true } }]
    // Stateless, there is no session to keep the level in: every request starts from 'debug'.
    expect(messages).toEqual(stateless ? [{ level: 'debug', data: 'a debug line' }, ...warningOnly] : warningOnly)
  })
})

describe.each(transports.slice(0, 2))('McpServerHost over %s, sessions', (_name, connect) => {
  it('a tool added while serving is announced with tools/list_changed', async () => {
    const { client } = await connect()
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    )
    expect(textOf(await client.callTool({ name: 'add_late', arguments: {} }))).toBe('added')
    await changed
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toContain('late')
    expect(textOf(await client.callTool({ name: 'late', arguments: {} }))).toBe('late')
  })
})

describe('McpServerHost over stdio, the process', () => {
  it('writes nothing but JSON-RPC to stdout and exits when stdin closes', async () => {
    const c = await connectStdio()
    await c.client.callTool({ name: 'logs', arguments: {} })
    await c.client.callTool({ name: 'echo', arguments: { text: 'x' } })
    expect(c.transportErrors).toEqual([])
    const started = performance.now()
    await c.client.close()
    // The transport ends stdin and waits up to 2 s before it signals: the host left by itself.
    expect(performance.now() - started).toBeLessThan(1500)
    expect(await c.stderr.waitFor('EVENT host stdin closed')).toBeTruthy()
  })
})

describe('McpServerHost over stdio, closed with a call in flight', () => {
  it('answers the call (an isError result naming the close) before the session ends', async () => {
    const transport = new StdioClientTransport({ command: NODE, args: [FIXTURE, 'stdio'], stderr: 'pipe' })
    const stderr = new Lines(transport.stderr as Readable)
    const client = newClient()
    await client.connect(transport)
    try {
      let first: () => void = () => {}
      const progressed = new Promise<void>((resolve) => (first = resolve))
      const answer = client.callTool({ name: 'long_operation', arguments: { duration: 30, steps: 300 } }, undefined, {
        onprogress: () => first(),
      })
      await progressed
      process.kill(transport.pid!, 'SIGTERM')
      expect(await answer).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: "Tool 'long_operation' was cancelled: the MCP server host closed" }],
      })
      expect(await stderr.waitFor('EVENT long_operation aborted')).toContain('the MCP server host closed')
      await stderr.waitFor('EVENT host closed')
    } finally {
      await client.close().catch(() => {})
    }
  })
})

describe('McpServerHost over HTTP, the server', () => {
  it('refuses other origins, answers only on its path and lets the process exit after close()', async () => {
    const { child, stderr, url } = await startHttpHost(false)
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }
      const post = (to: string, headers: Record<string, string> = {}) =>
        fetch(to, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify(initialize),
        })
      const evil = await post(url, { origin: 'https://evil.example' })
      expect(evil.status).toBe(403)
      await evil.body?.cancel()
      const port = new URL(url).port
      const local = await post(url, { origin: `http://localhost:${port}` })
      expect(local.status).toBe(200)
      expect(local.headers.get('mcp-session-id')).toBeTruthy()
      await local.body?.cancel()
      const elsewhere = await post(url.replace('/mcp', '/other'))
      expect(elsewhere.status).toBe(404)
      await elsewhere.body?.cancel()

      // A call in flight when the host closes has its signal aborted, saying so, and the client
      // gets an answer saying so before its session ends (it used to get none and wait).
      const client = newClient()
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      const answer = client.callTool({ name: 'hang', arguments: {} })
      await stderr.waitFor('EVENT hang started')
      child.kill('SIGTERM')
      expect(await stderr.waitFor('EVENT hang aborted')).toBe('EVENT hang aborted: the MCP server host closed')
      expect(await answer).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: "Tool 'hang' was cancelled: the MCP server host closed" }],
      })
      await stderr.waitFor('EVENT host closed')
      await client.close()
      // Nothing of the host holds the event loop any more.
      expect(await exited(child)).toEqual({ code: 0, signal: null })
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  })
})

describe('McpServerHost in this process', () => {
  const { McpServerHost } = native

  const tool = {
    name: 'ok',
    description: 'ok',
    inputSchema: { type: 'object' as const },
    handler: () => 'ok',
  }

  it('checks its options and tools, naming the field', () => {
    expect(() => new McpServerHost({ version: '1' } as any)).toThrow(TypeError)
    expect(() => new McpServerHost({ version: '1' } as any)).toThrow('McpServerHost: name must be a non-empty string')
    expect(() => new McpServerHost({ name: 'n', version: '1', limits: 'strict' as any })).toThrow(
      /McpServerHost: limits must be 'openclaw' or an object/,
    )
    expect(() => new McpServerHost({ name: 'n', version: '1', toolTimeoutMs: -1 })).toThrow(
      /toolTimeoutMs must be a whole number/,
    )
    const host = new McpServerHost({ name: 'n', version: '1' })
    const bad: Array<[any, RegExp]> = [
      [null, /^addTool: the tool must be an object/],
      [{ ...tool, handler: 'x' }, /^addTool: handler must be a function, got a string$/],
      [{ ...tool, name: 'has space' }, /^addTool: name contains ' '/],
      [{ ...tool, name: 'x'.repeat(129) }, /^addTool: name is 129 characters long/],
      [{ ...tool, inputSchema: { type: 'string' } }, /^addTool: inputSchema must have type: 'object'$/],
      [{ ...tool, inputSchema: undefined }, /^addTool: inputSchema must be a JSON Schema object/],
      [{ ...tool, outputSchema: { type: 'array' } }, /^addTool: outputSchema must have type: 'object'$/],
      [{ ...tool, timeoutMs: 0 }, /^addTool: timeoutMs must be a whole number/],
      [{ ...tool, inputschema: {} }, /^addTool: inputschema is not a field of a tool definition/],
    ]
    for (const [definition, message] of bad) {
      expect(() => host.addTool(definition), JSON.stringify(definition)).toThrow(TypeError)
      expect(() => host.addTool(definition)).toThrow(message)
    }
    host.addTool(tool)
    expect(() => host.addTool(tool)).toThrow("addTool: a tool named 'ok' was already added")
    expect(host.toolNames()).toEqual(['ok'])
    expect(host.removeTool('ok')).toBe(true)
    expect(host.removeTool('ok')).toBe(false)
    expect(() => host.serveHttp({ port: 70000 })).toThrow(/serveHttp: port must be/)
  })

  it('does not keep Node alive before serving or after close()', async () => {
    const script = `
      const { McpServerHost } = require(${JSON.stringify(path.join(ROOT, 'index.js'))})
      const host = new McpServerHost({ name: 'n', version: '1' })
      host.addTool({ name: 'ok', inputSchema: { type: 'object' }, handler: () => 'ok' })
      if (process.argv[1] === 'serve') {
        host.serveHttp().then(({ url }) => { console.log(url); return host.close() }).then(() => console.error('closed'))
      }
    `
    for (const arg of ['idle', 'serve']) {
      const child = spawn(NODE, ['-e', script, arg], { stdio: ['ignore', 'pipe', 'pipe'] })
      const stderr = new Lines(child.stderr!)
      const result = await exited(child)
      expect(result, `${arg}: ${stderr.lines.join('\n')}`).toEqual({ code: 0, signal: null })
      if (arg === 'serve') expect(stderr.lines).toContain('closed')
    }
  })

  it('a served host can be called in-process over HTTP and closed twice', async () => {
    const host = new McpServerHost({ name: 'inproc', version: '2' })
    host.addTool({
      name: 'sum',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      handler: async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
    })
    const { url } = await host.serveHttp({ stateless: true })
    await expect(host.serveHttp()).rejects.toThrow('serveHttp: already serving HTTP')
    const client = newClient()
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    expect(textOf(await client.callTool({ name: 'sum', arguments: { a: 2, b: 3 } }))).toBe('5')
    await client.close()
    await host.close()
    await host.close()
    await expect(host.serveStdio()).rejects.toThrow('serveStdio: the host is closed')
    await expect(fetch(url, { method: 'POST' })).rejects.toThrow()
  })
})
