// Hot reload (`manager.reconfigure`) and views (`manager.view`), issue 14 parts 3 and 4, against
// real fault-server processes counted under /proc.

import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  faultServer,
  isAlive,
  native,
  processesTagged,
  readPidFile,
  tempDir,
  trackPids,
  waitForDeath,
  waitUntil,
  type ManagerConfig,
  type ServerConfig,
} from './helpers'

afterEach(cleanup)

const names = (tools: Array<{ name: string }>) => tools.map((t) => t.name)

describe('reconfigure', () => {
  it('restarts only the changed server: the other four keep their pids and an in-flight call completes', async () => {
    const dir = tempDir()
    const pidfile = (k: string) => path.join(dir, `${k}.pid`)
    const server = (k: string, extra: string[] = []): ServerConfig =>
      faultServer(['--pidfile', pidfile(k), ...extra])
    const keys = ['s1', 's2', 's3', 's4', 's5']
    const config = { servers: Object.fromEntries(keys.map((k) => [k, server(k)])) } as ManagerConfig
    const manager = createManager(config)
    const changes: unknown[] = []
    manager.on('toolsChanged', (p: unknown) => changes.push(p))
    await manager.start()
    const before: Record<string, number> = {}
    for (const k of keys) before[k] = (await readPidFile(pidfile(k)))[0]
    const namesBefore = names(manager.getAgentTools())
    await waitUntil(() => changes.length >= 5, { what: 'toolsChanged for the five servers' })
    changes.length = 0

    // A call on s2 that is still running when the reload is done.
    const slow = manager.getAgentTools().find((t) => t.name === 'mcp_s2_slow')!
    let settled = false
    const inFlight = slow.execute('c1', { ms: 3000 }).finally(() => {
      settled = true
    })

    const changed = { servers: { ...config.servers, s3: server('s3', ['--tag', 'changed']) } } as ManagerConfig
    const report = await manager.reconfigure(changed)
    expect(report).toEqual({ added: [], removed: [], restarted: ['s3'], unchanged: ['s1', 's2', 's4', 's5'] })
    expect(settled).toBe(false)

    for (const k of ['s1', 's2', 's4', 's5']) {
      expect(fs.readFileSync(pidfile(k), 'utf8').trim()).toBe(String(before[k]))
      expect(isAlive(before[k])).toBe(true)
    }
    // s3 is a new process; the old one is gone.
    const s3 = await waitUntil(() => {
      const pid = Number(fs.readFileSync(pidfile('s3'), 'utf8').trim())
      return pid !== before.s3 && pid > 0 ? pid : undefined
    }, { what: 's3 to be restarted' })
    trackPids(s3)
    expect(isAlive(s3)).toBe(true)
    expect(await waitForDeath([before.s3])).toEqual([])
    expect(manager.getStatus().map((s) => [s.name, s.status])).toEqual(keys.map((k) => [k, 'ready']))

    const result = await inFlight
    expect(result.details.externalContent).toMatchObject({ server: 's2', tool: 'slow' })
    expect(result.content[0].text).toContain('slept 3000 ms')
    // Tool names are the same (s3's came back under the same names).
    expect(names(manager.getAgentTools())).toEqual(namesBefore)
    // s3's tools did not change, so no toolsChanged for it; the event of a server added after
    // it is the signal that everything before has been delivered.
    await manager.reconfigure({ servers: { ...changed.servers, s6: server('s6') } } as ManagerConfig)
    trackPids(...(await readPidFile(pidfile('s6'))))
    await waitUntil(() => changes.some((c) => (c as { server: string }).server === 's6'), { what: 'toolsChanged for s6' })
    expect(changes.map((c) => (c as { server: string }).server)).toEqual(['s6'])
  })

  it('adds and removes servers, fires toolsChanged for them, and an invalid config rejects and changes nothing', async () => {
    const dir = tempDir()
    const pidfile = (k: string) => path.join(dir, `${k}.pid`)
    const manager = createManager({
      servers: { a: faultServer(['--pidfile', pidfile('a')]), b: faultServer(['--pidfile', pidfile('b')]) },
    } as ManagerConfig)
    const changes: Array<{ server: string; added: string[]; removed: string[] }> = []
    manager.on('toolsChanged', (p: never) => changes.push(p))
    await manager.start()
    const [a] = await readPidFile(pidfile('a'))
    const [b] = await readPidFile(pidfile('b'))
    await waitUntil(() => changes.length >= 2, { what: 'the first toolsChanged events' })
    changes.length = 0
    const oldB = manager.getAgentTools().find((t) => t.name === 'mcp_b_echo')!

    await expect(manager.reconfigure({ servers: { a: { transport: 'carrier-pigeon' } } } as never)).rejects.toThrow(
      /Unknown transport 'carrier-pigeon' for server 'a'/,
    )
    await expect(manager.reconfigure('nope' as never)).rejects.toThrow(/Invalid MCP config/)
    expect(manager.getStatus().map((s) => s.name)).toEqual(['a', 'b'])
    expect(isAlive(a) && isAlive(b)).toBe(true)

    const report = await manager.reconfigure({
      servers: { a: faultServer(['--pidfile', pidfile('a')]), c: faultServer(['--pidfile', pidfile('c')]) },
    } as ManagerConfig)
    expect(report).toEqual({ added: ['c'], removed: ['b'], restarted: [], unchanged: ['a'] })
    trackPids(...(await readPidFile(pidfile('c'))))
    expect(await waitForDeath([b])).toEqual([])
    expect(isAlive(a)).toBe(true)
    expect(manager.getStatus().map((s) => [s.name, s.status])).toEqual([
      ['a', 'ready'],
      ['c', 'ready'],
    ])
    const tools = names(manager.getAgentTools())
    expect(tools.some((n) => n.startsWith('mcp_b_'))).toBe(false)
    expect(tools).toContain('mcp_c_echo')
    await waitUntil(() => changes.length >= 2, { what: 'toolsChanged for b and c' })
    const byServer = Object.fromEntries(changes.map((c) => [c.server, c]))
    expect(byServer.b.removed).toContain('mcp_b_echo')
    expect(byServer.b.added).toEqual([])
    expect(byServer.c.added).toContain('mcp_c_echo')
    // A tool object of the removed server answers that it is gone, never reaches another.
    const stale = await oldB.execute('c2', { text: 'hi' })
    expect(stale.content[0].text).toMatch(/^MCP tool error \(b\/echo\): /)

    await manager.shutdown()
    await expect(manager.reconfigure({ servers: {} })).rejects.toThrow(/shut down/)
  })
})

describe('views', () => {
  it('12 views over 10 servers run 10 processes; each view lists only its own tools', async () => {
    const tag = `views-${process.pid}-${Date.now()}`
    const keys = Array.from({ length: 10 }, (_, i) => `s${i}`)
    const manager = createManager({
      servers: Object.fromEntries(keys.map((k) => [k, faultServer(['--tag', tag])])),
    } as ManagerConfig)
    await manager.start()
    const views = Array.from({ length: 12 }, (_, i) => ({
      servers: [keys[i % 10], keys[(i + 3) % 10]],
      view: manager.view({ servers: [keys[i % 10], keys[(i + 3) % 10]], deny: i === 0 ? ['*_add'] : [] }),
    }))
    const running = processesTagged(tag)
    trackPids(...running)
    expect(running).toHaveLength(10)
    for (const [i, { servers, view }] of views.entries()) {
      const listed = names(view.getAgentTools())
      const servedBy = new Set(listed.map((n) => n.split('_')[1]))
      expect([...servedBy].sort()).toEqual([...servers].sort())
      expect(listed).toContain(`mcp_${servers[0]}_echo`)
      expect(listed.includes(`mcp_${servers[0]}_add`)).toBe(i !== 0)
    }
    // Calls through a view reach the shared server.
    const echo = views[5].view.getAgentTools().find((t) => t.name === 'mcp_s5_echo')!
    const result = await echo.execute('v1', { text: 'through a view' })
    expect(result.content[0].text).toContain('through a view')
    expect(processesTagged(tag)).toHaveLength(10)
  })

  it('names tools over its own servers, in its own scheme; bad specs throw naming the problem', async () => {
    const manager = createManager({
      servers: { alpha: faultServer(), beta: faultServer() },
    } as ManagerConfig, { allow: ['*echo*', '*add*'] })
    await manager.start()
    const view = manager.view({ servers: ['beta'], toolNames: 'openclaw' })
    // The manager's allow applies too (to its own names).
    expect(names(view.getAgentTools())).toEqual(['beta__echo', 'beta__add'])
    const all = manager.view()
    expect(names(all.getAgentTools())).toEqual(names(manager.getAgentTools()))

    expect(() => manager.view({ servers: ['gamma'] })).toThrow("Invalid view: no MCP server named 'gamma'")
    expect(() => manager.view({ servers: 'beta' } as never)).toThrow('Invalid view: Invalid servers: expected an array of strings')
    expect(() => manager.view({ toolNames: 'weird' } as never)).toThrow(/Invalid view: toolNames "weird"/)
    expect(() => manager.view({ bogus: 1 } as never)).toThrow(/Invalid view: unknown option 'bogus'/)
    expect(() => manager.view(42 as never)).toThrow(/Invalid view: expected an object/)

    await manager.shutdown()
    expect(view.getAgentTools()).toEqual([])
  })

  it('sharedManagerConfigForOpenclaw: one server per distinct definition, a view per agent', () => {
    const gh = { command: 'node', args: ['gh.js'] }
    const shared = native.sharedManagerConfigForOpenclaw({
      agents: {
        defaults: { mcp: { servers: { gh } } },
        list: [
          { id: 'a', mcp: { servers: { files: { command: 'node', args: ['fs.js', '/a'] } } } },
          { id: 'b', mcp: { servers: { files: { command: 'node', args: ['fs.js', '/b'] } } } },
          { id: 'c' },
        ],
      },
    })
    expect(Object.keys(shared.config.servers)).toEqual(['gh', 'files', 'files@b'])
    expect(shared.config.servers['files@b'].toolPrefix).toBe('files')
    expect(shared.config.servers.gh.toolPrefix).toBeUndefined()
    expect(shared.agents).toEqual([
      { agent: 'a', view: { servers: ['gh', 'files'] } },
      { agent: 'b', view: { servers: ['gh', 'files@b'] } },
      { agent: 'c', view: { servers: ['gh'] } },
    ])
  })
})
