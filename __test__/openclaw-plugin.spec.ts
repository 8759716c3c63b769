// The OpenClaw plugin's own parts without OpenClaw (the real gateway: openclaw-e2e.spec.ts):
// which servers it runs for an openclaw.json, `openclaw-mcp-native openclaw sync`, and the plugin
// object driven the way OpenClaw drives it (register, tool factory, service, dispose), against
// the example server.

import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CLI, cleanup, ECHO_SERVER, expectedWrapped, NODE, processesTagged, ROOT, spawnNode, tempDir, waitForDeath, waitUntil, wrappedId } from './helpers'

const require = createRequire(import.meta.url)
let home: string
let config: typeof import('../openclaw/config.js')
let pluginModule: any

beforeAll(() => {
  // The plugin keeps its tool cache and OAuth tokens under ~/.openclaw/mcp-native.
  home = tempDir('mcp-native-home-')
  process.env.HOME = home
  config = require('../openclaw/config.js')
  pluginModule = require('../openclaw/plugin.js')
})
afterEach(cleanup)
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

const echo = (...args: string[]) => ({ command: NODE, args: [ECHO_SERVER, ...args] })

describe('resolvePluginSetup: the servers the plugin runs for an openclaw.json', () => {
  it("reads OpenClaw's mcp.servers as bundle-mcp does: every agent sees them, resources and prompts as tools, sessionIdleTtlMs as idleTimeoutMs", () => {
    const setup = config.resolvePluginSetup({
      mcp: { servers: { echo: echo(), web: { url: 'http://127.0.0.1:1/mcp', transport: 'streamable-http' } }, sessionIdleTtlMs: 60000.7 },
      secrets: { providers: { vault: { source: 'exec', command: '/bin/true' } } },
    })
    expect(Object.keys(setup.config.servers!)).toEqual(['echo', 'web'])
    expect(setup.config.servers!.echo).toMatchObject({ command: NODE, resourceTools: true, promptTools: true, idleTimeoutMs: 60000 })
    expect(setup.config.servers!.web).toMatchObject({ url: 'http://127.0.0.1:1/mcp', transport: 'streamable-http' })
    expect(setup.views).toEqual({ '*': ['echo', 'web'] })
    expect(setup.options).toEqual({ toolNames: 'openclaw', secretProviders: { vault: { source: 'exec', command: '/bin/true' } } })
  })

  it("takes the plugin's own servers instead, and per-agent servers in PR #21530's shape, one definition shared", () => {
    const setup = config.resolvePluginSetup(
      { mcp: { servers: { ignored: echo() } } },
      {
        servers: { echo: echo() },
        agents: {
          defaults: { mcp: { servers: { notes: echo('notes') } } },
          list: [{ id: 'ops', mcp: { servers: { pager: echo('pager') } } }, { id: 'main' }],
        },
        idleTimeoutMs: 5000,
        results: 'rich',
      },
    )
    expect(Object.keys(setup.config.servers!).sort()).toEqual(['echo', 'notes', 'pager'])
    expect(setup.views).toEqual({ '*': ['echo', 'notes'], ops: ['echo', 'notes', 'pager'], main: ['echo', 'notes'] })
    expect(config.viewFor(setup.views, 'ops')).toEqual(['echo', 'notes', 'pager'])
    expect(config.viewFor(setup.views, 'someone-else')).toEqual(['echo', 'notes'])
    expect(setup.config.servers!.pager.idleTimeoutMs).toBe(5000)
    expect(setup.options).toEqual({ toolNames: 'openclaw', results: 'rich' })
  })

  it('names the place and the problem of a config it cannot use', () => {
    expect(() => config.resolvePluginSetup({ mcp: { servers: { bad: { transport: 'stdio' } } } })).toThrow(/^mcp\.servers: .*bad.*command/)
    expect(() => config.resolvePluginSetup({ mcp: { servers: [] } })).toThrow('mcp.servers: must be an object of server definitions')
    expect(() => config.resolvePluginSetup({ mcp: { servers: { a: echo() } } }, { agents: { defaults: { mcp: { servers: { a: echo('other') } } } } })).toThrow(
      "plugins.entries.mcp-native.config.agents: server 'a' is also defined in mcp.servers; give one of them another name",
    )
    expect(() => config.resolvePluginSetup({}, { idleTimeoutMs: -1 })).toThrow('plugins.entries.mcp-native.config.idleTimeoutMs: must be a positive number of ms')
  })
})

/** A plugin directory as OpenClaw installed it: the manifest (what sync edits). */
function pluginDir(): string {
  const dir = tempDir('mcp-native-plugin-')
  fs.copyFileSync(path.join(ROOT, 'openclaw.plugin.json'), path.join(dir, 'openclaw.plugin.json'))
  return dir
}

function writeOpenclawJson(dir: string, json: unknown): string {
  const file = path.join(dir, 'openclaw.json')
  fs.writeFileSync(file, JSON.stringify(json))
  return file
}

async function sync(file: string, dir: string, ...extra: string[]) {
  const p = spawnNode([CLI, 'openclaw', 'sync', '--config', file, '--plugin-dir', dir, ...extra], { env: { ...process.env, HOME: home } })
  const { code } = await p.exited
  return { code, stdout: p.stdout(), stderr: p.stderr() }
}

const ECHO_TOOLS = ['echo__add', 'echo__current_time', 'echo__echo', 'echo__resources_list', 'echo__resources_read', 'echo__word_count']

describe('openclaw-mcp-native openclaw sync', () => {
  it('declares every tool in contracts.tools, then says which server changed since', async () => {
    const dir = pluginDir()
    const file = writeOpenclawJson(dir, { mcp: { servers: { echo: echo() } } })
    const first = await sync(file, dir)
    expect(first.code).toBe(0)
    expect(first.stdout).toBe(
      `echo: 6 tools, new\nDeclared 6 tool names in ${path.join(dir, 'openclaw.plugin.json')}\nRestart the gateway (openclaw gateway restart) so that OpenClaw reads them.\n` +
        'New tool names: accept them with `openclaw plugins enable mcp-native --accept-capabilities`.\n',
    )
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'openclaw.plugin.json'), 'utf8'))
    expect(manifest.contracts.tools).toEqual(ECHO_TOOLS)
    expect(manifest.id).toBe('mcp-native')
    const synced = JSON.parse(fs.readFileSync(path.join(dir, 'openclaw.tools.json'), 'utf8'))
    expect(synced.agents['*'].map((d: any) => [d.name, d.server])).toEqual([
      ['echo__echo', 'echo'], ['echo__add', 'echo'], ['echo__current_time', 'echo'], ['echo__word_count', 'echo'], ['echo__resources_list', 'echo'], ['echo__resources_read', 'echo'],
    ])

    const again = (await sync(file, dir)).stdout
    expect(again).toMatch(/^echo: 6 tools, unchanged since the last sync\n/)
    expect(again).not.toContain('New tool names')

    writeOpenclawJson(dir, { mcp: { servers: { echo: { ...echo(), toolFilter: { exclude: ['add'] } } } } })
    const changed = await sync(file, dir, '--json')
    expect(changed.code).toBe(0)
    const report = JSON.parse(changed.stdout)
    expect(report.servers).toEqual([{ server: 'echo', status: 'ready', tools: 5, change: 'changed', added: [], removed: ['echo__add'] }])
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'openclaw.plugin.json'), 'utf8')).contracts.tools).toEqual(ECHO_TOOLS.filter((t) => t !== 'echo__add'))
  }, 60_000)

  it("keeps a server's last synced tools when it does not start, and exits 1 naming it", async () => {
    const dir = pluginDir()
    const file = writeOpenclawJson(dir, { mcp: { servers: { echo: echo() } } })
    expect((await sync(file, dir)).code).toBe(0)
    writeOpenclawJson(dir, { mcp: { servers: { echo: { command: path.join(dir, 'no-such-server') } } } })
    const failed = await sync(file, dir, '--timeout', '5s')
    expect(failed.code).toBe(1)
    expect(failed.stdout).toMatch(/^echo: 6 tools, did not start \((error|disconnected)\): kept the tools of the last sync\n/)
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'openclaw.plugin.json'), 'utf8')).contracts.tools).toEqual(ECHO_TOOLS)
  }, 60_000)

  it('names what is wrong with its arguments', async () => {
    const dir = tempDir('mcp-native-noplugin-')
    const file = writeOpenclawJson(dir, { mcp: { servers: { echo: echo() } } })
    const noManifest = await sync(file, dir)
    expect(noManifest.code).toBe(2)
    expect(noManifest.stderr).toContain(`--plugin-dir ${dir}: no openclaw.plugin.json there`)
    const p = spawnNode([CLI, 'openclaw', 'push'])
    expect((await p.exited).code).toBe(2)
    expect(p.stderr()).toContain("unknown openclaw subcommand 'push' (subcommands: sync)")
  }, 30_000)
})

/** What OpenClaw gives `register(api)`, recording what the plugin registers. */
function fakeApi(rootDir: string, openclawJson: unknown, lines: string[]) {
  const api: any = {
    id: 'mcp-native',
    rootDir,
    registrationMode: 'full',
    config: openclawJson,
    pluginConfig: {},
    logger: {
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
      error: (m: string) => lines.push(`error ${m}`),
    },
    tools: [] as any[],
    services: [] as any[],
    disposers: [] as Array<() => unknown>,
    registerTool: (factory: any) => api.tools.push(factory),
    registerService: (service: any) => api.services.push(service),
    lifecycle: { registerRuntimeLifecycle: (l: any) => api.disposers.push(l.dispose) },
  }
  return api
}

describe('the plugin as OpenClaw drives it', () => {
  it('offers the synced tools at once, calls wait for the server, agents share one process, and the last registration out stops it', async () => {
    const dir = pluginDir()
    const json = { mcp: { servers: { echo: echo() } } }
    const file = writeOpenclawJson(dir, json)
    expect((await sync(file, dir)).code).toBe(0)

    const lines: string[] = []
    // OpenClaw registers the plugin more than once in a gateway; both registrations share a host.
    const first = fakeApi(dir, json, lines)
    const second = fakeApi(dir, json, lines)
    pluginModule.register(first)
    pluginModule.register(second)
    expect(first.tools).toHaveLength(1)
    expect(first.services.map((s: any) => s.id)).toEqual(['mcp-native'])

    // The factory is synchronous: before the server is up it offers what the sync saw.
    const tools = first.tools[0]({ agentId: 'main', sessionKey: 'agent:main:1' })
    expect(tools.map((t: any) => t.name)).toEqual(['echo__echo', 'echo__add', 'echo__current_time', 'echo__word_count', 'echo__resources_list', 'echo__resources_read'])
    const result = await tools.find((t: any) => t.name === 'echo__echo').execute('c1', { text: 'before ready' })
    expect(result.content[0].text).toBe(expectedWrapped('before ready', 'echo', wrappedId(result.content[0].text)))
    const [pid] = processesTagged(ECHO_SERVER)
    expect(pid).toBeGreaterThan(0)

    // Another agent, through the other registration: the same process.
    const opsTools = second.tools[0]({ agentId: 'ops' })
    const sum = await opsTools.find((t: any) => t.name === 'echo__add').execute('c2', { a: 2, b: 40 })
    expect(sum.content[0].text).toBe(expectedWrapped('42', 'echo', wrappedId(sum.content[0].text)))
    expect(processesTagged(ECHO_SERVER)).toEqual([pid])
    expect(lines.filter((l) => l.includes('not declared'))).toEqual([])

    await first.disposers[0]()
    expect(processesTagged(ECHO_SERVER)).toEqual([pid])
    await second.disposers[0]()
    expect(await waitForDeath([pid], 10_000)).toEqual([])
    expect(lines).toContain("info [mcp-native] MCP server 'echo' stopped")
  }, 60_000)

  it('names the tools OpenClaw would drop (not declared) in one log line, and applies a config change at the next turn', async () => {
    const dir = pluginDir()
    const json = { mcp: { servers: { echo: echo() } } }
    const lines: string[] = []
    const api = fakeApi(dir, json, lines)
    pluginModule.register(api)
    expect(api.tools[0]({ agentId: 'main' })).toBeNull()
    await api.services[0].start()
    const undeclared = lines.filter((l) => l.includes('not declared'))
    expect(undeclared).toEqual([
      `warn [mcp-native] 6 MCP tool(s) not declared in ${path.join(dir, 'openclaw.plugin.json')} (contracts.tools), so OpenClaw will not offer them: ${ECHO_TOOLS.join(', ')}; run 'openclaw-mcp-native openclaw sync', then restart the gateway`,
    ])
    const [pid] = processesTagged(ECHO_SERVER)

    // The turn's runtime config has one more server: reconfigure() adds it, echo keeps its pid.
    const next = { mcp: { servers: { echo: echo(), more: echo('more') } } }
    expect(api.tools[0]({ agentId: 'main', getRuntimeConfig: () => next })).toBeNull()
    await waitUntil(() => lines.some((l) => l.startsWith('info [mcp-native] config changed:')), { what: 'the config change' })
    expect(lines).toContain('info [mcp-native] config changed: added more, removed none, restarted none, unchanged echo')
    const more = processesTagged('more')
    expect(more).toHaveLength(1)
    expect(processesTagged(ECHO_SERVER)).toEqual([pid, ...more].sort((a, b) => a - b))

    await api.services[0].stop()
    expect(await waitForDeath([pid, ...processesTagged('more')], 10_000)).toEqual([])
  }, 60_000)
})
