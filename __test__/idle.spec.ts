// Idle servers cost nothing (issue 14, part 2): `idleTimeoutMs` stops a server nobody calls
// (its tools stay offered; the next call starts it again), and `lazy` starts no process at
// `start()`, its tools coming from a cache under `cacheDir` or from one discovery run. Real
// fault-server processes, counted under /proc by a tag in their command line.

import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  faultServer,
  processesTagged,
  readPidFile,
  RecordingLogger,
  tempDir,
  toolByName,
  trackPids,
  waitUntil,
  wrappedBody,
  type ManagerConfig,
  type ServerConfig,
} from './helpers'

afterEach(cleanup)

const tagged = (tag: string) => {
  const pids = processesTagged(tag)
  trackPids(...pids)
  return pids
}

describe('idleTimeoutMs', () => {
  it('20 servers idle out: no process left, tools still listed, and a call starts its server again', async () => {
    const tag = `idle-${process.pid}-${Date.now()}`
    const keys = Array.from({ length: 20 }, (_, i) => `s${i}`)
    const log = new RecordingLogger()
    const manager = createManager(
      { servers: Object.fromEntries(keys.map((k) => [k, faultServer(['--tag', tag], { idleTimeoutMs: 500 })])) } as ManagerConfig,
      { logger: log.logger },
    )
    await manager.start()
    // All 20 started (on a loaded machine the first may already have idled out by now).
    await waitUntil(() => log.all('info').filter((e) => /MCP server 's\d+' connected/.test(e.msg)).length === 20, {
      what: 'twenty "connected" lines (log lines reach JS on their own queue)',
    })
    const listed = manager.getAgentTools().length
    // The servers stop on their own; a bounded wait for the processes to be gone (no signal for
    // another process's death).
    await waitUntil(() => tagged(tag).length === 0, { timeout: 20_000, what: () => `${tagged(tag).length} servers still running` })
    // A supervisor records the stop just after its process is gone.
    await waitUntil(() => manager.getStatus().every((s) => s.status === 'ready' && s.running === false), {
      what: () => JSON.stringify(manager.getStatus().map((s) => [s.name, s.status, s.running])),
    })
    expect(manager.getAgentTools()).toHaveLength(listed)
    // `running` is not enumerable: an entry keeps the contract's shape.
    expect(Object.keys(manager.getStatus()[0])).toEqual(['name', 'status', 'toolCount', 'transport'])
    await waitUntil(() => log.all('info').filter((e) => e.msg.includes('stopped while idle')).length === 20, {
      what: 'twenty "stopped while idle" lines',
    })

    // Concurrent calls to an idle server share one start: one process answers both. (Counted
    // before any other server is woken: a server woken earlier may idle out again while this
    // one starts, 500 ms being less than a start on a loaded machine.)
    const both = await Promise.all([
      toolByName(manager, 'mcp_s3_echo').execute('c2', { text: 'a' }),
      toolByName(manager, 'mcp_s3_echo').execute('c3', { text: 'b' }),
    ])
    expect(both.map(wrappedBody)).toEqual(['a', 'b'])
    expect(tagged(tag)).toHaveLength(1)
    const r = await toolByName(manager, 'mcp_s7_echo').execute('c1', { text: 'woken' })
    expect(wrappedBody(r)).toBe('woken')
    const s7 = manager.getStatus().find((s) => s.name === 's7')!
    expect([s7.status, s7.running]).toEqual(['ready', true])
    // The revision the fault server (TypeScript SDK 1.x) negotiated.
    expect(s7.protocolVersion).toBe('2025-11-25')
  })

  it('a call in flight is never idled out', async () => {
    const dir = tempDir()
    const pidfile = path.join(dir, 'pid')
    const manager = createManager({ servers: { f: faultServer(['--pidfile', pidfile], { idleTimeoutMs: 300 }) } } as ManagerConfig)
    await manager.start()
    const [pid] = await readPidFile(pidfile)
    const r = await toolByName(manager, 'mcp_f_slow').execute('c', { ms: 1500 })
    expect(wrappedBody(r)).toBe('slept 1500 ms')
    expect(fs.readFileSync(pidfile, 'utf8').trim()).toBe(String(pid))
  })

  it('readResource and the resource tools start an idle server too', async () => {
    const tag = `idle-res-${process.pid}-${Date.now()}`
    const manager = createManager({
      servers: { f: faultServer(['--resources', '--tag', tag], { idleTimeoutMs: 300, resourceTools: true }) },
    } as ManagerConfig)
    await manager.start()
    await waitUntil(() => tagged(tag).length === 0 && manager.getStatus()[0].running === false, { what: 'the server to idle out' })
    expect(await manager.readResource('f', 'fault://text/alpha')).toContain('alpha')
    await waitUntil(() => tagged(tag).length === 0 && manager.getStatus()[0].running === false, { what: 'the server to idle out again' })
    const read = await toolByName(manager, 'mcp_f_resources_read').execute('r', { uri: 'fault://text/alpha' })
    expect(wrappedBody(read)).toContain('alpha')
  })

  it('rejects bad values, naming them', () => {
    expect(() => createManager({ servers: { f: faultServer([], { idleTimeoutMs: -5 } as never) } } as ManagerConfig)).toThrow(/servers\.f\.idleTimeoutMs: /)
    expect(() => createManager({ servers: { f: faultServer([], { cacheDir: 42 } as never) } } as ManagerConfig)).toThrow(/servers\.f\.cacheDir: Expected string, received number/)
    expect(() => createManager({ servers: {} }, { cacheDir: '' } as never)).toThrow("Invalid cacheDir '': expected the path of a directory")
  })
})

describe('lazy', () => {
  /** How many `initialize` requests the server(s) writing `requests` have had. */
  const inits = (requests: string) => (fs.existsSync(requests) ? fs.readFileSync(requests, 'utf8').split('\n').filter((l) => l.startsWith('initialize ')).length : 0)

  it('without a cache: one discovery run at start, then no process until a call', async () => {
    const tag = `lazy-${process.pid}-${Date.now()}`
    const manager = createManager({ servers: { f: faultServer(['--tag', tag], { lazy: true }) } } as ManagerConfig)
    await manager.start()
    expect(manager.getAgentTools().some((t) => t.name === 'mcp_f_echo')).toBe(true)
    await waitUntil(() => tagged(tag).length === 0 && manager.getStatus()[0].running === false, { what: 'the discovery run to end' })
    expect(manager.getStatus()[0].status).toBe('ready')
    expect(wrappedBody(await toolByName(manager, 'mcp_f_echo').execute('c', { text: 'hi' }))).toBe('hi')
    expect(tagged(tag)).toHaveLength(1)
  })

  it('with cacheDir: the next manager starts no process; a changed definition or a corrupt cache is not used; no secret in it', async () => {
    const dir = tempDir()
    const cacheDir = path.join(dir, 'cache')
    const requests = path.join(dir, 'requests.log')
    process.env.MCPN_IDLE_SECRET = 'idle-secret-value-4711'
    const server = (extra: string[] = []): ServerConfig =>
      faultServer(['--request-log', requests, ...extra], { lazy: true, env: { API_KEY: 'secret://env/MCPN_IDLE_SECRET' } })
    const log = new RecordingLogger()
    const make = (s: ServerConfig) => createManager({ servers: { f: s } } as ManagerConfig, { logger: log.logger, cacheDir })

    const first = make(server())
    await first.start()
    const names = first.getAgentTools().map((t) => t.name)
    await first.shutdown()
    expect(inits(requests)).toBe(1)
    const files = fs.readdirSync(cacheDir)
    expect(files).toHaveLength(1)
    const file = path.join(cacheDir, files[0])
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.readFileSync(file, 'utf8')).not.toContain('idle-secret-value-4711')

    const second = make(server())
    await second.start()
    expect(second.getAgentTools().map((t) => t.name)).toEqual(names)
    expect(second.getStatus()[0]).toMatchObject({ status: 'ready', running: false })
    expect(inits(requests)).toBe(1)
    // The first call starts it.
    expect(wrappedBody(await toolByName(second, 'mcp_f_echo').execute('c', { text: 'from cache' }))).toBe('from cache')
    expect(inits(requests)).toBe(2)
    await second.shutdown()

    // Another definition (an extra argument) has no cache yet: a discovery run.
    const third = make(server(['--tools', '1']))
    await third.start()
    expect(inits(requests)).toBe(3)
    expect(third.getAgentTools().some((t) => t.name === 'mcp_f_t0')).toBe(true)
    await third.shutdown()

    fs.writeFileSync(file, '{ not json')
    const fourth = make(server())
    await fourth.start()
    expect(inits(requests)).toBe(4)
    expect(log.all('warn').some((e) => e.msg.includes('tool cache') && e.msg.includes('ignored'))).toBe(true)
  })
})
