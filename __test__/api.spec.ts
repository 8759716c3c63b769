// Exported helpers: validateMcpConfig, secret:// URIs, loadMcpConfig, and how
// secrets reach (and never leave) a server started by McpManager.

import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  faultServer,
  native,
  RecordingLogger,
  statusOf,
  tempDir,
  toolByName,
  wrappedBody,
} from './helpers'

const { validateMcpConfig, parseSecretUri, resolveSecret, resolveSecrets, loadMcpConfig } = native

afterEach(cleanup)

/** Sets env vars for the duration of a test. */
function withEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  Object.assign(process.env, vars)
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}
let restoreEnv: (() => void) | undefined
afterEach(() => {
  restoreEnv?.()
  restoreEnv = undefined
})

describe('validateMcpConfig', () => {
  it('accepts a minimal stdio server and fills in the documented defaults', () => {
    const r = validateMcpConfig({ servers: { fs: { command: 'npx', args: ['-y', 'x'] } } })
    expect(r.success).toBe(true)
    if (!r.success) return
    expect(r.data.servers!.fs).toMatchObject({
      command: 'npx',
      args: ['-y', 'x'],
      enabled: true,
      lazy: false,
      transport: 'stdio',
      timeout: 30_000,
      toolTimeout: 60_000,
      restartOnCrash: true,
      maxRestarts: 5,
      resources: true,
      resourceFilter: [],
      resourceRefreshMs: 300_000,
    })
  })

  it('accepts an empty config and url-based transports', () => {
    expect(validateMcpConfig({}).success).toBe(true)
    expect(validateMcpConfig({ servers: {} }).success).toBe(true)
    const r = validateMcpConfig({ servers: { a: { transport: 'sse', url: 'http://127.0.0.1:1/sse' }, b: { transport: 'http', url: 'http://127.0.0.1:1/mcp' } } })
    expect(r.success).toBe(true)
    expect(validateMcpConfig({ servers: { a: { command: 'x', maxRestarts: 0 } } }).success).toBe(true)
  })

  it("reports a stdio server without command as \"servers.<name>: stdio transport requires 'command'\"", () => {
    expect(validateMcpConfig({ servers: { a: {} } })).toEqual({ success: false, error: "servers.a: stdio transport requires 'command'" })
    expect(validateMcpConfig({ servers: { a: { transport: 'stdio' } } })).toEqual({ success: false, error: "servers.a: stdio transport requires 'command'" })
  })

  it("reports a url transport without url as \"servers.<name>: <transport> transport requires 'url'\"", () => {
    expect(validateMcpConfig({ servers: { b: { transport: 'sse' } } })).toEqual({ success: false, error: "servers.b: sse transport requires 'url'" })
    expect(validateMcpConfig({ servers: { c: { transport: 'http', command: 'x' } } })).toEqual({ success: false, error: "servers.c: http transport requires 'url'" })
  })

  it('reports only the first server missing its command/url, and ignores disabled servers', () => {
    expect(validateMcpConfig({ servers: { a: {}, b: { transport: 'sse' } } })).toEqual({ success: false, error: "servers.a: stdio transport requires 'command'" })
    expect(validateMcpConfig({ servers: { off: { enabled: false }, b: { transport: 'sse' } } })).toEqual({ success: false, error: "servers.b: sse transport requires 'url'" })
    expect(validateMcpConfig({ servers: { off: { enabled: false } } }).success).toBe(true)
  })

  it('rejects schema violations as "<path>: <message>"', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ servers: { a: { command: 'x', bogus: 1 } } }, /^servers\.a\b.*bogus/],
      [{ servers: { a: { command: 'x' } }, extra: true }, /extra/],
      [{ servers: { a: { command: 'x', timeout: 0 } } }, /^servers\.a\.timeout: /],
      [{ servers: { a: { command: 'x', toolTimeout: -5 } } }, /^servers\.a\.toolTimeout: /],
      [{ servers: { a: { command: 'x', resourceRefreshMs: 0 } } }, /^servers\.a\.resourceRefreshMs: /],
      [{ servers: { a: { command: 'x', maxRestarts: -1 } } }, /^servers\.a\.maxRestarts: /],
      [{ servers: { a: { command: 'x', transport: 'carrier-pigeon' } } }, /^servers\.a\.transport: /],
      [{ servers: { a: { command: 42 } } }, /^servers\.a\.command: /],
      [{ servers: { a: { command: 'x', args: 'not-an-array' } } }, /^servers\.a\.args: /],
      [{ servers: { a: { command: 'x', env: { K: 1 } } } }, /^servers\.a\.env\.K: /],
    ]
    for (const [input, re] of cases) {
      const r = validateMcpConfig(input)
      expect(r.success, JSON.stringify(input)).toBe(false)
      if (!r.success) expect(r.error, JSON.stringify(input)).toMatch(re)
    }
  })

  it('joins several schema issues with "; "', () => {
    const r = validateMcpConfig({ servers: { a: { command: 'x', timeout: -1, maxRestarts: -1 } } })
    expect(r.success).toBe(false)
    if (!r.success) {
      const parts = r.error.split('; ')
      expect(parts).toHaveLength(2)
      expect(parts.some((p) => p.startsWith('servers.a.timeout: '))).toBe(true)
      expect(parts.some((p) => p.startsWith('servers.a.maxRestarts: '))).toBe(true)
    }
  })

  it('rejects non-object input without throwing', () => {
    for (const input of [null, 'x', 42, [], undefined]) {
      const r = validateMcpConfig(input)
      expect(r.success, String(input)).toBe(false)
    }
  })
  it('a cyclic or BigInt config is a clear error, never a crash; toJSON and undefined members behave as in JSON', () => {
    const cyclic: Record<string, unknown> = { servers: {} }
    cyclic.self = cyclic
    expect(() => validateMcpConfig(cyclic)).toThrow(/^expected a JSON-compatible value: TypeError: Converting circular structure to JSON/)
    expect(() => new native.McpManager(cyclic as never)).toThrow(/^expected a JSON-compatible value: TypeError: Converting circular/)
    expect(() => validateMcpConfig({ servers: { a: { command: 'x', timeout: 1n } } })).toThrow(/^expected a JSON-compatible value: TypeError: .*BigInt/)
    const r = validateMcpConfig({ servers: { a: { command: 'x', cwd: undefined, args: { toJSON: () => ['--flag'] } } } })
    expect(r.success).toBe(true)
    expect(r.success && r.data.servers.a.args).toEqual(['--flag'])
    expect(r.success && 'cwd' in r.data.servers.a).toBe(false)
  })
})

describe('parseSecretUri', () => {
  it('parses provider, path and the field after the LAST #', () => {
    expect(parseSecretUri('secret://env/API_KEY')).toEqual({ provider: 'env', path: 'API_KEY' })
    expect(parseSecretUri('secret://file/~/.secrets/app.env#TOKEN')).toEqual({ provider: 'file', path: '~/.secrets/app.env', field: 'TOKEN' })
    expect(parseSecretUri('secret://file//tmp/a#b.env#FIELD')).toEqual({ provider: 'file', path: '/tmp/a#b.env', field: 'FIELD' })
    expect(parseSecretUri('secret://gcp/my-secret#3')).toEqual({ provider: 'gcp', path: 'my-secret', field: '3' })
    expect(parseSecretUri('secret://aws/prod/db')).toEqual({ provider: 'aws', path: 'prod/db' })
    expect(parseSecretUri('secret://vault/secret/data/app#password')).toEqual({ provider: 'vault', path: 'secret/data/app', field: 'password' })
  })

  it('returns null for values that are not secret:// URIs', () => {
    for (const v of ['plain', '', 'env://X', 'SECRET://env/X', ' secret://env/X']) expect(parseSecretUri(v), v).toBeNull()
  })

  it('throws the contract messages for malformed URIs', () => {
    expect(() => parseSecretUri('secret://env')).toThrow('Invalid secret URI: secret://env (missing path)')
    expect(() => parseSecretUri('secret://nope/x')).toThrow("Unsupported secret provider 'nope' in URI: secret://nope/x")
  })
})

describe('resolveSecret / resolveSecrets', () => {
  it('passes plain values through', async () => {
    await expect(resolveSecret('plain value')).resolves.toBe('plain value')
    await expect(resolveSecret('')).resolves.toBe('')
  })

  it('secret://env/NAME reads the host environment; an empty value is accepted', async () => {
    restoreEnv = withEnv({ MCP_NATIVE_SECRET_A: 's3cr3t-a', MCP_NATIVE_SECRET_EMPTY: '' })
    await expect(resolveSecret('secret://env/MCP_NATIVE_SECRET_A')).resolves.toBe('s3cr3t-a')
    await expect(resolveSecret('secret://env/MCP_NATIVE_SECRET_EMPTY')).resolves.toBe('')
  })

  it('a missing env variable gives the contract error', async () => {
    delete process.env.MCP_NATIVE_SECRET_MISSING
    await expect(resolveSecret('secret://env/MCP_NATIVE_SECRET_MISSING')).rejects.toThrow(
      "Environment variable 'MCP_NATIVE_SECRET_MISSING' not set (from secret://env/MCP_NATIVE_SECRET_MISSING)",
    )
  })

  it('secret://file/PATH is the file content with trailing whitespace trimmed', async () => {
    const file = path.join(tempDir(), 'token.txt')
    fs.writeFileSync(file, '  token-value with inner space \n\n\t')
    await expect(resolveSecret(`secret://file/${file}`)).resolves.toBe('  token-value with inner space')
  })

  it('secret://file/PATH#FIELD reads .env lines: comments, quotes, last duplicate wins', async () => {
    const file = path.join(tempDir(), 'app.env')
    fs.writeFileSync(file, ['# a comment', 'A=first', 'B="double quoted"', "C='single quoted'", 'D=with=equals', '', 'A=last'].join('\n'))
    await expect(resolveSecret(`secret://file/${file}#A`)).resolves.toBe('last')
    await expect(resolveSecret(`secret://file/${file}#B`)).resolves.toBe('double quoted')
    await expect(resolveSecret(`secret://file/${file}#C`)).resolves.toBe('single quoted')
    await expect(resolveSecret(`secret://file/${file}#D`)).resolves.toBe('with=equals')
    await expect(resolveSecret(`secret://file/${file}#Z`)).rejects.toThrow(`Field 'Z' not found in ${file}`)
  })

  it('a missing file gives "File not found: <path>"', async () => {
    const file = path.join(tempDir(), 'nope.env')
    await expect(resolveSecret(`secret://file/${file}`)).rejects.toThrow(`File not found: ${file}`)
  })

  it('~ in a file path is the home directory', async () => {
    const home = tempDir()
    fs.writeFileSync(path.join(home, 'tilde.env'), 'K=from-home\n')
    restoreEnv = withEnv({ HOME: home })
    await expect(resolveSecret('secret://file/~/tilde.env#K')).resolves.toBe('from-home')
  })

  it('malformed URIs reject with the parse errors', async () => {
    await expect(resolveSecret('secret://env')).rejects.toThrow('Invalid secret URI: secret://env (missing path)')
    await expect(resolveSecret('secret://nope/x')).rejects.toThrow("Unsupported secret provider 'nope' in URI: secret://nope/x")
  })

  it('resolveSecrets resolves every value; one failure rejects the whole call', async () => {
    restoreEnv = withEnv({ MCP_NATIVE_SECRET_A: 'aaa' })
    const file = path.join(tempDir(), 'x.env')
    fs.writeFileSync(file, 'F=fff\n')
    await expect(resolveSecrets({ A: 'secret://env/MCP_NATIVE_SECRET_A', F: `secret://file/${file}#F`, P: 'plain' })).resolves.toEqual({
      A: 'aaa',
      F: 'fff',
      P: 'plain',
    })
    await expect(resolveSecrets({})).resolves.toEqual({})
    delete process.env.MCP_NATIVE_SECRET_GONE
    await expect(resolveSecrets({ A: 'secret://env/MCP_NATIVE_SECRET_A', G: 'secret://env/MCP_NATIVE_SECRET_GONE' })).rejects.toThrow(
      "Environment variable 'MCP_NATIVE_SECRET_GONE' not set (from secret://env/MCP_NATIVE_SECRET_GONE)",
    )
  })
})

describe('secrets in server env', () => {
  it('an unresolvable secret keeps that server from starting (disconnected); the log names the reference, never a value', async () => {
    restoreEnv = withEnv({ MCP_NATIVE_SECRET_OK: 'hunter2-resolvable-value' })
    delete process.env.MCP_NATIVE_SECRET_UNSET
    const pidFile = path.join(tempDir(), 'never.pid')
    const log = new RecordingLogger()
    const manager = createManager(
      {
        servers: {
          broken: faultServer(['--pidfile', pidFile], { env: { OK: 'secret://env/MCP_NATIVE_SECRET_OK', BAD: 'secret://env/MCP_NATIVE_SECRET_UNSET' } }),
          fine: faultServer(),
        },
      },
      { logger: log.logger },
    )
    await manager.start()
    expect(statusOf(manager, 'broken')).toEqual({ name: 'broken', status: 'disconnected', toolCount: 0 })
    expect(statusOf(manager, 'fine')?.status).toBe('ready')
    expect(fs.existsSync(pidFile)).toBe(false) // never spawned
    const e = await log.waitFor('error', /^MCP server 'broken' failed to start: /)
    expect(e.msg).toContain('secret://env/MCP_NATIVE_SECRET_UNSET')
    expect(log.containing('hunter2-resolvable-value')).toEqual([])
    expect(manager.getAgentTools().some((t) => t.name.startsWith('mcp_broken_'))).toBe(false)
  })

  it('resolved secrets reach the server env and appear in no log line', async () => {
    const envSecret = 'env-secret-value-9f8e7d'
    const fileSecret = 'file-secret-value-1a2b3c'
    restoreEnv = withEnv({ MCP_NATIVE_SECRET_HOST: envSecret })
    const file = path.join(tempDir(), 'creds.env')
    fs.writeFileSync(file, `TOKEN="${fileSecret}"\n`)
    const log = new RecordingLogger()
    const manager = createManager(
      {
        servers: {
          s: faultServer(['--stderr-chatter'], {
            env: { API_TOKEN: 'secret://env/MCP_NATIVE_SECRET_HOST', FILE_TOKEN: `secret://file/${file}#TOKEN`, PLAIN: 'plain-value' },
          }),
        },
      },
      { logger: log.logger },
    )
    await manager.start()
    expect(statusOf(manager, 's')?.status).toBe('ready')
    // The server got the values: compare digests, so that a result redaction policy
    // (secret values scrubbed from tool output) cannot hide a missing secret.
    const hash = toolByName(manager, 'mcp_s_env_hash')
    const sha = (v: string) => createHash('sha256').update(v).digest('hex')
    expect(wrappedBody(await hash.execute('c1', { name: 'API_TOKEN' }))).toBe(sha(envSecret))
    expect(wrappedBody(await hash.execute('c2', { name: 'FILE_TOKEN' }))).toBe(sha(fileSecret))
    expect(wrappedBody(await hash.execute('c3', { name: 'PLAIN' }))).toBe(sha('plain-value'))
    await log.waitFor('debug', /^MCP tool call s\/env_hash took \d+ ms$/, { count: 3 })
    await manager.shutdown()
    await log.waitFor('info', "MCP server 's' stopped")
    expect(log.containing(envSecret)).toEqual([])
    expect(log.containing(fileSecret)).toEqual([])
  })

  it('a plaintext value under a credential-looking key is warned about by key, never by value', async () => {
    const log = new RecordingLogger()
    const manager = createManager({ servers: { s: faultServer([], { env: { API_KEY: 'plaintext-credential-xyz' } }) } }, { logger: log.logger })
    await manager.start()
    await log.waitFor('warn', (m) => m.includes('API_KEY'))
    expect(log.containing('plaintext-credential-xyz')).toEqual([])
  })
})

describe('loadMcpConfig', () => {
  const openclaw = {
    agents: {
      defaults: {
        mcp: {
          servers: {
            shared: { command: 'shared-cmd' },
            over: { command: 'default-cmd', args: ['--from-defaults'], env: { A: '1' } },
          },
        },
      },
      list: [
        { id: 'worker', mcp: { servers: { over: { command: 'agent-cmd' }, own: { command: 'own-cmd' } } } },
        { id: 'plain' },
      ],
    },
  }

  it('accepts a plain McpConfig', () => {
    const cfg = loadMcpConfig({ servers: { a: { command: 'node', args: ['x.js'] } } })
    expect(Object.keys(cfg.servers ?? {})).toEqual(['a'])
    expect(cfg.servers!.a).toMatchObject({ command: 'node', args: ['x.js'] })
  })

  it('reads agents.defaults.mcp from an openclaw.json', () => {
    const cfg = loadMcpConfig(openclaw)
    expect(Object.keys(cfg.servers ?? {})).toEqual(['shared', 'over'])
    expect(cfg.servers!.over).toMatchObject({ command: 'default-cmd', args: ['--from-defaults'] })
  })

  it('merges an agent over the defaults; an agent entry replaces the default entry wholesale', () => {
    const cfg = loadMcpConfig(openclaw, { agent: 'worker' })
    expect(Object.keys(cfg.servers ?? {})).toEqual(['shared', 'over', 'own'])
    expect(cfg.servers!.over.command).toBe('agent-cmd')
    // wholesale: nothing of the default entry survives (whether or not defaults are filled in)
    expect(cfg.servers!.over.args ?? []).toEqual([])
    expect(cfg.servers!.over.env ?? {}).toEqual({})
    expect(cfg.servers!.own.command).toBe('own-cmd')
  })

  it('an agent without its own mcp gets the defaults', () => {
    expect(Object.keys(loadMcpConfig(openclaw, { agent: 'plain' }).servers ?? {})).toEqual(['shared', 'over'])
  })

  it('an unknown agent is a clear error naming it', () => {
    expect(() => loadMcpConfig(openclaw, { agent: 'ghost' })).toThrow(/ghost/)
  })

  it('an invalid config is a clear error carrying the validation message', () => {
    expect(() => loadMcpConfig({ servers: { a: {} } })).toThrow("servers.a: stdio transport requires 'command'")
    expect(() => loadMcpConfig('not a config')).toThrow()
  })
})
