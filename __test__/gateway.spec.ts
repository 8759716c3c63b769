// The gateway (manager.serve()) and the CLI's `serve`, with real clients: the TypeScript SDK v1
// client driver (fixtures/clients) over stdio and Streamable HTTP, in front of the built-in
// example and the fault server. server-clients.spec.ts runs all three client SDKs through the
// gateway in front of server-everything.
import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, CLI, createManager, echoServer, faultServer, NODE, ROOT, tempDir, trackPids } from './helpers'

afterEach(cleanup)

const DRIVER = path.join(ROOT, '__test__', 'fixtures', 'clients', 'sdk-v1-client.mjs')
const GATEWAY = path.join(ROOT, '__test__', 'fixtures', 'gateway-process.mjs')

interface Line { op: string; ok: boolean; step?: number; result?: any; error?: { message: string } }

function drive(script: object): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    execFile(NODE, [DRIVER, JSON.stringify({ timeoutMs: 40_000, ...script })], { timeout: 50_000, killSignal: 'SIGKILL', maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const lines = stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Line)
      if (error && lines.length === 0) reject(new Error(`driver failed: ${error.message}\n${stderr}`))
      else resolve(lines)
    })
  })
}
const step = (lines: Line[], i: number) => lines.find((l) => l.step === i)!
const texts = (l: Line) => (l.result?.content ?? []).filter((c: any) => c.type === 'text').map((c: any) => c.text).join('\n')

describe('openclaw-mcp-native serve', () => {
  it('serves the built-in example over stdio: the manager names, results wrapped', async () => {
    const lines = await drive({
      connect: { command: NODE, args: [CLI, 'serve'] },
      steps: [{ op: 'listTools' }, { op: 'callTool', name: 'mcp_example_add', args: { a: 40, b: 2 } }],
    })
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    expect(step(lines, 0).result.tools.map((t: any) => t.name)).toEqual(['mcp_example_echo', 'mcp_example_add', 'mcp_example_current_time', 'mcp_example_word_count'])
    expect(texts(step(lines, 1))).toMatch(/\nFrom: example\n---\n42\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>$/)
  })

  it('serves over plain pipes too (a shell pipeline: stdin and stdout are FIFOs, not sockets), and ends when stdin closes', async () => {
    // Node gives its children socket pairs; a shell's `|` gives pipes, read through a
    // description of their own (src/server/process_stdio.rs).
    const child = spawn('sh', ['-c', `cat | "${NODE}" "${CLI}" serve --quiet | cat`], { stdio: ['pipe', 'pipe', 'pipe'] })
    trackPids(child.pid!)
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    const answers: any[] = []
    const waiting: Array<() => void> = []
    let buffered = ''
    child.stdout.on('data', (d) => {
      buffered += d
      let nl
      while ((nl = buffered.indexOf('\n')) >= 0) {
        answers.push(JSON.parse(buffered.slice(0, nl)))
        buffered = buffered.slice(nl + 1)
        waiting.shift()?.()
      }
    })
    const request = (id: number, method: string, params: object) => {
      const answered = new Promise<void>((resolve) => waiting.push(resolve))
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
      return answered.then(() => answers.find((a) => a.id === id))
    }
    const init = await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipes', version: '0' } })
    expect(init.result.serverInfo).toBeDefined()
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
    // One answer bigger than a pipe holds (64 KiB): written as the reader drains it.
    const text = 'x'.repeat(200_000)
    const called = await request(2, 'tools/call', { name: 'mcp_example_echo', arguments: { text } })
    expect(called.result.content[0].text).toContain(`\n---\n${text}\n<<<END_EXTERNAL_UNTRUSTED_CONTENT`)
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.stdin.end()
    expect(await exited, err).toBe(0)
  })

  it('--http 0 prints the URL, serves Streamable HTTP, and stops on SIGTERM', async () => {
    const child = spawn(NODE, [CLI, 'serve', '--http', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    trackPids(child.pid!)
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    const url = await new Promise<string>((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (d) => {
        out += d
        const m = /^(http:\/\/127\.0\.0\.1:\d+\/mcp)$/m.exec(out)
        if (m) resolve(m[1])
      })
      child.on('exit', (code) => reject(new Error(`serve exited (${code}): ${err}`)))
    })
    const lines = await drive({ connect: { url }, steps: [{ op: 'callTool', name: 'mcp_example_echo', args: { text: 'over http' } }] })
    expect(texts(step(lines, 0))).toContain('\n---\nover http\n')
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(err).toMatch(/Serving 4 tools at http:\/\/127\.0\.0\.1:\d+\/mcp/)
  })

  it("the gateway's options: --names upstream, --no-wrap, --servers, --allow/--deny", async () => {
    const config = path.join(tempDir(), 'mcp.json')
    fs.writeFileSync(config, JSON.stringify({ servers: { example: echoServer(), fault: faultServer() } }))
    const lines = await drive({
      connect: {
        command: NODE,
        args: [CLI, 'serve', '--config', config, '--names', 'upstream', '--no-wrap', '--servers', 'example', '--allow', 'mcp_example_*', '--deny', '*_current_time'],
      },
      steps: [{ op: 'listTools' }, { op: 'callTool', name: 'add', args: { a: 40, b: 2 } }],
    })
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    // The servers' own names, of the one server shown, minus what deny leaves out.
    expect(step(lines, 0).result.tools.map((t: any) => t.name)).toEqual(['echo', 'add', 'word_count'])
    // The result as the server sent it: no untrusted-content wrapper.
    expect(step(lines, 1).result.content).toEqual([{ type: 'text', text: '42' }])
  })

  it('--results rich and --limits reach the gateway', async () => {
    const config = path.join(tempDir(), 'mcp.json')
    fs.writeFileSync(config, JSON.stringify({ servers: { fault: faultServer(['--rich']) } }))
    const lines = await drive({
      connect: { command: NODE, args: [CLI, 'serve', '--config', config, '--results', 'rich', '--limits', '{"maxImages":1}'] },
      steps: [{ op: 'callTool', name: 'mcp_fault_images', args: { count: 3, kind: 'png' } }],
    })
    const content = step(lines, 0).result.content
    // Rich mode passes images on; the limit keeps one and says what it dropped.
    expect(content.filter((c: any) => c.type === 'image')).toHaveLength(1)
    expect(texts(step(lines, 0))).toContain('dropped image (item')
    expect(texts(step(lines, 0))).toContain('more than maxImages 1')
  })

  it("a bad gateway option is a usage error naming the flag, before any server starts", async () => {
    const run = (...args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) =>
        execFile(NODE, [CLI, 'serve', ...args], (error, _out, stderr) => resolve({ code: error ? (error as any).code : 0, stderr })))
    const cases: Array<[string[], string]> = [
      [['--names', 'server'], "--names: expected 'manager' or 'upstream', got 'server'"],
      [['--results', 'fancy'], "--results: expected 'compat' or 'rich', got 'fancy'"],
      [['--schemas', 'exact'], "--schemas: expected 'compat' or 'faithful', got 'exact'"],
      [['--servers', 'nope'], "--servers: no enabled server named 'nope' (servers: example)"],
      [['--deny', 'a,,b'], "--deny: expected a comma-separated list without empty entries, got 'a,,b'"],
      [['--limits', '{"maxImages":-1}'], '--limits: limits.maxImages must be a non-negative integer'],
      [['--limits', '{"maxImage":1}'], '--limits: limits.maxImage is not a known limit'],
      [['--limits', 'strict'], "--limits: expected 'openclaw', a JSON object or @FILE"],
      [['--no-wrap=yes'], '--no-wrap takes no value'],
    ]
    for (const [args, message] of cases) {
      const r = await run(...args)
      expect({ args, code: r.code }).toEqual({ args, code: 2 })
      expect(r.stderr).toContain(message)
      // Nothing was started: no start display.
      expect(r.stderr).not.toMatch(/ready|starting|connected|Serving/)
    }
  })

  it('--host without --http is a usage error naming the flag', async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(NODE, [CLI, 'serve', '--host', '0.0.0.0'], (error, _out, stderr) => resolve({ code: error ? (error as any).code : 0, stderr })))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--host needs --http PORT')
  })
})

describe('manager.serve() in front of the fault server', () => {
  it('cuts a response over the openclaw limits with a notice; a crashing upstream is an error result and the gateway goes on', async () => {
    const dir = tempDir()
    const config = path.join(dir, 'gateway.json')
    fs.writeFileSync(config, JSON.stringify({ servers: { fault: { ...faultServer(['--rich']), results: 'rich', restartOnCrash: false } } }))
    const lines = await drive({
      connect: { command: NODE, args: [GATEWAY, config, 'stdio', JSON.stringify({ limits: 'openclaw' })] },
      steps: [
        { op: 'callTool', name: 'mcp_fault_images', args: { count: 12, kind: 'png' } },
        { op: 'callTool', name: 'mcp_fault_exit', args: { code: 1 } },
        { op: 'ping' },
        // The gateway announces the crashed server's tools gone (the call can fail a moment
        // before the manager has taken the server out).
        { op: 'toolsChanged', since: 1 },
        { op: 'listTools' },
      ],
    })
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    const images = step(lines, 0)
    expect(images.ok, JSON.stringify(images.error)).toBe(true)
    const parts = images.result.content
    expect(parts.filter((c: any) => c.type === 'image')).toHaveLength(10)
    expect(texts(images)).toMatch(/more than maxImages 10/)
    const crashed = step(lines, 1)
    expect(crashed.ok === false || crashed.result.isError === true, JSON.stringify(crashed)).toBe(true)
    expect(step(lines, 2)).toMatchObject({ op: 'ping', ok: true })
    expect(step(lines, 3), JSON.stringify(step(lines, 3))).toMatchObject({ op: 'toolsChanged', ok: true })
    // The crashed server's tools are gone from the list (it is not restarted here).
    expect(step(lines, 4).result.tools).toEqual([])
  })

  it('bad options throw a TypeError naming them; after shutdown serve() rejects', async () => {
    const manager = createManager({ servers: { echo: echoServer() } })
    expect(() => manager.serve({ transport: 'ws' } as any)).toThrow(TypeError)
    expect(() => manager.serve({ transport: 'ws' } as any)).toThrow("serve: options.transport must be 'stdio' or 'http', got \"ws\"")
    expect(() => manager.serve({ transport: 'stdio', port: 3 } as any)).toThrow("serve: options.port applies to transport 'http'")
    expect(() => manager.serve({ transport: 'http', view: { servers: ['nope'] } } as any)).toThrow(/serve: .*nope/)
    expect(() => (manager.serve as any)(42)).toThrow(/serve: options must be an object/)
    await manager.start()
    const gateway = await manager.serve({ transport: 'http' })
    expect(gateway!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    await manager.shutdown()
    await expect(manager.serve({ transport: 'http' })).rejects.toThrow('serve: the manager is shut down')
    await gateway!.close()
  })
})

describe('manager.serve({ wrap: false }): the servers\' content, redacted, not wrapped', () => {
  it('passes text, image, audio, resource links and isError through, masks secrets, and relays the servers\' logs at the client\'s level', async () => {
    const secret = 'gw-secret-value-5e6f7a'
    const dir = tempDir()
    const config = path.join(dir, 'gateway.json')
    fs.writeFileSync(config, JSON.stringify({
      servers: { fault: faultServer(['--rich', '--logging'], { env: { TOKEN: 'secret://env/MCP_NATIVE_GW_TOKEN' } }) },
    }))
    const lines = await drive({
      connect: { command: NODE, args: [GATEWAY, config, 'stdio', JSON.stringify({ wrap: false })], env: { MCP_NATIVE_GW_TOKEN: secret } },
      steps: [
        { op: 'setLoggingLevel', level: 'warning' },
        { op: 'callTool', name: 'mcp_fault_image', args: {} },
        { op: 'callTool', name: 'mcp_fault_mixed', args: {} },
        { op: 'callTool', name: 'mcp_fault_is_error', args: {} },
        { op: 'callTool', name: 'mcp_fault_env', args: { name: 'TOKEN' } },
        { op: 'callTool', name: 'mcp_fault_log', args: { level: 'info', data: 'below the level' } },
        { op: 'callTool', name: 'mcp_fault_log', args: { level: 'error', data: { said: `token ${secret}` } } },
        { op: 'callTool', name: 'mcp_fault_echo', args: { text: 'last' } },
      ],
    })
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    for (let i = 0; i < 8; i++) expect(step(lines, i).ok, JSON.stringify(step(lines, i))).toBe(true)
    expect(step(lines, 1).result.content).toEqual([
      { type: 'text', text: 'an image follows' },
      { type: 'image', data: expect.any(String), mimeType: 'image/png' },
    ])
    expect(step(lines, 1).result.isError).toBeFalsy()
    expect(step(lines, 2).result.content).toEqual([
      { type: 'text', text: 'first' },
      { type: 'text', text: '' },
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'fault://text/alpha', name: 'alpha' },
      { type: 'text', text: 'last' },
    ])
    expect(step(lines, 3).result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'tool reported an error' }] })
    expect(step(lines, 4).result.content).toEqual([{ type: 'text', text: '[REDACTED]' }])
    expect(texts(step(lines, 7))).toBe('last')
    // The server's log messages: only those at or above the level set, its name as logger
    // (with its own logger after it), the secret masked; nothing of the secret anywhere.
    const logs = lines.flatMap((l: any) => l.logs ?? [])
    expect(logs).toEqual([{ level: 'error', logger: 'fault/fault', data: { said: 'token [REDACTED]' } }])
    expect(JSON.stringify(lines)).not.toContain(secret)
  })

  it('wrap: true (the default) still wraps; a wrong wrap is a TypeError naming it', async () => {
    const manager = createManager({ servers: { echo: echoServer() } })
    expect(() => manager.serve({ transport: 'stdio', wrap: 'no' } as any)).toThrow('serve: options.wrap must be true or false, got a string')
    await manager.shutdown()
  })
})

describe('the gateway closed with a call in flight', () => {
  it.each(['close', 'shutdown'] as const)('%s(): the SDK v1 client gets an isError answer naming it, over HTTP', async (how) => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const manager = createManager({ servers: { fault: faultServer() } })
    await manager.start()
    const gateway = await manager.serve({ transport: 'http' })
    const client = new Client({ name: 'gateway-spec', version: '1.0.0' }, { capabilities: {} })
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway!.url)))
    try {
      let first: () => void = () => {}
      const progressed = new Promise<void>((resolve) => (first = resolve))
      const answer = client.callTool({ name: 'mcp_fault_slow', arguments: { ms: 60_000 } }, undefined, { onprogress: () => first() })
      await progressed
      await (how === 'close' ? gateway!.close() : manager.shutdown())
      const result: any = await answer
      expect(result.isError).toBe(true)
      // close(): the gateway's own answer. shutdown() also stops the upstream server, and
      // whichever ends the call first answers it: the gateway, or the manager's error result.
      const said = texts({ op: 'x', ok: true, result })
      if (how === 'close') expect(said).toBe("Tool 'mcp_fault_slow' was cancelled: the MCP gateway closed")
      else expect(said).toMatch(/^(Tool 'mcp_fault_slow' was cancelled: the MCP gateway closed|MCP tool error \(fault\/slow\): .+)$/)
    } finally {
      await client.close().catch(() => {})
      await gateway!.close()
      await manager.shutdown()
    }
  })
})

describe('the servers\' logs and 2026-07-28 requests', () => {
  it('a 2026-07-28 call gets the called server\'s logs only when its _meta asks, at that level', async () => {
    const secret = 'gw-2026-secret-3c4d'
    const manager = createManager({ servers: { fault: faultServer(['--logging'], { env: { TOKEN: 'secret://env/MCP_NATIVE_GW_2026' } }) } })
    process.env.MCP_NATIVE_GW_2026 = secret
    try {
      await manager.start()
      const gateway = await manager.serve({ transport: 'http', stateless: true })
      /** One tools/call at 2026-07-28; resolves the JSON frames of its SSE response. */
      const call = async (id: number, args: object, logLevel?: string) => {
        const meta: Record<string, unknown> = {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'gateway-spec', version: '1' },
        }
        if (logLevel) meta['io.modelcontextprotocol/logLevel'] = logLevel
        const response = await fetch(gateway!.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': 'mcp_fault_log',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'mcp_fault_log', arguments: args, _meta: meta } }),
        })
        const body = await response.text()
        return body.split('\n').filter((l) => l.startsWith('data:') && l.length > 6).map((l) => JSON.parse(l.slice(5)))
      }
      const logsOf = (frames: any[]) => frames.filter((f) => f.method === 'notifications/message').map((f) => f.params)
      // The env secret, to be masked: the fault server logs what it is given.
      const data = { said: `token ${secret}` }
      const unasked = await call(1, { level: 'error', data })
      expect(unasked.at(-1).result, JSON.stringify(unasked)).toBeTruthy()
      expect(logsOf(unasked)).toEqual([])
      const asked = await call(2, { level: 'error', data }, 'warning')
      expect(asked.at(-1).result, JSON.stringify(asked)).toBeTruthy()
      expect(logsOf(asked)).toEqual([{ level: 'error', logger: 'fault/fault', data: { said: 'token [REDACTED]' } }])
      const below = await call(3, { level: 'info', data: 'quiet' }, 'warning')
      expect(logsOf(below)).toEqual([])
      await gateway!.close()
    } finally {
      delete process.env.MCP_NATIVE_GW_2026
      await manager.shutdown()
    }
  })
})
