// Process lifecycle: no server process, wrapper child or grandchild may outlive
// shutdown() or the host process, and the host must be able to exit by itself.
//
// Process death is polled (bounded): there is no signal for the death of a
// process that is not our child.

import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  exitWithin,
  FAULT_SERVER,
  faultServer,
  HOST_PROCESS,
  isAlive,
  NODE,
  readPidFile,
  RecordingLogger,
  ROOT,
  spawnNode,
  tempDir,
  timed,
  waitForDeath,
  type ManagerConfig,
  type ManagerOptions,
  type ServerConfig,
} from './helpers'

afterEach(cleanup)

/** Single-quote a string for sh. */
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

interface Probe { server: ServerConfig; pidFile: string; gcFile: string }

/** A fault server that records its pid and spawns a SIGTERM/SIGHUP-ignoring grandchild. */
function probe(dir: string, name: string, flags: Array<string | number> = [], extra: Partial<ServerConfig> = {}): Probe {
  const pidFile = path.join(dir, `${name}.pid`)
  const gcFile = path.join(dir, `${name}.gc`)
  return { server: faultServer(['--pidfile', pidFile, '--grandchild', gcFile, ...flags], extra), pidFile, gcFile }
}

/** Server pid and grandchild pid of a probe, once both files exist. */
async function probePids(p: Probe): Promise<number[]> {
  const [pid] = await readPidFile(p.pidFile)
  const [parent, gc] = await readPidFile(p.gcFile, 2)
  expect(parent).toBe(pid)
  expect(isAlive(pid)).toBe(true)
  expect(isAlive(gc)).toBe(true)
  return [pid, gc]
}

async function startManager(servers: Record<string, ServerConfig>, options: ManagerOptions = {}) {
  const log = new RecordingLogger()
  const manager = createManager({ servers } as ManagerConfig, { logger: log.logger, ...options })
  await manager.start()
  for (const s of manager.getStatus()) expect(s, log.dump()).toMatchObject({ status: 'ready' })
  return { manager, log }
}

describe('shutdown() leaves no process behind', () => {
  it('server and grandchild (default grace periods)', async () => {
    const dir = tempDir()
    const p = probe(dir, 'a')
    const { manager } = await startManager({ a: p.server })
    const pids = await probePids(p)
    const { ms } = await timed(manager.shutdown())
    expect(ms).toBeLessThan(5_000)
    expect(await waitForDeath(pids, 1_000)).toEqual([])
  })

  it('a server ignoring SIGTERM and stdin EOF is killed within 2 x grace + 1 s (shutdownGraceMs 300)', async () => {
    const dir = tempDir()
    const p = probe(dir, 'stubborn', ['--ignore-sigterm', '--ignore-stdin-close'])
    const q = probe(dir, 'polite')
    const { manager } = await startManager({ stubborn: p.server, polite: q.server }, { shutdownGraceMs: 300 })
    const pids = [...(await probePids(p)), ...(await probePids(q))]
    const { ms } = await timed(manager.shutdown())
    expect(ms).toBeLessThan(300 * 2 + 1_000)
    expect(await waitForDeath(pids, 1_000)).toEqual([])
    expect(manager.getStatus().map((s) => s.status)).toEqual(['closed', 'closed'])
  })

  it('a server ignoring SIGTERM and stdin EOF is killed within 2 x 2000 + 1000 ms (default grace)', async () => {
    const dir = tempDir()
    const p = probe(dir, 'stubborn', ['--ignore-sigterm', '--ignore-stdin-close'])
    const { manager } = await startManager({ stubborn: p.server })
    const pids = await probePids(p)
    const { ms } = await timed(manager.shutdown())
    expect(ms).toBeLessThan(2_000 * 2 + 1_000)
    expect(await waitForDeath(pids, 1_000)).toEqual([])
  })

  it("servers started as sh -c 'exec node fault-server.mjs …'", async () => {
    const dir = tempDir()
    const pidFile = path.join(dir, 'exec.pid')
    const gcFile = path.join(dir, 'exec.gc')
    const script = `exec ${sq(NODE)} ${sq(FAULT_SERVER)} --pidfile ${sq(pidFile)} --grandchild ${sq(gcFile)}`
    const { manager } = await startManager({ viaexec: { command: 'sh', args: ['-c', script] } })
    const pids = await probePids({ server: {}, pidFile, gcFile })
    await manager.shutdown()
    expect(await waitForDeath(pids, 1_000)).toEqual([])
  })

  for (const stubborn of [false, true]) {
    it(`servers behind a sh -c wrapper whose child is the server${stubborn ? ' (server ignores SIGTERM and stdin EOF)' : ''}`, async () => {
      const dir = tempDir()
      const shellPidFile = path.join(dir, 'shell.pid')
      const pidFile = path.join(dir, 'wrapped.pid')
      const gcFile = path.join(dir, 'wrapped.gc')
      const flags = stubborn ? ' --ignore-sigterm --ignore-stdin-close' : ''
      // The trailing `exit $?` keeps the shell from exec'ing the last command.
      const script = `echo $$ > ${sq(shellPidFile)}; ${sq(NODE)} ${sq(FAULT_SERVER)} --pidfile ${sq(pidFile)} --grandchild ${sq(gcFile)}${flags}; exit $?`
      const { manager } = await startManager({ wrapped: { command: 'sh', args: ['-c', script] } }, { shutdownGraceMs: 300 })
      const [shellPid] = await readPidFile(shellPidFile)
      const pids = await probePids({ server: {}, pidFile, gcFile })
      expect(pids[0]).not.toBe(shellPid) // the wrapper really is a separate parent
      expect(isAlive(shellPid)).toBe(true)
      const { ms } = await timed(manager.shutdown())
      expect(ms).toBeLessThan(300 * 2 + 1_000)
      expect(await waitForDeath([shellPid, ...pids], 1_000)).toEqual([])
    })
  }
})

describe('killing the host process kills its servers', () => {
  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`${signal} of the host: every server and grandchild dies within 5 s`, async () => {
      const dir = tempDir()
      const a = probe(dir, 'a')
      const b = probe(dir, 'b', ['--ignore-sigterm', '--ignore-stdin-close'])
      const config = { servers: { a: a.server, b: b.server } }
      const host = spawnNode([HOST_PROCESS, JSON.stringify(config)])
      const line = await host.waitForLine((l) => l.startsWith('{'), 20_000)
      const ready = JSON.parse(line) as { ready: boolean; status: Array<{ name: string; status: string }> }
      expect(ready.ready).toBe(true)
      expect(ready.status.map((s) => [s.name, s.status])).toEqual([['a', 'ready'], ['b', 'ready']])
      const pids = [...(await probePids(a)), ...(await probePids(b))]

      host.child.kill(signal)
      // The host must actually go away (an addon signal handler must not keep it alive).
      const exit = await exitWithin(host, 5_000)
      if (signal === 'SIGKILL') expect(exit.signal).toBe('SIGKILL')
      const survivors = await waitForDeath(pids, 5_000)
      expect(survivors, `survivors: ${survivors.join(', ')}; host stderr:\n${host.stderr()}`).toEqual([])
    })
  }
})

describe('the host can exit naturally after shutdown()', () => {
  // A child Node process that uses the manager and then does nothing else: the
  // addon must not keep the event loop alive (threadsafe functions, timers, pipes).
  const scripts: Record<string, string> = {
    'start, call, shutdown (with a logger)': `
      const { McpManager } = require(process.argv[1])
      const [node, server] = process.argv.slice(2)
      ;(async () => {
        const lines = []
        const log = (m) => lines.push(m)
        const m = new McpManager({ servers: { s: { command: node, args: [server, '--stderr-chatter'] } } },
          { logger: { debug: log, info: log, warn: log, error: log } })
        await m.start()
        const echo = m.getAgentTools().find((t) => t.name === 'mcp_s_echo')
        const r = await echo.execute('c', { text: 'bye' })
        if (!r.content[0].text.includes('bye')) throw new Error('bad result')
        await m.shutdown()
        console.log('done ' + m.getStatus().map((s) => s.status).join(','))
      })().catch((e) => { console.error(e); process.exit(1) })`,
    'slow calls alone keep the host alive until they settle, and then let it go': `
      const { McpManager } = require(process.argv[1])
      const [node, server] = process.argv.slice(2)
      ;(async () => {
        const m = new McpManager({ servers: { s: { command: node, args: [server] } } })
        await m.start()
        const slow = m.getAgentTools().find((t) => t.name === 'mcp_s_slow')
        // nothing but the pending calls holds the event loop here
        const [a, b] = await Promise.all([slow.execute('a', { ms: 400 }), slow.execute('b', { ms: 600 })])
        if (!a.content[0].text.includes('slept 400 ms') || !b.content[0].text.includes('slept 600 ms')) throw new Error('bad result')
        const c = await slow.execute('c', { ms: 300 })
        if (!c.content[0].text.includes('slept 300 ms')) throw new Error('bad result')
        await m.shutdown()
        console.log('done ' + m.getStatus().map((s) => s.status).join(','))
      })().catch((e) => { console.error(e); process.exit(1) })`,
    'a call with signal and onUpdate in flight at shutdown': `
      const { McpManager } = require(process.argv[1])
      const [node, server] = process.argv.slice(2)
      ;(async () => {
        const m = new McpManager({ servers: { s: { command: node, args: [server] } } }, { logger: { info() {}, warn() {}, error() {}, debug() {} } })
        await m.start()
        const slow = m.getAgentTools().find((t) => t.name === 'mcp_s_slow')
        const ac = new AbortController()
        const pending = slow.execute('c', { ms: 60000 }, ac.signal, () => {})
        await new Promise((r) => setTimeout(r, 200))
        await m.shutdown()
        await pending
        console.log('done ' + m.getStatus().map((s) => s.status).join(','))
      })().catch((e) => { console.error(e); process.exit(1) })`,
    'a server that failed to start (restart pending) and shutdown': `
      const { McpManager } = require(process.argv[1])
      const [node, server] = process.argv.slice(2)
      ;(async () => {
        const m = new McpManager({ servers: { s: { command: node, args: [server, '--exit-at-start'] } } }, { logger: { error() {} } })
        await m.start()
        await m.shutdown()
        console.log('done ' + m.getStatus().map((s) => s.status).join(','))
      })().catch((e) => { console.error(e); process.exit(1) })`,
  }

  for (const [name, code] of Object.entries(scripts)) {
    it(name, async () => {
      const child = spawnNode(['-e', code, path.join(ROOT, 'index.js'), NODE, FAULT_SERVER])
      await child.waitForLine((l) => l.startsWith('done'), 15_000)
      // Nothing is left to do: the process must exit by itself, promptly.
      const exit = await exitWithin(child, 3_000)
      expect(exit, `stdout:\n${child.stdout()}\nstderr:\n${child.stderr()}`).toEqual({ code: 0, signal: null })
      expect(child.stdout().trim()).toBe('done closed')
    })
  }
})
