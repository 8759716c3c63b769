// The gateway's resources, prompts and completions (manager.serve()), with a real client (the
// TypeScript SDK v1 client driver, fixtures/clients) over stdio and Streamable HTTP, in front of
// real upstreams: server-everything and conformance-catalog.mjs (an SDK server with the
// conformance runner's resources and prompts, and a secret in one resource and one prompt).
import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, createManager, echoServer, faultServer, NODE, printedUrl, ROOT, tempDir, trackPids } from './helpers'

afterEach(cleanup)

const DRIVER = path.join(ROOT, '__test__', 'fixtures', 'clients', 'sdk-v1-client.mjs')
const GATEWAY = path.join(ROOT, '__test__', 'fixtures', 'gateway-process.mjs')
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
const CATALOG = path.join(ROOT, '__test__', 'fixtures', 'conformance-catalog.mjs')
const TOKEN = 'gw-catalog-token-5f1e9a7c3b'

interface Line { op: string; ok: boolean; step?: number; result?: any; error?: { message: string; code?: number } }

function drive(script: object): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    execFile(
      NODE,
      [DRIVER, JSON.stringify({ timeoutMs: 40_000, ...script })],
      { timeout: 50_000, killSignal: 'SIGKILL', maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const lines = stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Line)
        if (error && lines.length === 0) reject(new Error(`driver failed: ${error.message}\n${stderr}`))
        else resolve(lines)
      },
    )
  })
}
const step = (lines: Line[], i: number) => lines.find((l) => l.step === i)!
const ok = (lines: Line[], i: number) => {
  const l = step(lines, i)
  expect(l.ok, JSON.stringify(l.error)).toBe(true)
  return l.result
}

/** A config file for gateway-process.mjs; the catalog server gets the token as a secret. */
function config(servers: Record<string, object>): string {
  const file = path.join(tempDir(), 'gateway.json')
  fs.writeFileSync(file, JSON.stringify({ servers }))
  return file
}
const catalog = { command: NODE, args: [CATALOG], env: { CATALOG_TOKEN: 'secret://env/GW_CATALOG_TOKEN' } }
const everything = { command: NODE, args: [EVERYTHING] }
const secretEnv = { GW_CATALOG_TOKEN: TOKEN }

/** gateway-process.mjs over HTTP; resolves its URL. Stopped by closing its stdin (cleanup kills
 *  it otherwise). */
function startHttp(file: string, options: object = {}): Promise<string> {
  const child = spawn(NODE, [GATEWAY, file, 'http', JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...secretEnv },
  })
  trackPids(child.pid!)
  return printedUrl(child, 'gateway')
}

const TRANSPORTS = [
  { name: 'stdio', connect: async (file: string, options: object = {}) => ({ command: NODE, args: [GATEWAY, file, 'stdio', JSON.stringify(options)], env: secretEnv }) },
  { name: 'http', connect: async (file: string, options: object = {}) => ({ url: await startHttp(file, options) }) },
]

describe.each(TRANSPORTS)('manager.serve() resources and prompts over $name', (transport) => {
  it('lists, reads (routed by listing and by template), gets prompts and completes; secrets masked; unknowns are errors', async () => {
    const file = config({ everything, catalog })
    const lines = await drive(
      {
        connect: await transport.connect(file),
        steps: [
          { op: 'listResources' },
          { op: 'listResourceTemplates' },
          { op: 'readResource', uri: 'test://static-text' },
          { op: 'readResource', uri: 'test://static-binary' },
          { op: 'readResource', uri: 'demo://resource/dynamic/text/7' },
          { op: 'readResource', uri: 'test://template/42/data' },
          { op: 'readResource', uri: 'test://secret-note' },
          { op: 'readResource', uri: 'nope://nothing' },
          { op: 'listPrompts' },
          { op: 'getPrompt', name: 'mcp_catalog_test_prompt_with_arguments', args: { arg1: 'one', arg2: 'two' } },
          { op: 'getPrompt', name: 'mcp_catalog_test_prompt_with_image' },
          { op: 'getPrompt', name: 'mcp_catalog_test_secret_prompt' },
          { op: 'getPrompt', name: 'mcp_everything_simple-prompt' },
          { op: 'getPrompt', name: 'no_such_prompt' },
          { op: 'complete', ref: { type: 'ref/prompt', name: 'mcp_catalog_test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'test' } },
          { op: 'complete', ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '4' } },
          { op: 'readResource', uri: 'demo://resource/dynamic/text/not-a-number' },
        ],
      },
    )
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    expect(lines[0].result ?? lines[0]).toBeTruthy()
    const caps = (lines[0] as any).capabilities
    expect(caps).toMatchObject({ tools: { listChanged: true }, resources: {}, prompts: {}, completions: {} })

    const resources = ok(lines, 0).resources
    const uris = resources.map((r: any) => r.uri)
    expect(uris).toEqual(expect.arrayContaining(['demo://resource/static/document/architecture.md', 'test://static-text', 'test://static-binary', 'test://secret-note']))
    const note = resources.find((r: any) => r.uri === 'test://secret-note')
    expect(note.description).toBe('A note holding [REDACTED]')
    expect(ok(lines, 1).resourceTemplates.map((t: any) => t.uriTemplate)).toEqual(
      expect.arrayContaining(['demo://resource/dynamic/text/{resourceId}', 'test://template/{id}/data']),
    )

    expect(ok(lines, 2).contents).toEqual([{ uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' }])
    const binary = ok(lines, 3).contents[0]
    expect(binary).toMatchObject({ uri: 'test://static-binary', mimeType: 'image/png' })
    expect(Buffer.from(binary.blob, 'base64').subarray(1, 4).toString()).toBe('PNG')
    expect(JSON.stringify(ok(lines, 4).contents)).toContain('7')
    expect(JSON.parse(ok(lines, 5).contents[0].text)).toEqual({ id: '42', templateTest: true, data: 'Data for ID: 42' })
    expect(ok(lines, 6).contents[0].text).toBe('the token is [REDACTED]')
    expect(step(lines, 7)).toMatchObject({ ok: false, error: { code: -32602 } })
    expect(step(lines, 7).error!.message).toContain('Resource not found: nope://nothing')

    const prompts = ok(lines, 8).prompts
    const names = prompts.map((p: any) => p.name)
    expect(names).toEqual(expect.arrayContaining(['mcp_everything_simple-prompt', 'mcp_catalog_test_simple_prompt', 'mcp_catalog_test_prompt_with_arguments']))
    expect(prompts.find((p: any) => p.name === 'mcp_catalog_test_secret_prompt').description).toBe('A prompt holding [REDACTED]')
    expect(prompts.find((p: any) => p.name === 'mcp_catalog_test_prompt_with_arguments').arguments.map((a: any) => a.name)).toEqual(['arg1', 'arg2'])
    expect(ok(lines, 9).messages).toEqual([{ role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='one', arg2='two'" } }])
    expect(ok(lines, 10).messages[0].content).toMatchObject({ type: 'image', mimeType: 'image/png' })
    expect(ok(lines, 11).messages).toEqual([{ role: 'assistant', content: { type: 'text', text: 'the token is [REDACTED]' } }])
    expect(ok(lines, 12).messages[0].content.text).toBe('This is a simple prompt without arguments.')
    expect(step(lines, 13)).toMatchObject({ ok: false, error: { code: -32602 } })
    expect(step(lines, 13).error!.message).toContain('Unknown prompt: no_such_prompt')

    expect(ok(lines, 14).completion.values).toEqual(['test1', 'test2'])
    expect(ok(lines, 15).completion.values).toEqual(['456'])
    // An upstream's own error: its code, the server named.
    const failed = step(lines, 16)
    expect(failed.ok).toBe(false)
    expect(failed.error!.message).toContain("MCP server 'everything'")
    // Nothing the client got holds the secret.
    expect(JSON.stringify(lines)).not.toContain(TOKEN)
  }, 60_000)

  it("names: 'upstream' serves the servers' own names; a name two servers share gets the manager's name for both", async () => {
    const file = config({ example: echoServer(), everything, c1: catalog, c2: catalog })
    const lines = await drive(
      {
        connect: await transport.connect(file, { names: 'upstream' }),
        steps: [
          { op: 'listTools' },
          { op: 'callTool', name: 'word_count', args: { text: 'three little words' } },
          { op: 'callTool', name: 'mcp_example_echo', args: { text: 'from example' } },
          { op: 'listPrompts' },
          { op: 'getPrompt', name: 'simple-prompt' },
          { op: 'getPrompt', name: 'mcp_c2_test_prompt_with_arguments', args: { arg1: 'x', arg2: 'y' } },
          { op: 'getPrompt', name: 'test_simple_prompt' },
          { op: 'complete', ref: { type: 'ref/prompt', name: 'mcp_c1_test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'o' } },
        ],
      },
    )
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    const tools = ok(lines, 0).tools.map((t: any) => t.name)
    // echo is both servers': the manager's names; the example's other tools are its own.
    expect(tools).toEqual(expect.arrayContaining(['mcp_example_echo', 'mcp_everything_echo', 'word_count', 'current_time']))
    expect(tools).not.toContain('echo')
    expect(ok(lines, 1).content[0].text).toContain('3')
    expect(ok(lines, 2).content[0].text).toContain('from example')
    const prompts = ok(lines, 3).prompts.map((p: any) => p.name)
    expect(prompts).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt', 'mcp_c1_test_simple_prompt', 'mcp_c2_test_simple_prompt']))
    expect(prompts).not.toContain('test_simple_prompt')
    expect(ok(lines, 4).messages[0].content.text).toBe('This is a simple prompt without arguments.')
    expect(ok(lines, 5).messages[0].content.text).toBe("Prompt with arguments: arg1='x', arg2='y'")
    expect(step(lines, 6)).toMatchObject({ ok: false, error: { code: -32602 } })
    expect(ok(lines, 7).completion.values).toEqual(['other'])
  }, 60_000)
})

describe('manager.serve() catalog edges', () => {
  it('a server with tools only: resources, prompts and completions are not declared and are -32601', async () => {
    const file = config({ fault: faultServer() })
    const lines = await drive({
      connect: { command: NODE, args: [GATEWAY, file, 'stdio'] },
      steps: [
        { op: 'listResources' }, { op: 'listPrompts' }, { op: 'readResource', uri: 'x://y' }, { op: 'listTools' },
        { op: 'subscribeResource', uri: 'x://y' }, { op: 'unsubscribeResource', uri: 'x://y' },
      ],
    })
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    const caps = (lines[0] as any).capabilities
    expect(Object.keys(caps).sort()).toEqual(['logging', 'tools'])
    for (const i of [0, 1, 2, 4, 5]) expect(step(lines, i)).toMatchObject({ ok: false, error: { code: -32601 } })
    expect(ok(lines, 3).tools.length).toBeGreaterThan(0)
  }, 30_000)

  it("a view's servers only: resources and prompts of the others are not served", async () => {
    const file = config({ everything, catalog })
    const lines = await drive(
      {
        connect: { command: NODE, args: [GATEWAY, file, 'stdio', JSON.stringify({ view: { servers: ['catalog'] } })], env: secretEnv },
        steps: [{ op: 'listResources' }, { op: 'listPrompts' }, { op: 'readResource', uri: 'demo://resource/static/document/architecture.md' }],
      },
    )
    const uris = ok(lines, 0).resources.map((r: any) => r.uri)
    expect(uris).toContain('test://static-text')
    expect(uris.filter((u: string) => u.startsWith('demo://'))).toEqual([])
    expect(ok(lines, 1).prompts.map((p: any) => p.name).filter((n: string) => n.includes('everything'))).toEqual([])
    // The one server of the view that offers resources is asked, and says it has no such resource.
    const read = step(lines, 2)
    expect(read.ok).toBe(false)
    expect(read.error!.message).toContain("MCP server 'catalog'")
  }, 30_000)

  it('bad names values throw a TypeError naming them', () => {
    const manager = createManager({ servers: { echo: echoServer() } })
    expect(() => manager.serve({ transport: 'stdio', names: 'bare' } as any)).toThrow(TypeError)
    expect(() => manager.serve({ transport: 'stdio', names: 'bare' } as any)).toThrow(
      "serve: options.names must be 'manager' or 'upstream', got \"bare\"",
    )
    expect(() => manager.serve({ transport: 'http', names: 3 } as any)).toThrow("serve: options.names must be 'manager' or 'upstream', got 3")
  })
})

describe('manager.serve() resource subscriptions and list changes', () => {
  // The catalog server with its change tools: catalog_touch says whether IT holds a subscription
  // to the URI (so each step below checks the upstream's state, not only the gateway's answer).
  const changing = { command: NODE, args: [CATALOG], env: { CATALOG_CHANGES: '1' } }
  const touch = (uri: string) => ({ op: 'callTool', name: 'mcp_catalog_catalog_touch', args: { uri } })
  const WATCHED = 'test://watched-resource'

  it.each(TRANSPORTS)('over $name: subscribe, updates, unsubscribe and list changes reach the client', async (transport) => {
    const file = config({ catalog: changing, everything })
    const lines = await drive({
      connect: await transport.connect(file),
      steps: [
        { op: 'subscribeResource', uri: WATCHED },
        { op: 'subscribeResource', uri: WATCHED },
        touch(WATCHED),
        { op: 'notified', method: 'notifications/resources/updated', uri: WATCHED, since: 2 },
        { op: 'unsubscribeResource', uri: WATCHED },
        touch(WATCHED),
        { op: 'unsubscribeResource', uri: WATCHED },
        { op: 'subscribeResource', uri: 'nope://nothing' },
        { op: 'subscribeResource', uri: 'demo://resource/static/document/architecture.md' },
        { op: 'callTool', name: 'mcp_catalog_catalog_add', args: { kind: 'resource', name: 'fresh' } },
        { op: 'notified', method: 'notifications/resources/list_changed', since: 9 },
        { op: 'listResources' },
        { op: 'callTool', name: 'mcp_catalog_catalog_add', args: { kind: 'prompt', name: 'fresh_prompt' } },
        { op: 'notified', method: 'notifications/prompts/list_changed', since: 12 },
        { op: 'listPrompts' },
        { op: 'notices' },
      ],
    })
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    const caps = (lines[0] as any).capabilities
    expect(caps.resources).toEqual({ subscribe: true, listChanged: true })
    expect(caps.prompts).toEqual({ listChanged: true })
    ok(lines, 0)
    ok(lines, 1)
    // Subscribed upstream once, though the client subscribed twice; the update reaches it.
    expect(ok(lines, 2).content[0].text).toContain(`updated: ${WATCHED}`)
    // (It may come just after the call's result: it travels apart from it, as MCP allows.)
    const [update, ...more] = ok(lines, 3).notices
    expect(more).toEqual([])
    expect(update.params).toEqual({ uri: WATCHED })
    expect([2, 3]).toContain(update.duringStep)
    ok(lines, 4)
    // One unsubscribe ends it upstream; a second is no error.
    expect(ok(lines, 5).content[0].text).toContain(`not subscribed: ${WATCHED}`)
    ok(lines, 6)
    expect(step(lines, 7)).toMatchObject({ ok: false, error: { code: -32602 } })
    expect(step(lines, 7).error!.message).toContain('Resource not found: nope://nothing')
    // server-everything offers subscriptions too; its resources are routed to it.
    ok(lines, 8)
    expect(ok(lines, 10).notices.length).toBeGreaterThan(0)
    expect(ok(lines, 11).resources.map((r: any) => r.uri)).toContain('test://added/fresh')
    expect(ok(lines, 13).notices.length).toBeGreaterThan(0)
    expect(ok(lines, 14).prompts.map((p: any) => p.name)).toContain('mcp_catalog_fresh_prompt')
    // No update came for what was not subscribed, nor after the unsubscribe.
    const updates = ok(lines, 15).notices.filter((n: any) => n.method === 'notifications/resources/updated' && n.params.uri === WATCHED)
    expect(updates.map((n: any) => n.step)).toEqual([update.duringStep])
  }, 60_000)

  it("a resource of a server without subscriptions: an error naming it; another server's still subscribes", async () => {
    const plain = { command: NODE, args: [CATALOG], env: { CATALOG_NO_SUBSCRIBE: '1' } }
    const file = config({ catalog: plain, everything })
    const lines = await drive({
      connect: { command: NODE, args: [GATEWAY, file, 'stdio'] },
      steps: [
        { op: 'subscribeResource', uri: 'test://static-text' },
        { op: 'subscribeResource', uri: 'demo://resource/static/document/architecture.md' },
      ],
    })
    expect((lines[0] as any).capabilities.resources).toEqual({ subscribe: true, listChanged: true })
    const refused = step(lines, 0)
    expect(refused.ok).toBe(false)
    expect(refused.error!.message).toContain("MCP server 'catalog' does not offer resource subscriptions")
    ok(lines, 1)
  }, 60_000)

  it('a server that crashed and restarted is subscribed again', async () => {
    const file = config({ catalog: changing })
    const lines = await drive({
      connect: { command: NODE, args: [GATEWAY, file, 'stdio'] },
      steps: [
        { op: 'subscribeResource', uri: WATCHED },
        { op: 'callTool', name: 'mcp_catalog_catalog_crash' },
        // Its tools go with the crash and come back with the restart.
        { op: 'notified', method: 'notifications/tools/list_changed', since: 1, count: 2 },
        touch(WATCHED),
        { op: 'notified', method: 'notifications/resources/updated', uri: WATCHED, since: 3 },
      ],
    })
    ok(lines, 0)
    expect(ok(lines, 2).notices.length).toBeGreaterThanOrEqual(2)
    expect(ok(lines, 3).content[0].text).toContain(`updated: ${WATCHED}`)
    ok(lines, 4)
  }, 60_000)

  it('a 2026-07-28 server is subscribed to through subscriptions/listen', async () => {
    // The TypeScript SDK v2 server, modern only: it has no resources/subscribe, and sends a
    // resource's updates only on a listen stream that asked for its URI.
    const v2 = { command: NODE, args: [path.join(ROOT, '__test__', 'fixtures', 'v2-server.mjs'), 'stdio-modern'] }
    const file = config({ v2 })
    const uri = 'test://v2-watched'
    const lines = await drive({
      connect: { command: NODE, args: [GATEWAY, file, 'stdio'] },
      steps: [
        { op: 'subscribeResource', uri },
        { op: 'callTool', name: 'mcp_v2_touch', args: { uri } },
        { op: 'notified', method: 'notifications/resources/updated', uri, since: 1 },
        { op: 'unsubscribeResource', uri },
        { op: 'callTool', name: 'mcp_v2_touch', args: { uri } },
        // A fence: the tool list change travels the longer way (the server's listen stream,
        // a new listing, the gateway), so an update the touch above caused would be here first.
        { op: 'callTool', name: 'mcp_v2_grow' },
        { op: 'toolsChanged', since: 5 },
        { op: 'notices' },
      ],
    })
    expect(lines[0]).toMatchObject({ op: 'connect', ok: true })
    expect((lines[0] as any).capabilities.resources).toEqual({ subscribe: true, listChanged: true })
    ok(lines, 0)
    expect(ok(lines, 1).content[0].text).toContain(`touched ${uri}`)
    expect(ok(lines, 2).notices).toHaveLength(1)
    ok(lines, 3)
    ok(lines, 6)
    const updates = ok(lines, 7).notices.filter((n: any) => n.method === 'notifications/resources/updated')
    expect(updates).toHaveLength(1)
  }, 60_000)

  it("a session's subscriptions end upstream when it closes; another session's stay", async () => {
    const file = config({ catalog: changing })
    const url = await startHttp(file)
    const first = await drive({
      connect: { url },
      steps: [{ op: 'subscribeResource', uri: WATCHED }, { op: 'subscribeResource', uri: 'test://static-text' }, touch(WATCHED), { op: 'endSession' }],
    })
    expect(ok(first, 2).content[0].text).toContain(`updated: ${WATCHED}`)
    ok(first, 3)
    // The first session has ended: its subscriptions go upstream as its handler is dropped
    // (after the DELETE is answered, so this looks until they are gone).
    const touched = async (uri: string) => ok(await drive({ connect: { url }, steps: [touch(uri)] }), 0).content[0].text
    await expect.poll(() => touched(WATCHED), { timeout: 15_000, interval: 100 }).toContain(`not subscribed: ${WATCHED}`)
    await expect.poll(() => touched('test://static-text'), { timeout: 15_000, interval: 100 }).toContain('not subscribed: test://static-text')
    // Another session's subscription is made and kept.
    const second = await drive({ connect: { url }, steps: [{ op: 'subscribeResource', uri: 'test://static-text' }, touch('test://static-text')] })
    expect(ok(second, 1).content[0].text).toContain('updated: test://static-text')
  }, 60_000)
})
