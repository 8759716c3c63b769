// McpManager against the reference MCP servers from npm (devDependencies):
// @modelcontextprotocol/server-everything, server-memory and server-filesystem,
// all over stdio. Tool names were read from the installed packages (2026.8.31).

import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  expectWrappedResult,
  NODE,
  RecordingLogger,
  ROOT,
  statusOf,
  tempDir,
  toolByName,
  type ManagerConfig,
  type ServerConfig,
  type ToolResult,
  waitUntil,
  wrappedBody,
} from './helpers'

afterEach(cleanup)

const PKG = path.join(ROOT, 'node_modules', '@modelcontextprotocol')
const EVERYTHING = path.join(PKG, 'server-everything', 'dist', 'index.js')
const MEMORY = path.join(PKG, 'server-memory', 'dist', 'index.js')
const FILESYSTEM = path.join(PKG, 'server-filesystem', 'dist', 'index.js')

async function start(name: string, server: ServerConfig) {
  const log = new RecordingLogger()
  const manager = createManager({ servers: { [name]: server } } as ManagerConfig, { logger: log.logger })
  await manager.start()
  expect(statusOf(manager, name)?.status, log.dump()).toBe('ready')
  return { manager, log }
}

describe('@modelcontextprotocol/server-everything (stdio)', () => {
  const BASE_TOOLS = [
    'echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference', 'get-structured-content',
    'get-sum', 'get-tiny-image', 'gzip-file-as-resource', 'toggle-simulated-logging', 'toggle-subscriber-updates',
    'trigger-long-running-operation',
  ]
  const everything = (extra: Partial<ServerConfig> = {}): ServerConfig => ({ command: NODE, args: [EVERYTHING, 'stdio'], ...extra })

  it('lists its tools, echoes and sums', async () => {
    const { manager, log } = await start('everything', everything())
    const names = manager.getAgentTools().map((t) => t.name)
    for (const t of BASE_TOOLS) expect(names).toContain(`mcp_everything_${t}`)
    expect(statusOf(manager, 'everything')!.toolCount).toBe(names.length)
    const sum = toolByName(manager, 'mcp_everything_get-sum')
    expect(sum.description).toBe('[MCP server: everything] Returns the sum of two numbers')
    expect(JSON.stringify(sum.parameters)).toBe(
      '{"type":"object","required":["a","b"],"properties":{"a":{"type":"number","description":"First number"},"b":{"type":"number","description":"Second number"}}}',
    )
    expectWrappedResult(await toolByName(manager, 'mcp_everything_echo').execute('c1', { message: 'hi there' }), 'everything', 'echo', 'Echo: hi there')
    expectWrappedResult(await sum.execute('c2', { a: 2, b: 3 }), 'everything', 'get-sum', 'The sum of 2 and 3 is 5.')
    await log.waitFor('warn', "MCP server 'everything' stderr: Starting default (STDIO) server...")
  })

  it('maps its text + image + text result', async () => {
    const { manager } = await start('everything', everything())
    expectWrappedResult(
      await toolByName(manager, 'mcp_everything_get-tiny-image').execute('c', {}),
      'everything',
      'get-tiny-image',
      "Here's the image you requested:\n[Image: image/png]\nThe image above is the MCP logo.",
    )
  })

  it('trigger-long-running-operation: every progress notification (all 4, the last one just before the response) reaches onUpdate', async () => {
    const { manager } = await start('everything', everything())
    const updates: ToolResult[] = []
    const r = await toolByName(manager, 'mcp_everything_trigger-long-running-operation').execute('c', { duration: 1, steps: 4 }, undefined, (u) => updates.push(u))
    expectWrappedResult(r, 'everything', 'trigger-long-running-operation', 'Long running operation completed. Duration: 1 seconds, Steps: 4.')
    await waitUntil(() => updates.length >= 4, { timeout: 1_000, what: () => `4 progress updates (got ${updates.length})` })
    for (const u of updates) expect(u.content[0]?.type).toBe('text')
  })

  it('get-env shows the config env in the child', async () => {
    const { manager } = await start('everything', everything({ env: { MCP_NATIVE_PROBE: 'probe-value' } }))
    const env = JSON.parse(wrappedBody(await toolByName(manager, 'mcp_everything_get-env').execute('c', {}))) as Record<string, string>
    // The variable exists in the child. Its exact value is checked by digest in
    // stdio.spec.ts (env_hash), independent of any redaction of config values in output.
    expect(Object.keys(env)).toContain('MCP_NATIVE_PROBE')
    expect(Object.keys(env)).not.toContain('MCP_NATIVE_NEVER_SET')
    expect(Object.keys(env)).toContain('PATH')
  })
})

describe('@modelcontextprotocol/server-memory (stdio)', () => {
  it('has its 9 tools; create_entities then read_graph round-trips through MEMORY_FILE_PATH', async () => {
    const file = path.join(tempDir(), 'memory.jsonl')
    const { manager } = await start('memory', { command: NODE, args: [MEMORY], env: { MEMORY_FILE_PATH: file } })
    expect(manager.getAgentTools().map((t) => t.name)).toEqual(
      ['create_entities', 'create_relations', 'add_observations', 'delete_entities', 'delete_observations', 'delete_relations', 'read_graph', 'search_nodes', 'open_nodes'].map((t) => `mcp_memory_${t}`),
    )
    const entity = { name: 'Ada Lovelace', entityType: 'person', observations: ['wrote the first program'] }
    const created = await toolByName(manager, 'mcp_memory_create_entities').execute('c1', { entities: [entity] })
    expect(JSON.parse(wrappedBody(created))).toEqual([entity])
    const graph = JSON.parse(wrappedBody(await toolByName(manager, 'mcp_memory_read_graph').execute('c2', {})))
    expect(graph).toEqual({ entities: [entity], relations: [] })
    expect(fs.readFileSync(file, 'utf8')).toContain('"Ada Lovelace"')
    const found = JSON.parse(wrappedBody(await toolByName(manager, 'mcp_memory_search_nodes').execute('c3', { query: 'first program' })))
    expect(found.entities.map((e: { name: string }) => e.name)).toEqual(['Ada Lovelace'])
  })
})

describe('@modelcontextprotocol/server-filesystem (stdio)', () => {
  it('writes and reads inside the allowed directory; a path outside is refused as a result, not a throw', async () => {
    const allowed = fs.realpathSync(tempDir())
    const outside = fs.realpathSync(tempDir())
    const secret = path.join(outside, 'secret.txt')
    fs.writeFileSync(secret, 'top secret content')
    const { manager } = await start('fs', { command: NODE, args: [FILESYSTEM, allowed] })
    const names = manager.getAgentTools().map((t) => t.name)
    for (const t of ['read_text_file', 'write_file', 'list_directory', 'list_allowed_directories']) expect(names).toContain(`mcp_fs_${t}`)
    expect(JSON.stringify(toolByName(manager, 'mcp_fs_write_file').parameters)).toBe(
      '{"type":"object","required":["path","content"],"properties":{"path":{"type":"string"},"content":{"type":"string"}}}',
    )

    const inside = path.join(allowed, 'note.txt')
    const w = await toolByName(manager, 'mcp_fs_write_file').execute('c1', { path: inside, content: 'hello from the test' })
    expectWrappedResult(w, 'fs', 'write_file', `Successfully wrote to ${inside}`)
    expect(fs.readFileSync(inside, 'utf8')).toBe('hello from the test')
    expectWrappedResult(await toolByName(manager, 'mcp_fs_read_text_file').execute('c2', { path: inside }), 'fs', 'read_text_file', 'hello from the test')

    // Refusals come back as isError results, which are wrapped like successes (compat).
    const read = toolByName(manager, 'mcp_fs_read_text_file').execute('c3', { path: secret })
    await expect(read).resolves.toBeDefined()
    const refused = await read
    expect(wrappedBody(refused)).toMatch(/^Access denied - path outside allowed directories: /)
    expect(refused.content[0].text).not.toContain('top secret content')
    expect(refused.details).toEqual({ externalContent: { untrusted: true, source: 'mcp_server', server: 'fs', tool: 'read_text_file', wrapped: true } })

    const escape = path.join(outside, 'written.txt')
    const w2 = await toolByName(manager, 'mcp_fs_write_file').execute('c4', { path: escape, content: 'x' })
    expect(wrappedBody(w2)).toMatch(/^Access denied - path outside allowed directories: /)
    expect(fs.existsSync(escape)).toBe(false)
  })
})
