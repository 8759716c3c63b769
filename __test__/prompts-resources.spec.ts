// Prompts and resources beyond getResourceContext() (issue 13, parts 3 and 4): listPrompts,
// getPrompt, listResources, readResource against server-everything; resources asked only of
// servers that declare them; resourceRefreshMs as a cache of getResourceContext().

import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  faultServer,
  fileLines,
  NODE,
  RecordingLogger,
  ROOT,
  statusOf,
  tempDir,
  type ManagerConfig,
  type ServerConfig,
} from './helpers'

afterEach(cleanup)

const PKG = path.join(ROOT, 'node_modules', '@modelcontextprotocol')
const EVERYTHING: ServerConfig = { command: NODE, args: [path.join(PKG, 'server-everything', 'dist', 'index.js'), 'stdio'] }
const FILESYSTEM = (dir: string): ServerConfig => ({ command: NODE, args: [path.join(PKG, 'server-filesystem', 'dist', 'index.js'), dir] })

async function start(servers: Record<string, ServerConfig>) {
  const log = new RecordingLogger()
  const manager = createManager({ servers } as ManagerConfig, { logger: log.logger })
  await manager.start()
  for (const name of Object.keys(servers)) expect(statusOf(manager, name)?.status, log.dump()).toBe('ready')
  return { manager, log }
}

/** The text between the wrapper's header and its end marker. */
function unwrap(text: string): string {
  const body = text.split('\n---\n')[1] ?? ''
  return body.slice(0, body.lastIndexOf('\n<<<END_EXTERNAL_UNTRUSTED_CONTENT'))
}

describe('prompts', () => {
  it('listPrompts gives every prompt with its arguments; getPrompt wraps each message', async () => {
    const { manager } = await start({ e: EVERYTHING, fs: FILESYSTEM(tempDir()) })
    const prompts = await manager.listPrompts()
    expect(prompts.every((p) => p.server === 'e')).toBe(true)
    const args = prompts.find((p) => p.name === 'args-prompt')!
    expect(args.arguments.map((a) => [a.name, a.required])).toEqual([['city', true], ['state', false]])
    const got = await manager.getPrompt('e', 'args-prompt', { city: 'Paris' })
    expect(got.messages.length).toBeGreaterThan(0)
    expect(got.messages[0].role).toBe('user')
    expect(got.messages[0].content.type).toBe('text')
    expect(got.messages[0].content.text).toMatch(/^SECURITY NOTICE/)
    expect(unwrap(got.messages[0].content.text)).toContain('Paris')
  })

  it('bad arguments and unknown servers reject with the reason, never throw', async () => {
    const { manager } = await start({ e: EVERYTHING })
    await expect(manager.getPrompt(5 as unknown as string, 'x')).rejects.toThrow('getPrompt: server must be a string, got a number')
    await expect(manager.getPrompt('e', 'args-prompt', { city: 7 } as unknown as Record<string, string>)).rejects.toThrow(
      "getPrompt: argument 'city' must be a string, got a number",
    )
    await expect(manager.getPrompt('nope', 'x')).rejects.toThrow("no MCP server named 'nope'")
    await expect(manager.getPrompt('e', 'no-such-prompt')).rejects.toThrow(/MCP error/)
  })
})

describe('resources', () => {
  it('listResources gives resources and templates; readResource wraps the text', async () => {
    const { manager } = await start({ e: EVERYTHING })
    const { resources, templates } = await manager.listResources()
    expect(resources.length).toBeGreaterThan(0)
    expect(resources.every((r) => r.server === 'e' && r.uri.startsWith('demo://'))).toBe(true)
    expect(templates.some((t) => t.uriTemplate.includes('{resourceId}'))).toBe(true)
    const doc = resources.find((r) => r.mimeType === 'text/markdown')!
    const text = await manager.readResource('e', doc.uri)
    expect(text).toMatch(/^SECURITY NOTICE/)
    expect(unwrap(text)).toMatch(/^# /)
    await expect(manager.readResource('e', 42 as unknown as string)).rejects.toThrow('readResource: uri must be a string, got a number')
  })

  it('a server without the resources capability is never asked (no "Method not found" warning)', async () => {
    const requests = path.join(tempDir(), 'requests.log')
    const { manager, log } = await start({
      plain: faultServer(['--request-log', requests]),
      fs: FILESYSTEM(tempDir()),
    })
    expect(await manager.getResourceContext()).toBe('')
    expect((await manager.listResources()).resources).toEqual([])
    await expect(manager.readResource('plain', 'x://y')).rejects.toThrow("MCP server 'plain' does not offer resources")
    expect(fileLines(requests).filter((l) => l.startsWith('resources/'))).toEqual([])
    expect(log.all('warn', /Failed to get resources/)).toEqual([])
  })

  it('getResourceContext() is reused for resourceRefreshMs', async () => {
    const requests = path.join(tempDir(), 'requests.log')
    const { manager } = await start({
      cached: faultServer(['--resources', '--request-log', requests], { resourceFilter: ['fault://text/alpha'], resourceRefreshMs: 600_000 }),
    })
    const first = await manager.getResourceContext()
    const second = await manager.getResourceContext()
    expect(second).toBe(first)
    expect(fileLines(requests).filter((l) => l.startsWith('resources/read')).length).toBe(1)
  })

  it('with a short resourceRefreshMs the next call reads again', async () => {
    const requests = path.join(tempDir(), 'requests.log')
    const { manager } = await start({
      fresh: faultServer(['--resources', '--request-log', requests], { resourceFilter: ['fault://text/alpha'], resourceRefreshMs: 1 }),
    })
    await manager.getResourceContext()
    // Past the 1 ms window (a timer is the only signal here).
    await new Promise((r) => setTimeout(r, 5))
    await manager.getResourceContext()
    expect(fileLines(requests).filter((l) => l.startsWith('resources/read')).length).toBe(2)
  })
})

describe('resources and prompts as agent tools (resourceTools, promptTools)', () => {
  it('are off by default', async () => {
    const { manager } = await start({ e: EVERYTHING })
    const names = manager.getAgentTools().map((t) => t.name)
    expect(names.filter((n) => /_(resources|prompts)_(list|read|get)$/.test(n))).toEqual([])
  })

  it('list, read and get through tools named and filtered like any other, results wrapped', async () => {
    const log = new RecordingLogger()
    const manager = createManager(
      { servers: { e: { ...EVERYTHING, resourceTools: true, promptTools: true } } } as ManagerConfig,
      { logger: log.logger, deny: ['mcp_e_prompts_list'] },
    )
    await manager.start()
    const names = manager.getAgentTools().map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['mcp_e_resources_list', 'mcp_e_resources_read', 'mcp_e_prompts_get']))
    expect(names).not.toContain('mcp_e_prompts_list')
    const tool = (n: string) => manager.getAgentTools().find((t) => t.name === n)!
    expect(tool('mcp_e_resources_read').parameters).toEqual({
      type: 'object',
      required: ['uri'],
      properties: { uri: { type: 'string', description: "The resource's URI" } },
    })
    const list = await tool('mcp_e_resources_list').execute('c1', {})
    const listed = JSON.parse(unwrap(list.content[0].text)) as Array<{ uri?: string; uriTemplate?: string }>
    const doc = listed.find((r) => r.uri?.endsWith('.md'))!
    expect(doc.uri).toMatch(/^demo:\/\//)
    expect(listed.some((r) => r.uriTemplate?.includes('{resourceId}'))).toBe(true)
    const read = await tool('mcp_e_resources_read').execute('c2', { uri: doc.uri })
    expect(unwrap(read.content[0].text)).toMatch(/^# /)
    const prompt = await tool('mcp_e_prompts_get').execute('c3', { name: 'args-prompt', arguments: { city: 'Paris' } })
    expect(unwrap(prompt.content[0].text)).toMatch(/^\[user\]\n.*Paris/s)
    const bad = await tool('mcp_e_resources_read').execute('c4', {})
    expect(bad.content[0].text).toBe("MCP tool error (e/resources_read): 'uri' is required")
    await manager.shutdown()
  })
})

describe('prompts and resources over Streamable HTTP', () => {
  it('list, get and read against server-everything over HTTP', async () => {
    const { spawn } = await import('node:child_process')
    const port = 45_000 + Math.floor(Math.random() * 2000)
    const child = spawn(NODE, [path.join(PKG, 'server-everything', 'dist', 'index.js'), 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      const { waitUntil } = await import('./helpers')
      await waitUntil(async () => fetch(`http://127.0.0.1:${port}/mcp`).then(() => true, () => false), { timeout: 15_000, what: 'server-everything over HTTP' })
      const { manager } = await start({ remote: { transport: 'http', url: `http://127.0.0.1:${port}/mcp` } as ServerConfig })
      const prompts = await manager.listPrompts()
      expect(prompts.map((p) => p.name)).toContain('simple-prompt')
      const got = await manager.getPrompt('remote', 'simple-prompt')
      expect(got.messages[0].content.text).toMatch(/^SECURITY NOTICE/)
      const { resources } = await manager.listResources()
      const doc = resources.find((r) => r.mimeType === 'text/markdown')!
      expect(unwrap(await manager.readResource('remote', doc.uri))).toMatch(/^# /)
    } finally {
      child.kill()
    }
  })
})
