// Issue #6 through the JS API: tool-name schemes, allow/deny enforced when listing and when
// calling, per-server toolFilter, and every config shape loadMcpConfig/inspectMcpConfig read.
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, createManager, faultServer, native as api } from './helpers.js'

afterEach(cleanup)

describe('tool policy and names (JS options)', () => {
  it("toolNames: 'openclaw' gives <server>__<tool>", async () => {
    const m = createManager({ servers: { 'my.files': faultServer() } }, { toolNames: 'openclaw' })
    await m.start()
    const names = m.getAgentTools().map((t) => t.name)
    expect(names).toContain('my-files__echo')
    expect(names.every((n) => /^[A-Za-z0-9_-]{1,64}$/.test(n))).toBe(true)
  })

  it('allow/deny filter the offered tools (case-insensitive, deny wins); the rest still work', async () => {
    const open = createManager({ servers: { f: faultServer() } })
    const strict = createManager({ servers: { f: faultServer() } }, { allow: ['mcp_f_*'], deny: ['MCP_F_ECHO'] })
    await Promise.all([open.start(), strict.start()])
    const offered = strict.getAgentTools().map((t) => t.name)
    expect(offered).toContain('mcp_f_add')
    expect(offered).not.toContain('mcp_f_echo')
    expect(open.getAgentTools().map((t) => t.name)).toContain('mcp_f_echo')
    const add = strict.getAgentTools().find((t) => t.name === 'mcp_f_add')!
    const ok = await add.execute('1', { a: 1, b: 2 })
    expect('externalContent' in ok.details).toBe(true)
    // Refusal at call time (a tool object from before a policy applies) is covered by
    // tests/manager_policy.rs; from JS a manager never offers a tool its policy denies.
  })

  it('toolFilter hides tools of one server', async () => {
    const m = createManager({
      servers: { f: faultServer([], { toolFilter: { include: ['a*', 'echo'], exclude: ['add'] } }) },
    })
    await m.start()
    expect(m.getAgentTools().map((t) => t.name)).toEqual(['mcp_f_echo'])
    expect(m.getStatus()[0].toolCount).toBe(1)
  })

  it('rejects bad option values with a clear error', () => {
    expect(() => new api.McpManager({}, { toolNames: 'snake' as never })).toThrow(
      "Invalid toolNames 'snake': expected 'compat' or 'openclaw'",
    )
  })
})

describe('config shapes', () => {
  const shapes: Array<[string, unknown, string]> = [
    ['mcp', { servers: { a: { command: 'x' } } }, 'mcp'],
    ['openclaw (agents)', { agents: { defaults: { mcp: { servers: { a: { command: 'x' } } } } } }, 'openclaw'],
    ['openclaw-mcp (current top-level mcp)', { mcp: { servers: { a: { command: 'x', connectionTimeoutMs: 5000 } } } }, 'openclaw-mcp'],
    ['mcpServers (Claude Desktop)', { mcpServers: { a: { command: 'x', args: ['y'] } } }, 'mcpServers'],
    ['acp (session/new array)', [{ name: 'a', command: 'x', args: [], env: [{ name: 'K', value: 'v' }] }], 'acp'],
  ]
  for (const [label, input, shape] of shapes) {
    it(`reads ${label}`, () => {
      const inspected = api.inspectMcpConfig(input)
      expect(inspected.shape).toBe(shape)
      expect(inspected.config.servers?.a?.command).toBe('x')
      expect(api.loadMcpConfig(input)).toEqual(inspected.config)
    })
  }

  it('maps current OpenClaw field names', () => {
    const cfg = api.loadMcpConfig({ mcp: { servers: { a: { url: 'http://127.0.0.1:1/mcp', transport: 'streamable-http', requestTimeoutMs: 1234 } } } })
    expect(cfg.servers?.a).toMatchObject({ transport: 'streamable-http', toolTimeout: 1234 })
  })

  it('an explicit shape skips detection, and a wrong one is a clear error', () => {
    expect(api.inspectMcpConfig({ mcpServers: { a: { command: 'x' } } }, { shape: 'mcpServers' }).shape).toBe('mcpServers')
    expect(() => api.loadMcpConfig({ mcpServers: {} }, { shape: 'bogus' as never })).toThrow(/bogus/)
  })

  it('managerConfigsForOpenclaw gives each agent its own config', () => {
    const configs = api.managerConfigsForOpenclaw({
      agents: {
        defaults: { mcp: { servers: { shared: { command: 'x' } } } },
        list: [{ id: 'main' }, { id: 'ops', mcp: { servers: { extra: { command: 'y' } } } }],
      },
    })
    expect(configs.map((c) => c.agent)).toEqual(['main', 'ops'])
    expect(Object.keys(configs[1].config.servers ?? {})).toEqual(['shared', 'extra'])
    configs[0].config.servers!.shared.command = 'changed'
    expect(configs[1].config.servers!.shared.command).toBe('x')
  })
})
