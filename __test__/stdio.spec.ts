// McpManager against the fault-injecting stdio server (fixtures/fault-server.mjs).

import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { getEventListeners } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  escapeRe,
  expectErrorResult,
  expectedWrapped,
  expectWrappedResult,
  FAULT_BUILTIN_TOOLS,
  FAULT_SERVER,
  faultServer,
  fileLines,
  INJECTION_PAYLOAD,
  isAlive,
  native,
  NODE,
  readPidFile,
  ROOT,
  RecordingLogger,
  statusOf,
  tempDir,
  timed,
  toolByName,
  type ManagerConfig,
  type ManagerOptions,
  type ServerConfig,
  type ToolResult,
  waitForCall,
  waitForCancelled,
  waitForStatus,
  waitUntil,
  wrappedBody,
} from './helpers'

afterEach(cleanup)

const BUILTIN_COUNT = FAULT_BUILTIN_TOOLS.length
const NOT_READY = (server: string) => new RegExp(`^MCP server '${escapeRe(server)}' is not ready \\(status: (disconnected|connecting|error|closed)\\)$`)

async function startWith(servers: Record<string, ServerConfig>, options: ManagerOptions = {}) {
  const log = new RecordingLogger()
  const manager = createManager({ servers } as ManagerConfig, { logger: log.logger, ...options })
  await manager.start()
  return { manager, log }
}

async function startFault(flags: Array<string | number> = [], extra: Partial<ServerConfig> = {}, options: ManagerOptions = {}) {
  return startWith({ fault: faultServer(flags, extra) }, options)
}

describe('start, status and the tool surface', () => {
  it('getStatus() before start lists enabled servers in config order as disconnected with 0 tools', async () => {
    const dir = tempDir()
    const offPid = path.join(dir, 'off.pid')
    const manager = createManager({
      servers: {
        zeta: faultServer(),
        off: faultServer(['--pidfile', offPid], { enabled: false }),
        alpha: faultServer(),
      },
    })
    expect(manager.getStatus()).toEqual([
      { name: 'zeta', status: 'disconnected', toolCount: 0 },
      { name: 'alpha', status: 'disconnected', toolCount: 0 },
    ])
    expect(manager.getAgentTools()).toEqual([])
    await manager.start()
    expect(manager.getStatus()).toEqual([
      { name: 'zeta', status: 'ready', toolCount: BUILTIN_COUNT, transport: 'stdio' },
      { name: 'alpha', status: 'ready', toolCount: BUILTIN_COUNT, transport: 'stdio' },
    ])
    const names = manager.getAgentTools().map((t) => t.name)
    expect(names).toEqual([
      ...FAULT_BUILTIN_TOOLS.map((t) => `mcp_zeta_${t}`),
      ...FAULT_BUILTIN_TOOLS.map((t) => `mcp_alpha_${t}`),
    ])
    // The disabled server was never spawned.
    expect(fs.existsSync(offPid)).toBe(false)
  })

  it('start() resolves with the server ready and logs connected at info level', async () => {
    const { manager, log } = await startFault()
    expect(manager.getStatus()).toEqual([{ name: 'fault', status: 'ready', toolCount: BUILTIN_COUNT, transport: 'stdio' }])
    await log.waitFor('info', `MCP server 'fault' connected (${BUILTIN_COUNT} tools)`)
    expect(log.all('error')).toEqual([])
  })

  it("an unknown transport makes the constructor throw \"Unknown transport 'bogus' for server 'x'\"", () => {
    const config = { servers: { x: { transport: 'bogus', command: 'node' } } } as unknown as ManagerConfig
    expect(() => createManager(config)).toThrow("Unknown transport 'bogus' for server 'x'")
  })

  it('names, labels, descriptions and parameters follow the PR #21530 bridge', async () => {
    const { manager } = await startFault(['--tools', 2])
    const tools = manager.getAgentTools()
    expect(tools.map((t) => t.name)).toEqual([...FAULT_BUILTIN_TOOLS.map((t) => `mcp_fault_${t}`), 'mcp_fault_t0', 'mcp_fault_t1'])
    const echo = tools[0]
    expect(echo.label).toBe('MCP: fault/echo')
    expect(echo.description).toBe('[MCP server: fault] Echo back the given text')
    expect(JSON.stringify(echo.parameters)).toBe(
      JSON.stringify({ type: 'object', required: ['text'], properties: { text: { type: 'string', description: 'Text to echo back' } } }),
    )
    const hang = toolByName(manager, 'mcp_fault_hang')
    expect(JSON.stringify(hang.parameters)).toBe('{"type":"object","properties":{}}')
    // integer -> number, minimum dropped, description kept after the base keys
    expect(JSON.stringify(toolByName(manager, 'mcp_fault_slow').parameters)).toBe(
      '{"type":"object","required":["ms"],"properties":{"ms":{"type":"number","description":"Delay in milliseconds"}}}',
    )
    // enum, array, nested object with required, bare object, anyOf, dropped keywords
    expect(JSON.stringify(toolByName(manager, 'mcp_fault_schema').parameters)).toBe(
      JSON.stringify({
        type: 'object',
        required: ['mode', 'count'],
        properties: {
          mode: { anyOf: [{ const: 'fast', type: 'string' }, { const: 'slow', type: 'string' }], description: 'Mode' },
          count: { type: 'number', description: 'How many' },
          tags: { type: 'array', items: { type: 'string' } },
          opts: { type: 'object', required: ['verbose'], properties: { verbose: { type: 'boolean' }, level: { type: 'number' } } },
          meta: { type: 'object', patternProperties: { '^(.*)$': {} } },
          either: { description: 'Either' },
          email: { type: 'string' },
        },
      }),
    )
    const t0 = toolByName(manager, 'mcp_fault_t0')
    expect(t0.label).toBe('MCP: fault/t0')
    expect(t0.description).toBe('[MCP server: fault] No description')
    expect(JSON.stringify(t0.parameters)).toBe('{"type":"object","properties":{}}')
  })

  it('getAgentTools() returns fresh objects on every call and getTools() is the same list', async () => {
    const { manager } = await startFault()
    const a = manager.getAgentTools()
    const b = manager.getAgentTools()
    expect(a[0]).not.toBe(b[0])
    expect(a.map((t) => t.name)).toEqual(b.map((t) => t.name))
    expect(manager.getTools().map((t) => t.name)).toEqual(a.map((t) => t.name))
    expectWrappedResult(await manager.getTools()[0].execute('c1', { text: 'via getTools' }), 'fault', 'echo', 'via getTools')
  })

  // getAgentTools() builds a set either from one compiled array literal or, past 1 MB of
  // text, from parsed templates it deep-copies (src/napi/tool.rs); a tool with a long
  // description pushes the set onto the second path. Both must give the same objects.
  for (const builder of ['literal', 'templates'] as const)
  it(`tool objects are exact and fresh all the way down, whatever the strings and keys in them (${builder} builder)`, async () => {
    // These strings and keys are what could go wrong in generated source or in a copy.
    const odd = 'q"uote \\ back </script> */ ${x} `tick` \u2028 \u2029 \u0000 é 😀'
    // the schema conversion drops a `__proto__` property (as the original did) but copies
    // `enum` values, so one carries a `__proto__` key into the parameters
    const protoValue = JSON.parse('{"__proto__":{"deep":true}}')
    const schema = {
      type: 'object',
      properties: {
        constructor: { type: 'number' },
        [odd]: { type: 'string', description: odd },
        e: { type: 'string', enum: [odd, protoValue, 9007199254740993, -0, 1e308, '\u2029'] },
        '0': { type: 'array', items: { type: 'integer' } },
      },
      required: [odd],
    }
    const file = path.join(tempDir(), 'tools.json')
    fs.writeFileSync(file, JSON.stringify([
      { name: 'odd', description: odd, inputSchema: schema },
      { name: 'plain', description: 'no proto here', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } },
      ...(builder === 'templates' ? [{ name: 'pad', description: 'p'.repeat(1_100_000), inputSchema: { type: 'object' } }] : []),
    ]))
    const { manager } = await startFault(['--tools-file', file])
    const a = manager.getAgentTools()
    const b = manager.getAgentTools()
    const oddTool = toolByName(manager, 'mcp_fault_odd')
    expect(oddTool.description).toBe(`[MCP server: fault] ${odd}`)
    expect(oddTool.label).toBe('MCP: fault/odd')
    expect(oddTool.parameters).toEqual({
      type: 'object',
      required: [odd],
      properties: {
        '0': { type: 'array', items: { type: 'number' } },
        constructor: { type: 'number' },
        [odd]: { type: 'string', description: odd },
        e: {
          anyOf: [
            { const: odd, type: 'string' },
            { const: protoValue, type: 'object' },
            { const: 9007199254740992, type: 'number' },
            { const: 0, type: 'number' },
            { const: 1e308, type: 'number' },
            { const: '\u2029', type: 'string' },
          ],
        },
      },
    })
    const props = oddTool.parameters.properties as Record<string, { anyOf: Array<{ const: object }> }>
    expect(Object.keys(props)).toEqual(['0', 'constructor', odd, 'e'])
    const protoConst = props.e.anyOf[1].const
    expect(Object.getPrototypeOf(protoConst)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(protoConst, '__proto__')?.value).toEqual({ deep: true })
    const plain = toolByName(manager, 'mcp_fault_plain')
    expect(plain.parameters).toEqual({ type: 'object', properties: { n: { type: 'number' } } })
    // fresh at every level, and a change to one list does not reach the next
    for (let i = 0; i < a.length; i++) {
      expect(a[i]).not.toBe(b[i])
      expect(a[i].parameters).not.toBe(b[i].parameters)
      expect(a[i].execute).not.toBe(b[i].execute)
      expect({ ...a[i], execute: null }).toEqual({ ...b[i], execute: null })
      expect(typeof a[i].execute).toBe('function')
    }
    const oddA = a.find((t) => t.name === 'mcp_fault_odd')!
    ;(oddA.parameters.properties as Record<string, { type: string }>).constructor.type = 'changed'
    expect((toolByName(manager, 'mcp_fault_odd').parameters.properties as Record<string, { type: string }>).constructor.type).toBe('number')
    ;(a[0].parameters as Record<string, unknown>).type = 'changed'
    expect(manager.getAgentTools()[0].parameters.type).toBe('object')
    // every tool routes to its own server tool
    expect((await oddA.execute('c1', { [odd]: odd })).content[0].text).toContain(JSON.stringify({ [odd]: odd }))
    expect((await plain.execute('c2', { n: 1 })).content[0].text).toContain('{"n":1}')
    expectWrappedResult(await toolByName(manager, 'mcp_fault_echo').execute('c3', { text: 'e' }), 'fault', 'echo', 'e')
    expect(manager.getAgentTools().map((t) => t.name)).toEqual(a.map((t) => t.name))
  })

  for (const builder of ['literal', 'templates'] as const)
  it(`getAgentTools() called again from user code it runs (a replaced JSON.parse) neither deadlocks nor breaks (${builder} builder)`, () => {
    // A schema holding a `__proto__` key is built with the global JSON.parse; run in a child so
    // a regression (a lock held while JS runs) shows as a timeout instead of hanging this suite.
    const file = path.join(tempDir(), 'tools.json')
    fs.writeFileSync(file, JSON.stringify([
      { name: 'p', inputSchema: { type: 'object', properties: { e: { type: 'string', enum: ['x', JSON.parse('{"__proto__":1}')] } } } },
      ...(builder === 'templates' ? [{ name: 'pad', description: 'p'.repeat(1_100_000), inputSchema: { type: 'object' } }] : []),
    ]))
    const code = `
      const { McpManager } = require(process.argv[1])
      ;(async () => {
        const m = new McpManager({ servers: { s: { command: process.argv[2], args: [process.argv[3], '--tools-file', process.argv[4]] } } })
        await m.start()
        const original = JSON.parse
        let inner = null
        JSON.parse = function (...args) {
          if (inner === null) { inner = []; inner = m.getAgentTools() }
          return original.apply(this, args)
        }
        const outer = m.getAgentTools()
        JSON.parse = original
        console.log(JSON.stringify({ outer: outer.map((t) => t.name), inner: inner.map((t) => t.name) }))
        await m.shutdown()
      })().catch((e) => { console.error(e); process.exit(1) })`
    const r = spawnSync(NODE, ['-e', code, path.join(ROOT, 'index.js'), NODE, FAULT_SERVER, file], { timeout: 20_000, encoding: 'utf8' })
    expect(r.error, r.stderr).toBeUndefined()
    expect(r.status, r.stderr).toBe(0)
    const { outer, inner } = JSON.parse(r.stdout)
    expect(outer).toContain('mcp_s_p')
    expect(inner).toEqual(outer)
  })

  it("toolPrefix replaces the server name in tool names only; '' gives mcp__<tool>", async () => {
    const { manager } = await startWith({ fx: faultServer([], { toolPrefix: 'pre' }), bare: faultServer([], { toolPrefix: '' }) })
    const pre = toolByName(manager, 'mcp_pre_echo')
    expect(pre.label).toBe('MCP: fx/echo')
    expect(pre.description).toBe('[MCP server: fx] Echo back the given text')
    expect(manager.getAgentTools().some((t) => t.name === 'mcp_fx_echo')).toBe(false)
    const bare = toolByName(manager, 'mcp__echo')
    expect(bare.label).toBe('MCP: bare/echo')
    expectWrappedResult(await pre.execute('c1', { text: 'p' }), 'fx', 'echo', 'p')
    expectWrappedResult(await bare.execute('c2', { text: 'b' }), 'bare', 'echo', 'b')
  })
})

describe('tool results', () => {
  it('echo: the result is exactly the untrusted-content block for the text, with details.externalContent', async () => {
    const { manager, log } = await startFault()
    const echo = toolByName(manager, 'mcp_fault_echo')
    for (const text of ['hello world', 'héllo 😀\nline 2\r\nline 3', '']) {
      const r = await echo.execute('call-1', { text })
      expectWrappedResult(r, 'fault', 'echo', text)
      const t = r.content[0].text
      expect(t.startsWith('SECURITY NOTICE:')).toBe(true)
      expect(t).toContain('\nSource: MCP Server\nFrom: fault\n---\n')
    }
    await log.waitFor('debug', /^MCP tool call fault\/echo took \d+ ms$/)
    expect(log.all('warn', /suspicious/)).toEqual([])
  })

  it('a result is plain data in the contract key order, untouched by setters user code puts on Object.prototype', async () => {
    const { manager } = await startFault()
    const echo = toolByName(manager, 'mcp_fault_echo')
    const hits: string[] = []
    const keys = ['content', 'details', 'type', 'text', 'externalContent', 'untrusted', 'source', 'server', 'tool', 'wrapped']
    for (const key of keys) {
      Object.defineProperty(Object.prototype, key, { configurable: true, set() { hits.push(key) } })
    }
    let first, second
    try {
      first = await echo.execute('c', { text: 'x' })
      second = await echo.execute('c', { text: 'y' })
    } finally {
      for (const key of keys) delete (Object.prototype as Record<string, unknown>)[key]
    }
    expect(hits).toEqual([])
    for (const r of [first, second]) {
      expect(Object.getPrototypeOf(r)).toBe(Object.prototype)
      expect(JSON.stringify(r)).toBe(JSON.stringify({
        content: [{ type: 'text', text: r.content[0].text }],
        details: { externalContent: { untrusted: true, source: 'mcp_server', server: 'fault', tool: 'echo', wrapped: true } },
      }))
    }
    // Fresh objects every time, all the way down.
    expect(first.content).not.toBe(second.content)
    expect(first.details.externalContent).not.toBe(second.details.externalContent)
  })

  it("wrapFormat: 'legacy' wraps with the id-less markers", async () => {
    const { manager } = await startFault([], {}, { wrapFormat: 'legacy' })
    const r = await toolByName(manager, 'mcp_fault_echo').execute('c', { text: 'legacy text' })
    expect(r.content).toEqual([
      { type: 'text', text: native.wrapExternalContent('legacy text', { source: 'mcp_server', sender: 'fault', includeWarning: true, format: 'legacy' }) },
    ])
    expect(r.content[0].text).toContain('\n<<<EXTERNAL_UNTRUSTED_CONTENT>>>\n')
    expect(r.content[0].text.endsWith('\n<<<END_EXTERNAL_UNTRUSTED_CONTENT>>>')).toBe(true)
  })

  it('add passes numeric arguments through', async () => {
    const { manager } = await startFault()
    expectWrappedResult(await toolByName(manager, 'mcp_fault_add').execute('c', { a: 2, b: 3.5 }), 'fault', 'add', '5.5')
  })

  it('nested and unicode arguments reach the server unchanged', async () => {
    const { manager } = await startFault()
    const args = { mode: 'fast', count: 2, tags: ['a', 'ü', '😀'], opts: { verbose: true, level: 1.5 }, meta: { k: [1, null] } }
    const r = await toolByName(manager, 'mcp_fault_schema').execute('c', args)
    expect(JSON.parse(wrappedBody(r))).toEqual(args)
  })

  it('arguments are serialised as JSON.stringify does; a cycle or a BigInt is an error result naming the cause', async () => {
    const { manager } = await startFault()
    const schema = toolByName(manager, 'mcp_fault_schema')
    const when = new Date(0)
    const r = await schema.execute('c', { when, gone: undefined, nested: { toJSON: () => 'custom' }, 'nul\u0000key': 1 })
    expect(JSON.parse(wrappedBody(r))).toEqual({ when: '1970-01-01T00:00:00.000Z', nested: 'custom', 'nul\u0000key': 1 })
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = cyclic
    const bad = await schema.execute('c', cyclic)
    expect(bad.details).toEqual({ error: true })
    expect(bad.content[0].text).toMatch(/^MCP tool error \(fault\/schema\): tool arguments .*circular/i)
    const big = await schema.execute('c', { n: 1n })
    expect(big.content[0].text).toMatch(/^MCP tool error \(fault\/schema\): tool arguments .*BigInt/)
    expect((await schema.execute('c', [1, 2])).content[0].text).toBe('MCP tool error (fault/schema): tool arguments must be an object')
  })

  it('an image item becomes [Image: image/png]', async () => {
    const { manager } = await startFault()
    expectWrappedResult(await toolByName(manager, 'mcp_fault_image').execute('c', {}), 'fault', 'image', 'an image follows\n[Image: image/png]')
  })

  it('empty text, audio and resource_link items are dropped', async () => {
    const { manager } = await startFault()
    expectWrappedResult(await toolByName(manager, 'mcp_fault_mixed').execute('c', {}), 'fault', 'mixed', 'first\nlast')
  })

  it("a JSON-RPC error is an error result 'MCP error -32602: bad input', never a throw", async () => {
    const { manager, log } = await startFault()
    const r = await toolByName(manager, 'mcp_fault_fail').execute('c', {})
    expectErrorResult(r, 'fault', 'fail', 'MCP error -32602: bad input')
    await log.waitFor('debug', /^MCP tool call fault\/fail took \d+ ms \(error\)$/)
    // the session is unaffected
    expectWrappedResult(await toolByName(manager, 'mcp_fault_echo').execute('c2', { text: 'ok' }), 'fault', 'echo', 'ok')
  })

  it('isError: true results are wrapped like successes (compat)', async () => {
    const { manager } = await startFault()
    expectWrappedResult(await toolByName(manager, 'mcp_fault_is_error').execute('c', {}), 'fault', 'is_error', 'tool reported an error')
  })

  it('an injection payload is wrapped with spoofed markers and special tokens sanitised, and logged as suspicious', async () => {
    const { manager, log } = await startFault()
    const r = await toolByName(manager, 'mcp_fault_inject').execute('c', {})
    expectWrappedResult(r, 'fault', 'inject', INJECTION_PAYLOAD)
    const text = r.content[0].text
    expect(text.match(/<<<EXTERNAL_UNTRUSTED_CONTENT/g)).toHaveLength(1)
    expect(text.match(/<<<END_EXTERNAL_UNTRUSTED_CONTENT/g)).toHaveLength(1)
    expect(text).toContain('[[END_MARKER_SANITIZED]]')
    expect(text).toContain('[[MARKER_SANITIZED]]')
    expect(text).toContain('[REMOVED_SPECIAL_TOKEN]system')
    expect(text).not.toContain('<|im_start|>')
    expect(text).not.toContain('deadbeefdeadbeef')
    const sources = native.detectSuspiciousPatterns(INJECTION_PAYLOAD)
    expect(sources.length).toBeGreaterThanOrEqual(2)
    await log.waitFor('warn', `MCP server 'fault' tool 'inject' returned suspicious patterns: ${sources.join(', ')}`)
  })

  it('tools/list is paginated to the end (250 extra tools, 40 per page)', async () => {
    const { manager, log } = await startFault(['--tools', 250, '--page-size', 40])
    const total = 250 + BUILTIN_COUNT
    expect(statusOf(manager, 'fault')).toEqual({ name: 'fault', status: 'ready', toolCount: total, transport: 'stdio' })
    const names = manager.getAgentTools().map((t) => t.name)
    expect(names).toHaveLength(total)
    expect(new Set(names).size).toBe(total)
    expect(names.slice(0, BUILTIN_COUNT)).toEqual(FAULT_BUILTIN_TOOLS.map((t) => `mcp_fault_${t}`))
    expect(names.at(-1)).toBe('mcp_fault_t249')
    await log.waitFor('info', `MCP server 'fault' connected (${total} tools)`)
    expectWrappedResult(await toolByName(manager, 'mcp_fault_t249').execute('c', {}), 'fault', 't249', 't249')
  })

  it('a 2 MB result arrives intact', async () => {
    const { manager } = await startFault()
    const r = await toolByName(manager, 'mcp_fault_big').execute('c', { bytes: 2_000_000 })
    const body = wrappedBody(r)
    expect(body.length).toBe(2_000_000)
    expect(/^x+$/.test(body)).toBe(true)
  })

  it('50 parallel calls each get their own answer', async () => {
    const { manager } = await startFault()
    const echo = toolByName(manager, 'mcp_fault_echo')
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => echo.execute(`c${i}`, { text: `message ${i}` })))
    results.forEach((r, i) => expectWrappedResult(r, 'fault', 'echo', `message ${i}`))
  })
})

describe('process environment', () => {
  it('config env is applied on top of the host environment; config wins', async () => {
    process.env.MCP_NATIVE_TEST_HOST_ONLY = 'from-host'
    process.env.MCP_NATIVE_TEST_BOTH = 'from-host'
    try {
      const { manager } = await startFault([], { env: { MCP_NATIVE_TEST_CFG_ONLY: 'from-config', MCP_NATIVE_TEST_BOTH: 'from-config' } })
      // Compared by digest (env_hash), so a policy that scrubs config values from
      // tool output cannot hide whether the server received them.
      const hash = toolByName(manager, 'mcp_fault_env_hash')
      const get = async (name: string) => wrappedBody(await hash.execute('c', { name }))
      const sha = (v: string) => createHash('sha256').update(v).digest('hex')
      expect(await get('MCP_NATIVE_TEST_HOST_ONLY')).toBe(sha('from-host'))
      expect(await get('MCP_NATIVE_TEST_CFG_ONLY')).toBe(sha('from-config'))
      expect(await get('MCP_NATIVE_TEST_BOTH')).toBe(sha('from-config'))
      expect(await get('MCP_NATIVE_TEST_NEVER_SET')).toBe('<unset>')
      expect(await get('PATH')).toBe(sha(process.env.PATH ?? ''))
    } finally {
      delete process.env.MCP_NATIVE_TEST_HOST_ONLY
      delete process.env.MCP_NATIVE_TEST_BOTH
    }
  })

  it('cwd is honoured', async () => {
    const dir = tempDir()
    const { manager } = await startFault([], { cwd: dir })
    const r = await toolByName(manager, 'mcp_fault_cwd').execute('c', {})
    expect(fs.realpathSync(wrappedBody(r))).toBe(fs.realpathSync(dir))
  })

  it('server stderr reaches logger.warn, one entry per line, in order', async () => {
    const { manager, log } = await startFault(['--stderr-chatter'])
    const started = await Promise.all([1, 2, 3].map((i) => log.waitFor('warn', `MCP server 'fault' stderr: chatter: started ${i}`)))
    const idx = started.map((e) => log.entries.indexOf(e))
    expect(idx).toEqual([...idx].sort((a, b) => a - b))
    await toolByName(manager, 'mcp_fault_echo').execute('c', { text: 'x' })
    await log.waitFor('warn', "MCP server 'fault' stderr: chatter: call echo")
  })

  it('malformed stdout lines do not break the session', async () => {
    const { manager } = await startFault(['--malformed'])
    expect(statusOf(manager, 'fault')?.status).toBe('ready')
    const echo = toolByName(manager, 'mcp_fault_echo')
    for (let i = 0; i < 5; i++) expectWrappedResult(await echo.execute(`s${i}`, { text: `seq ${i}` }), 'fault', 'echo', `seq ${i}`)
    const par = await Promise.all(Array.from({ length: 10 }, (_, i) => echo.execute(`p${i}`, { text: `par ${i}` })))
    par.forEach((r, i) => expectWrappedResult(r, 'fault', 'echo', `par ${i}`))
    expect(statusOf(manager, 'fault')?.status).toBe('ready')
  })
})

describe('timeouts, cancellation and progress', () => {
  it('toolTimeout: a hung call gives "MCP error -32001: Request timed out" in bounded time and the server is told to cancel', async () => {
    const cancelLog = path.join(tempDir(), 'cancel.log')
    const { manager } = await startFault(['--cancel-log', cancelLog], { toolTimeout: 300 })
    const { value: r, ms } = await timed(toolByName(manager, 'mcp_fault_hang').execute('c', {}))
    expectErrorResult(r, 'fault', 'hang', 'MCP error -32001: Request timed out')
    expect(ms).toBeGreaterThanOrEqual(250)
    expect(ms).toBeLessThan(2_000)
    const id = await waitForCall(cancelLog, 'hang')
    await waitForCancelled(cancelLog, id)
    expectWrappedResult(await toolByName(manager, 'mcp_fault_echo').execute('c2', { text: 'alive' }), 'fault', 'echo', 'alive')
  })

  it('toolTimeout applies to every tool (a slow server times out too)', async () => {
    const { manager } = await startFault(['--latency', 1_000], { toolTimeout: 200 })
    const { value: r, ms } = await timed(toolByName(manager, 'mcp_fault_echo').execute('c', { text: 'late' }))
    expectErrorResult(r, 'fault', 'echo', 'MCP error -32001: Request timed out')
    expect(ms).toBeLessThan(900)
  })

  it('aborting the signal during a hung call settles within 200 ms as an aborted error result and cancels on the server', async () => {
    const cancelLog = path.join(tempDir(), 'cancel.log')
    const { manager } = await startFault(['--cancel-log', cancelLog])
    const ac = new AbortController()
    const pending = toolByName(manager, 'mcp_fault_hang').execute('c', {}, ac.signal)
    const id = await waitForCall(cancelLog, 'hang') // the request reached the server
    const t0 = performance.now()
    ac.abort()
    const r = await pending
    expect(performance.now() - t0).toBeLessThan(200)
    expectErrorResult(r, 'fault', 'hang', /aborted/i)
    await waitForCancelled(cancelLog, id)
    expect(statusOf(manager, 'fault')?.status).toBe('ready')
    expectWrappedResult(await toolByName(manager, 'mcp_fault_echo').execute('c2', { text: 'alive' }), 'fault', 'echo', 'alive')
  })

  it('an already-aborted signal gives an aborted error result at once, without running the tool', async () => {
    const cancelLog = path.join(tempDir(), 'cancel.log')
    const { manager } = await startFault(['--cancel-log', cancelLog])
    const { value: r, ms } = await timed(toolByName(manager, 'mcp_fault_hang').execute('c', {}, AbortSignal.abort()))
    expect(ms).toBeLessThan(100)
    expectErrorResult(r, 'fault', 'hang', /aborted/i)
    // A later call is logged; the aborted one never was.
    await toolByName(manager, 'mcp_fault_echo').execute('c2', { text: 'x' })
    await waitForCall(cancelLog, 'echo')
    expect(fileLines(cancelLog).filter((l) => l.endsWith(' hang'))).toEqual([])
  })

  it('progress notifications reach onUpdate', async () => {
    const { manager } = await startFault()
    const slow = toolByName(manager, 'mcp_fault_slow')
    const updates: ToolResult[] = []
    const r = await slow.execute('c', { ms: 500 }, undefined, (u) => updates.push(u))
    expectWrappedResult(r, 'fault', 'slow', 'slept 500 ms')
    // The server sends 10 notifications (one per 50 ms) before answering.
    await waitUntil(() => updates.length >= 5, { timeout: 2_000, what: () => `>= 5 progress updates (got ${updates.length})` })
    for (const u of updates) {
      expect(Array.isArray(u.content)).toBe(true)
      expect(u.content[0]?.type).toBe('text')
      expect(typeof u.content[0]?.text).toBe('string')
    }
    // Without onUpdate the same tool still works.
    expectWrappedResult(await slow.execute('c2', { ms: 60 }), 'fault', 'slow', 'slept 60 ms')
  })

  it('one signal shared by many calls (as an agent run passes it): no listener is left once each call settles, no leak warning, and it still aborts the call in flight', async () => {
    const cancelLog = path.join(tempDir(), 'cancel.log')
    const { manager } = await startFault(['--cancel-log', cancelLog])
    const echo = toolByName(manager, 'mcp_fault_echo')
    const ac = new AbortController()
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`)
    process.on('warning', onWarning)
    try {
      for (let i = 0; i < 30; i++) {
        expectWrappedResult(await echo.execute(`c${i}`, { text: `n${i}` }, ac.signal), 'fault', 'echo', `n${i}`)
        expect(getEventListeners(ac.signal, 'abort'), `listeners after call ${i}`).toHaveLength(0)
      }
      // 20 at once: one listener for all of them while they run, none after.
      const many = Array.from({ length: 20 }, (_, i) => echo.execute(`m${i}`, { text: `m${i}` }, ac.signal))
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1)
      await Promise.all(many)
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0)
      // Node reports a listener leak from the eleventh listener on, on a later tick.
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).toEqual([])
      // The same signal still cancels the calls in flight, each of them.
      const hang = toolByName(manager, 'mcp_fault_hang')
      const pending = hang.execute('h', {}, ac.signal)
      const id = await waitForCall(cancelLog, 'hang')
      const another = hang.execute('h2', {}, ac.signal)
      ac.abort()
      expectErrorResult(await pending, 'fault', 'hang', /aborted/i)
      expectErrorResult(await another, 'fault', 'hang', /aborted/i)
      await waitForCancelled(cancelLog, id)
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0)
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('an onUpdate that throws neither stops the call nor its later updates, and no update arrives after the result', async () => {
    const { manager } = await startFault()
    const slow = toolByName(manager, 'mcp_fault_slow')
    const seen: string[] = []
    let settled = false
    const r = await slow.execute('c', { ms: 300 }, new AbortController().signal, (u: ToolResult) => {
      seen.push(settled ? 'late' : 'update')
      expect(u.content[0]?.type).toBe('text')
      throw new Error('onUpdate failed')
    })
    settled = true
    expectWrappedResult(r, 'fault', 'slow', 'slept 300 ms')
    // The server sends one notification per 50 ms before it answers: all of them came, each
    // though the one before threw, and all before the result.
    expect(seen.length).toBeGreaterThanOrEqual(5)
    // A later call on the same server has come and gone: nothing of the first one came after.
    expectWrappedResult(await slow.execute('c2', { ms: 60 }), 'fault', 'slow', 'slept 60 ms')
    expect(seen.filter((s) => s === 'late')).toEqual([])
  })

  it('a signal whose getters throw, or that is not an AbortSignal, counts as no signal', async () => {
    const { manager } = await startFault()
    const echo = toolByName(manager, 'mcp_fault_echo')
    const throwing = { get aborted(): boolean { throw new Error('boom') }, addEventListener() {} }
    const addThrows = { aborted: false, addEventListener() { throw new Error('boom') } }
    for (const signal of [throwing, addThrows, { aborted: 'no' }, 42, 'signal', () => {}]) {
      expectWrappedResult(await echo.execute('c', { text: 'ok' }, signal as never, 7 as never), 'fault', 'echo', 'ok')
    }
  })
})

describe('failed starts, crashes and restarts', () => {
  it('--exit-at-start with maxRestarts 0: start() resolves, status error, the error log carries the server stderr', async () => {
    const { manager, log } = await startWith({ dead: faultServer(['--exit-at-start'], { maxRestarts: 0 }) })
    expect(manager.getStatus()).toEqual([{ name: 'dead', status: 'error', toolCount: 0 }])
    const e = await log.waitFor('error', /^MCP server 'dead' failed to start: /)
    expect(e.msg).toContain('fault-server: exiting at start (code 3)')
    expect(manager.getAgentTools()).toEqual([])
    expect(log.has('info', /restarting/)).toBe(false)
  })

  it('a failed start is retried after 1 s when restartOnCrash is on, up to maxRestarts', async () => {
    const { manager, log } = await startWith({ dead: faultServer(['--exit-at-start'], { maxRestarts: 1 }) })
    const first = await log.waitFor('error', /^MCP server 'dead' failed to start: /)
    await log.waitFor('info', "MCP server 'dead' restarting in 1000 ms (attempt 1/1)")
    const second = await log.waitFor('error', /^MCP server 'dead' failed to start: /, { count: 2, timeout: 5_000 })
    expect(second.at - first.at).toBeGreaterThanOrEqual(900)
    expect(second.msg).toContain('fault-server: exiting at start (code 3)')
    await waitForStatus(manager, 'dead', 'error', 2_000)
  })

  it('parallel start: a failing server neither blocks nor breaks a healthy one', async () => {
    const log = new RecordingLogger()
    const manager = createManager(
      { servers: { dead: faultServer(['--exit-at-start']), good: faultServer(['--init-delay', 300]) } },
      { logger: log.logger },
    )
    // default restart policy for `dead`: start() must not wait for its 5 retries
    const { ms } = await timed(manager.start())
    expect(ms).toBeLessThan(5_000)
    expect(statusOf(manager, 'good')).toEqual({ name: 'good', status: 'ready', toolCount: BUILTIN_COUNT, transport: 'stdio' })
    expect(statusOf(manager, 'dead')?.status).not.toBe('ready')
    expect(manager.getAgentTools().every((t) => t.name.startsWith('mcp_good_'))).toBe(true)
    expect(manager.getAgentTools()).toHaveLength(BUILTIN_COUNT)
    await log.waitFor('error', /^MCP server 'dead' failed to start: /)
  })

  it('status is connecting while the server initialises', async () => {
    const manager = createManager({ servers: { slowinit: faultServer(['--init-delay', 1_500]) } })
    const started = manager.start()
    await waitForStatus(manager, 'slowinit', 'connecting', 1_400)
    expect(manager.getAgentTools()).toEqual([])
    await started
    expect(statusOf(manager, 'slowinit')?.status).toBe('ready')
  })

  it('a crash is logged, the server restarts after ~1 s with tools re-listed, and an old tool object works again', async () => {
    const dir = tempDir()
    const marker = path.join(dir, 'crashed')
    const pidFile = path.join(dir, 'server.pid')
    const { manager, log } = await startFault(['--crash-after', 1, '--crash-marker', marker, '--pidfile', pidFile])
    const [pid1] = await readPidFile(pidFile)
    const echo = toolByName(manager, 'mcp_fault_echo')
    expect(manager.getAgentTools().some((t) => t.name === 'mcp_fault_restarted')).toBe(false)

    expectWrappedResult(await echo.execute('c1', { text: 'before' }), 'fault', 'echo', 'before') // then the server exits 1
    const exited = await log.waitFor('warn', /^MCP server 'fault' exited unexpectedly: /)
    await log.waitFor('info', "MCP server 'fault' restarting in 1000 ms (attempt 1/5)")

    // During the restart window: not-ready error at once, and no tools from this server.
    const { value: during, ms } = await timed(echo.execute('c2', { text: 'during' }))
    expectErrorResult(during, 'fault', 'echo', NOT_READY('fault'))
    expect(ms).toBeLessThan(100)
    expect(manager.getAgentTools()).toEqual([])

    const connected = await log.waitFor('info', `MCP server 'fault' connected (${BUILTIN_COUNT + 1} tools)`, { timeout: 8_000 })
    expect(connected.at - exited.at).toBeGreaterThanOrEqual(900)
    await waitForStatus(manager, 'fault', 'ready')
    expect(statusOf(manager, 'fault')?.toolCount).toBe(BUILTIN_COUNT + 1)
    // a fresh tools/list: the restarted server offers `restarted`
    expect(manager.getAgentTools().map((t) => t.name)).toContain('mcp_fault_restarted')
    const [pid2] = await waitUntil(async () => {
      const [p] = await readPidFile(pidFile)
      return p !== pid1 ? [p] : undefined
    })
    expect(isAlive(pid1)).toBe(false)
    expect(isAlive(pid2)).toBe(true)

    expectWrappedResult(await echo.execute('c3', { text: 'after' }), 'fault', 'echo', 'after')
  })

  it('in-flight calls fail with "MCP error -32000: Connection closed" when the server dies; restartOnCrash:false stays down', async () => {
    const cancelLog = path.join(tempDir(), 'cancel.log')
    const { manager, log } = await startFault(['--cancel-log', cancelLog], { restartOnCrash: false })
    const echo = toolByName(manager, 'mcp_fault_echo')
    const hanging = toolByName(manager, 'mcp_fault_hang').execute('h', {})
    await waitForCall(cancelLog, 'hang')
    const r = await toolByName(manager, 'mcp_fault_exit').execute('x', { code: 1 })
    expectErrorResult(r, 'fault', 'exit', 'MCP error -32000: Connection closed')
    expectErrorResult(await hanging, 'fault', 'hang', 'MCP error -32000: Connection closed')
    await log.waitFor('warn', /^MCP server 'fault' exited unexpectedly: /)
    await waitUntil(() => statusOf(manager, 'fault')?.status !== 'ready')
    expect(manager.getAgentTools()).toEqual([])
    expectErrorResult(await echo.execute('e', { text: 'x' }), 'fault', 'echo', NOT_READY('fault'))
    expect(await log.staysAbsent('info', /restarting/, 1_500)).toBe(true)
    expect(statusOf(manager, 'fault')?.status).not.toBe('ready')
  })

  it('maxRestarts is respected', async () => {
    const { manager, log } = await startFault(['--crash-after', 1], { maxRestarts: 1 })
    const echo = toolByName(manager, 'mcp_fault_echo')
    expectWrappedResult(await echo.execute('c1', { text: 'one' }), 'fault', 'echo', 'one')
    await log.waitFor('warn', /^MCP server 'fault' exited unexpectedly: /)
    await log.waitFor('info', "MCP server 'fault' restarting in 1000 ms (attempt 1/1)")
    await log.waitFor('info', `MCP server 'fault' connected (${BUILTIN_COUNT} tools)`, { count: 2, timeout: 8_000 })
    await waitForStatus(manager, 'fault', 'ready')
    expectWrappedResult(await echo.execute('c2', { text: 'two' }), 'fault', 'echo', 'two')
    await log.waitFor('warn', /^MCP server 'fault' exited unexpectedly: /, { count: 2 })
    expect(await log.staysAbsent('info', /restarting/, 2_500)).toBe(true)
    expect(log.all('info', /restarting/)).toHaveLength(1)
    expect(statusOf(manager, 'fault')?.status).not.toBe('ready')
    expectErrorResult(await echo.execute('c3', { text: 'three' }), 'fault', 'echo', NOT_READY('fault'))
  })

  it('shutdown() during a pending restart cancels it', async () => {
    const pidFile = path.join(tempDir(), 'server.pid')
    const { manager, log } = await startFault(['--crash-after', 1, '--pidfile', pidFile])
    const [pid1] = await readPidFile(pidFile)
    await toolByName(manager, 'mcp_fault_echo').execute('c1', { text: 'x' })
    await log.waitFor('info', /^MCP server 'fault' restarting in 1000 ms/)
    await manager.shutdown()
    expect(manager.getStatus()).toEqual([expect.objectContaining({ name: 'fault', status: 'closed' })])
    expect(await log.staysAbsent('info', /connected/, 1_800)).toBe(true)
    expect((await readPidFile(pidFile))[0]).toBe(pid1)
    expect(manager.getStatus()[0].status).toBe('closed')
  })
})

describe('shutdown', () => {
  it('after shutdown every status is closed, no tools are offered, old tools report closed, and shutdown is idempotent', async () => {
    const { manager, log } = await startWith({ a: faultServer(), b: faultServer() })
    const echo = toolByName(manager, 'mcp_a_echo')
    await manager.shutdown()
    expect(manager.getStatus().map((s) => [s.name, s.status])).toEqual([['a', 'closed'], ['b', 'closed']])
    expect(manager.getAgentTools()).toEqual([])
    expect(manager.getTools()).toEqual([])
    await log.waitFor('info', "MCP server 'a' stopped")
    await log.waitFor('info', "MCP server 'b' stopped")
    expectErrorResult(await echo.execute('c', { text: 'x' }), 'a', 'echo', "MCP server 'a' is not ready (status: closed)")
    await expect(manager.shutdown()).resolves.toBeUndefined()
    await expect(Promise.all([manager.shutdown(), manager.shutdown()])).resolves.toBeDefined()
  })

  it('shutdown() before start() resolves and reports closed', async () => {
    const manager = createManager({ servers: { a: faultServer() } })
    await manager.shutdown()
    expect(manager.getStatus()).toEqual([{ name: 'a', status: 'closed', toolCount: 0 }])
  })

  it('shutdown() settles in-flight calls as error results', async () => {
    const cancelLog = path.join(tempDir(), 'cancel.log')
    const { manager } = await startFault(['--cancel-log', cancelLog])
    const pending = toolByName(manager, 'mcp_fault_hang').execute('h', {})
    await waitForCall(cancelLog, 'hang')
    const { ms } = await timed(manager.shutdown())
    expect(ms).toBeLessThan(5_000)
    const r = await pending
    expect(r.details).toEqual({ error: true })
    expect(r.content[0].text.startsWith('MCP tool error (fault/hang): ')).toBe(true)
  })
})

describe('resources (getResourceContext)', () => {
  const ALPHA: [string, string, string] = ['Alpha', 'fault://text/alpha', 'alpha text']
  const BETA: [string, string, string] = ['Beta', 'fault://text/beta', 'beta part 1\nbeta part 2']
  const LOGO: [string, string, string] = ['Logo', 'fault://blob/logo', '[Binary resource: image/png, fault://blob/logo]']
  const RAW: [string, string, string] = ['Raw', 'fault://blob/raw', '[Binary resource: unknown, fault://blob/raw]']

  /** Builds the expected context using the ids found in `actual`, in order. */
  function expectedContext(actual: string, blocks: Array<[server: string, sections: Array<[string, string, string]>]>): string {
    const ids = [...actual.matchAll(/<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]{16})">>>/g)].map((m) => m[1])
    let k = 0
    return blocks
      .map(([server, sections]) =>
        `## MCP Resources from ${server}\n\n` +
        sections.map(([name, uri, body]) => `### ${name} (${uri})\n${expectedWrapped(body, server, ids[k++] ?? 'missing-id')}`).join('\n\n'),
      )
      .join('\n\n')
  }

  it('text parts are joined, blobs are described, a failed read is warn-logged and skipped', async () => {
    const { manager, log } = await startFault(['--resources'])
    const ctx = await manager.getResourceContext()
    expect(ctx).toBe(expectedContext(ctx, [['fault', [ALPHA, BETA, LOGO, RAW]]]))
    const warn = await log.waitFor('warn', /^Failed to read MCP resource 'fault:\/\/broken' from 'fault': /)
    expect(warn.msg).toContain('Resource unavailable: fault://broken')
  })

  it('resources: false sends no resources/list at all', async () => {
    const requestLog = path.join(tempDir(), 'requests.log')
    const { manager } = await startFault(['--resources', '--request-log', requestLog], { resources: false })
    expect(await manager.getResourceContext()).toBe('')
    const methods = fileLines(requestLog).map((l) => l.split(' ')[0])
    expect(methods).toContain('tools/list')
    expect(methods).not.toContain('resources/list')
    expect(methods).not.toContain('resources/read')
  })

  it('resourceFilter keeps exact URIs only', async () => {
    const requestLog = path.join(tempDir(), 'requests.log')
    const { manager, log } = await startFault(['--resources', '--request-log', requestLog], {
      resourceFilter: ['fault://text/beta', 'fault://blob/raw', 'fault://text', 'fault://missing'],
    })
    const ctx = await manager.getResourceContext()
    expect(ctx).toBe(expectedContext(ctx, [['fault', [BETA, RAW]]]))
    expect(fileLines(requestLog).filter((l) => l.startsWith('resources/read ')).length).toBe(2)
    expect(log.all('warn', /Failed to read/)).toEqual([])
  })

  it('a server whose resources/list fails is warn-logged and skipped; other servers still contribute, in config order', async () => {
    const { manager, log } = await startWith({
      bad: faultServer(['--broken-resource-list']),
      plain: faultServer(),
      first: faultServer(['--resources'], { resourceFilter: ['fault://text/alpha'] }),
      second: faultServer(['--resources'], { resourceFilter: ['fault://blob/logo'] }),
    })
    const ctx = await manager.getResourceContext()
    expect(ctx).toBe(expectedContext(ctx, [['first', [ALPHA]], ['second', [LOGO]]]))
    const warn = await log.waitFor('warn', /^Failed to get resources from 'bad': /)
    expect(warn.msg).toContain('resource listing failed')
  })

  it('servers that are not ready contribute nothing', async () => {
    const { manager } = await startWith({
      dead: faultServer(['--exit-at-start'], { maxRestarts: 0 }),
      ok: faultServer(['--resources'], { resourceFilter: ['fault://text/alpha'] }),
    })
    const ctx = await manager.getResourceContext()
    expect(ctx).toBe(expectedContext(ctx, [['ok', [ALPHA]]]))
    await manager.shutdown()
    expect(await manager.getResourceContext()).toBe('')
  })
})
