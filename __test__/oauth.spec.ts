// OAuth for remote servers (issue 16) against a real authorization server on 127.0.0.1:
// oidc-provider (npm, certified OpenID provider) with auto-approving interactions, in front of
// an MCP server on the TypeScript SDK that checks the JWT access tokens it issues and echoes its
// Authorization header, optionally DPoP-only with nonces (__test__/fixtures/oauth-stack.mjs).
// The conformance runner's own authorization servers are the other peer: scripts/conformance.sh
// runs its 33 auth scenarios.

import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  CLI,
  createManager,
  NODE,
  RecordingLogger,
  statusOf,
  tempDir,
  toolByName,
  waitUntil,
  type ManagerOptions,
  type ServerConfig,
} from './helpers'
// @ts-expect-error: a plain ES module fixture without types
import { approve, startOAuthStack } from './fixtures/oauth-stack.mjs'

interface Stack {
  mcpUrl: string
  issuer: string
  stats: Record<'tokenRequests' | 'refreshRequests' | 'authorizationRequests' | 'registrations' | 'mcpRequests' | 'unauthorized', number>
  lastAuthorization: string | undefined
  rejectTokens(on: boolean): void
  revokeCurrentToken(): void
  revokeRefreshTokens(): void
  close(): Promise<void>
}

const stacks: Stack[] = []
afterEach(async () => {
  await cleanup()
  for (const s of stacks.splice(0)) await s.close()
})

async function stack(options: Record<string, unknown> = {}): Promise<Stack> {
  const s = (await startOAuthStack(options)) as Stack
  stacks.push(s)
  return s
}

function server(s: Stack, extra: Partial<ServerConfig> = {}): ServerConfig {
  return { transport: 'http', url: s.mcpUrl, auth: 'oauth', timeout: 20_000, restartOnCrash: false, ...extra } as ServerConfig
}

/** An `authorize` that plays the user and records what it was given. */
function user(redirect?: string) {
  const calls: Array<{ url: string; server: string }> = []
  const authorize = async (url: string, ctx: { server: string }) => {
    calls.push({ url, server: ctx.server })
    return approve(url, redirect)
  }
  return { calls, authorize }
}

function bearer(s: Stack): string {
  const value = s.lastAuthorization ?? ''
  expect(value).toMatch(/^Bearer ey/)
  return value.slice('Bearer '.length)
}

async function startWith(s: Stack, options: ManagerOptions, extra: Partial<ServerConfig> = {}) {
  const log = new RecordingLogger()
  const manager = createManager({ servers: { docs: server(s, extra) } }, { logger: log.logger, ...options } as ManagerOptions)
  await manager.start()
  return { manager, log }
}

/** The start failure the log reports (log lines reach JS after `start()` may have resolved). */
function failure(log: RecordingLogger): Promise<string> {
  return waitUntil(() => log.messages('error').find((m) => m.includes('failed to start')), { what: () => log.dump() })
}

function text(result: { content: Array<{ text?: string }> }): string {
  return result.content.map((c) => c.text ?? '').join('')
}

describe('OAuth against oidc-provider', () => {
  it('signs in through authorize on the first start; the token reaches the server, never the model or a log', async () => {
    const s = await stack()
    const dir = tempDir()
    const u = user()
    const { manager, log } = await startWith(s, { oauth: { dir, authorize: u.authorize } })
    const status = statusOf(manager, 'docs')!
    expect(status.status, log.dump()).toBe('ready')
    expect((status as { auth?: string }).auth).toBe('authorized')
    // Enumerable keys stay the contract's.
    expect(Object.keys(status)).toEqual(['name', 'status', 'toolCount', 'transport'])
    expect(u.calls.map((c) => c.server)).toEqual(['docs'])
    const asked = new URL(u.calls[0].url)
    expect(asked.origin).toBe(s.issuer)
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256')
    expect(asked.searchParams.get('resource')).toBe(s.mcpUrl)
    expect(s.stats.registrations).toBe(1)

    const result = await toolByName(manager, 'mcp_docs_whoami').execute('1', {})
    const token = bearer(s)
    expect(text(result)).toContain('[REDACTED]')
    expect(text(result)).not.toContain(token)
    expect(JSON.stringify(result)).not.toContain(token)
    expect(text(await toolByName(manager, 'mcp_docs_add').execute('2', { a: 2, b: 40 }))).toContain('42')
    // Debug level included: the whole flow was logged, and no line shows the token.
    expect(log.entries.length).toBeGreaterThan(3)
    expect(log.entries.filter((e) => e.msg.includes(token))).toEqual([])

    // The file store: one file named by a hash (not the server's name), 0600 in a 0700 directory.
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'))
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/^[0-9a-f]{64}\.json$/)
    expect(fs.statSync(path.join(dir, files[0])).mode & 0o777).toBe(0o600)
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
  })

  it('reuses the stored tokens after a restart without asking the user again', async () => {
    const s = await stack()
    const dir = tempDir()
    const first = await startWith(s, { oauth: { dir, authorize: user().authorize } })
    expect(statusOf(first.manager, 'docs')!.status).toBe('ready')
    await first.manager.shutdown()
    const tokens = s.stats.tokenRequests
    const authorizations = s.stats.authorizationRequests

    const never = async () => {
      throw new Error('the user was asked again')
    }
    const second = await startWith(s, { oauth: { dir, authorize: never } })
    expect(statusOf(second.manager, 'docs')!.status, second.log.dump()).toBe('ready')
    expect(s.stats.authorizationRequests).toBe(authorizations)
    expect(s.stats.tokenRequests).toBe(tokens)
    expect(text(await toolByName(second.manager, 'mcp_docs_add').execute('1', { a: 1, b: 1 }))).toContain('2')
  })

  it('refreshes a token shortly before it expires', async () => {
    // A 2 s token is refreshed at half its life. The wait is the clock itself: there is no
    // event for "a second has passed".
    const s = await stack({ accessTokenTtl: 2 })
    const { manager, log } = await startWith(s, { oauth: { authorize: user().authorize } })
    expect(statusOf(manager, 'docs')!.status, log.dump()).toBe('ready')
    const before = bearer(s)
    expect(s.stats.refreshRequests).toBe(0)
    await new Promise((r) => setTimeout(r, 1300))
    expect(text(await toolByName(manager, 'mcp_docs_add').execute('1', { a: 3, b: 4 }))).toContain('7')
    expect(s.stats.refreshRequests).toBe(1)
    expect(bearer(s)).not.toBe(before)
    expect(s.stats.unauthorized).toBe(1) // only the first, token-less request
  })

  it('refreshes when the server refuses the token, and the call goes through', async () => {
    const s = await stack()
    const { manager, log } = await startWith(s, { oauth: { authorize: user().authorize } })
    expect(statusOf(manager, 'docs')!.status, log.dump()).toBe('ready')
    const before = bearer(s)
    s.revokeCurrentToken()
    const result = await toolByName(manager, 'mcp_docs_add').execute('1', { a: 5, b: 5 })
    expect(text(result), log.dump()).toContain('10')
    expect(s.stats.refreshRequests).toBe(1)
    expect(bearer(s)).not.toBe(before)
  })

  it('a rejected refresh token: a new sign-in through authorize, or without it a clear error saying how', async () => {
    const s = await stack()
    const dir = tempDir()
    const u = user()
    const { manager, log } = await startWith(s, { oauth: { dir, authorize: u.authorize } })
    expect(statusOf(manager, 'docs')!.status, log.dump()).toBe('ready')
    s.revokeCurrentToken()
    s.revokeRefreshTokens()
    const result = await toolByName(manager, 'mcp_docs_add').execute('1', { a: 1, b: 2 })
    expect(text(result), log.dump()).toContain('3')
    expect(u.calls).toHaveLength(2)
    await manager.shutdown()

    // The same store, no authorize: the stored tokens no longer work and nobody can sign in.
    s.revokeCurrentToken()
    s.revokeRefreshTokens()
    const again = await startWith(s, { oauth: { dir } })
    const status = statusOf(again.manager, 'docs')!
    expect(status.status).toBe('error')
    expect((status as { auth?: string }).auth).toBe('login-required')
    const why = await failure(again.log)
    expect(why).toContain('needs an OAuth sign-in')
    expect(why).toContain('openclaw-mcp-native login docs')
  })

  it('without authorize and without stored tokens the server ends error saying how to sign in', async () => {
    const s = await stack()
    const { manager, log } = await startWith(s, {})
    const status = statusOf(manager, 'docs')!
    expect(status.status).toBe('error')
    expect((status as { auth?: string }).auth).toBe('login-required')
    expect(await failure(log)).toMatch(/needs an OAuth sign-in: give the manager an oauth\.authorize callback/)
    expect(s.stats.authorizationRequests).toBe(0)
  })

  it('a user who does not sign in is asked once: the failure ends the start, with the reason', async () => {
    const s = await stack()
    let asked = 0
    const declines = async () => {
      asked += 1
      throw new Error('the user closed the window')
    }
    const { manager, log } = await startWith(s, { oauth: { authorize: declines } })
    expect(statusOf(manager, 'docs')!.status).toBe('error')
    expect(await failure(log)).toContain('oauth.authorize failed: the user closed the window')
    // Not asked again by the protocol negotiation falling back to another opening.
    expect(asked).toBe(1)
  })

  it('refuses an authorization response whose iss is not the issuer (mix-up defence)', async () => {
    const s = await stack()
    const tampered = async (url: string) => {
      const callback = new URL(await approve(url))
      callback.searchParams.set('iss', 'http://127.0.0.1:1')
      return callback.href
    }
    const { manager, log } = await startWith(s, { oauth: { authorize: tampered } })
    expect(statusOf(manager, 'docs')!.status).toBe('error')
    expect(await failure(log)).toMatch(/issuer/i)
    expect(s.stats.tokenRequests).toBe(0)
  })

  it('refuses metadata that points at a link-local host or names another resource', async () => {
    const viaChallenge = await stack({
      challenge: () => 'Bearer resource_metadata="http://169.254.169.254/latest/meta-data/oauth", scope="mcp:tools"',
      // The well-known probe must not rescue it either.
      prmAuthorizationServers: ['http://169.254.169.254'],
    })
    const a = await startWith(viaChallenge, { oauth: { authorize: user().authorize } })
    expect(statusOf(a.manager, 'docs')!.status).toBe('error')
    expect(viaChallenge.stats.registrations + viaChallenge.stats.authorizationRequests).toBe(0)

    const otherResource = await stack({ resourceOverride: 'https://elsewhere.example/mcp' })
    const b = await startWith(otherResource, { oauth: { authorize: user().authorize } })
    expect(statusOf(b.manager, 'docs')!.status).toBe('error')
    expect(await failure(b.log)).toMatch(/resource/i)
    expect(otherResource.stats.authorizationRequests).toBe(0)
  })

  it('does not follow a metadata redirect to another origin, nor send a token after a redirect', async () => {
    const s = await stack()
    // A resource whose metadata URL redirects to the real stack's metadata (another origin).
    const http = await import('node:http')
    let followed = 0
    const redirecting = http.createServer((req, res) => {
      if (req.url?.startsWith('/.well-known/')) {
        res.writeHead(302, { location: `${new URL(s.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp` }).end()
        return
      }
      followed += req.headers.authorization ? 1 : 0
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="http://127.0.0.1:${(redirecting.address() as { port: number }).port}/.well-known/oauth-protected-resource/mcp"` }).end()
    })
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r))
    try {
      const port = (redirecting.address() as { port: number }).port
      const log = new RecordingLogger()
      const manager = createManager(
        { servers: { docs: { transport: 'http', url: `http://127.0.0.1:${port}/mcp`, auth: 'oauth', timeout: 20_000, restartOnCrash: false } as ServerConfig } },
        { logger: log.logger, oauth: { authorize: user().authorize } } as ManagerOptions,
      )
      await manager.start()
      expect(statusOf(manager, 'docs')!.status).toBe('error')
      expect(await failure(log)).toMatch(/OAuth discovery failed/)
      expect(s.stats.registrations + s.stats.authorizationRequests + s.stats.tokenRequests).toBe(0)
      expect(followed).toBe(0)
    } finally {
      await new Promise((r) => redirecting.close(r))
    }
  })

  it('binds tokens to a key with DPoP where the resource offers it, nonces from both servers included', async () => {
    const s = await stack({ dpop: true, dpopNonce: true, rsNonce: true })
    const { manager, log } = await startWith(s, { oauth: { authorize: user().authorize } })
    expect(statusOf(manager, 'docs')!.status, log.dump()).toBe('ready')
    const result = await toolByName(manager, 'mcp_docs_whoami').execute('1', {})
    const presented = s.lastAuthorization ?? ''
    expect(presented).toMatch(/^DPoP ey/)
    const token = presented.slice('DPoP '.length)
    expect(text(result)).not.toContain(token)
    const ext = s as unknown as { stats: Record<string, number>; lastDpopProofClaims: { payload: Record<string, unknown> } }
    expect(ext.stats.dpopRequests).toBeGreaterThan(1)
    expect(ext.stats.rsNonceChallenges).toBe(1)
    expect(ext.stats.dpopRejected).toBe(0)
    expect(ext.lastDpopProofClaims.payload).toMatchObject({ htm: 'POST', htu: s.mcpUrl })
    expect(typeof ext.lastDpopProofClaims.payload.ath).toBe('string')
    expect(typeof ext.lastDpopProofClaims.payload.nonce).toBe('string')
  })

  it('works on the legacy SSE transport too: sign-in, masked token, refresh on a refused token', async () => {
    const s = await stack({ transport: 'sse' })
    const u = user()
    const { manager, log } = await startWith(s, { oauth: { authorize: u.authorize } }, { transport: 'sse' } as Partial<ServerConfig>)
    const status = statusOf(manager, 'docs')!
    expect(status.status, log.dump()).toBe('ready')
    expect(status.transport).toBe('sse')
    expect(new URL(u.calls[0].url).searchParams.get('resource')).toBe(s.mcpUrl)
    const result = await toolByName(manager, 'mcp_docs_whoami').execute('1', {})
    const token = bearer(s)
    expect(text(result)).toContain('[REDACTED]')
    expect(text(result)).not.toContain(token)
    // A refused token on a message POST: refreshed, and the message sent again.
    s.revokeCurrentToken()
    expect(text(await toolByName(manager, 'mcp_docs_add').execute('2', { a: 20, b: 22 })), log.dump()).toContain('42')
    expect(s.stats.refreshRequests).toBe(1)
    expect(log.entries.filter((e) => e.msg.includes(token))).toEqual([])
  })

  it('DPoP on the legacy SSE transport: the stream and every message carry a proof', async () => {
    const s = await stack({ transport: 'sse', dpop: true, rsNonce: true })
    const { manager, log } = await startWith(s, { oauth: { authorize: user().authorize } }, { transport: 'sse' } as Partial<ServerConfig>)
    expect(statusOf(manager, 'docs')!.status, log.dump()).toBe('ready')
    expect(text(await toolByName(manager, 'mcp_docs_add').execute('1', { a: 1, b: 41 }))).toContain('42')
    expect(s.lastAuthorization ?? '').toMatch(/^DPoP ey/)
    const ext = s as unknown as { stats: Record<string, number> }
    expect(ext.stats.dpopRejected).toBe(0)
    expect(ext.stats.dpopRequests).toBeGreaterThan(2)
  })

  it('keeps tokens in the host store under issuer and resource; logout deletes them', async () => {
    const s = await stack()
    const values = new Map<string, string>()
    const store = {
      get: async (key: string) => values.get(key),
      set: async (key: string, value: string) => void values.set(key, value),
      delete: async (key: string) => void values.delete(key),
    }
    const { manager, log } = await startWith(s, { oauth: { store, authorize: user().authorize } })
    expect(statusOf(manager, 'docs')!.status, log.dump()).toBe('ready')
    expect([...values.keys()]).toEqual([`${s.issuer} ${s.mcpUrl}`])
    const stored = JSON.parse([...values.values()][0])
    expect(stored.issuer).toBe(s.issuer)
    expect(await manager.logout('docs')).toBe(true)
    expect(values.size).toBe(0)
    expect(await manager.logout('docs')).toBe(false)
    await expect(manager.logout('nope')).rejects.toThrow("no MCP server named 'nope'")
  })

  it('a bad oauth option is a clear error at construction', () => {
    const config = { servers: {} }
    expect(() => createManager(config, { oauth: 5 } as unknown as ManagerOptions)).toThrow('Invalid oauth: expected an object')
    expect(() => createManager(config, { oauth: { authorize: 'x' } } as unknown as ManagerOptions)).toThrow('Invalid oauth.authorize: expected a function, got a string')
    expect(() => createManager(config, { oauth: { store: { get() {} } } } as unknown as ManagerOptions)).toThrow('Invalid oauth.store: missing the set(…) method')
    expect(() => createManager(config, { oauth: { dir: '/tmp/x', store: {} } } as unknown as ManagerOptions)).toThrow('give store or dir, not both')
  })
})

describe('the CLI: login, status, logout', () => {
  function configFile(s: Stack, redirectUri?: string): string {
    const dir = tempDir()
    const file = path.join(dir, 'mcp.json')
    const auth = redirectUri ? { type: 'oauth', redirectUri } : 'oauth'
    fs.writeFileSync(file, JSON.stringify({ servers: { docs: { transport: 'http', url: s.mcpUrl, auth } } }))
    return file
  }

  function run(args: string[], input?: (err: string, stdin: NodeJS.WritableStream) => void) {
    const child = spawn(NODE, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => {
      err += d
      input?.(err, child.stdin)
    })
    const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
      child.on('exit', (code) => resolve({ code, out, err })),
    )
    return { child, done }
  }

  it('login listens on the loopback redirect URI, stores the tokens; status shows auth; logout deletes them', async () => {
    const s = await stack()
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    const redirect = `http://127.0.0.1:${port}/callback`
    const config = configFile(s, redirect)
    const oauthDir = tempDir()
    let sent = false
    const login = run(['login', 'docs', '--config', config, '--oauth-dir', oauthDir], (err) => {
      const url = /https?:\/\/\S+\/auth\?\S+/.exec(err)?.[0]
      if (!url || sent) return
      sent = true
      // The user's browser: approve, then land on the CLI's listener.
      void approve(url, redirect).then((callback: string) => fetch(callback))
    })
    const result = await login.done
    expect(result.code, result.err).toBe(0)
    expect(result.out).toContain(`Signed in to 'docs'`)
    expect(fs.readdirSync(oauthDir).filter((f) => f.endsWith('.json'))).toHaveLength(1)

    const status = await run(['--config', config, '--oauth-dir', oauthDir]).done
    expect(status.code, status.err).toBe(0)
    expect(status.out).toMatch(/server\s+status\s+tools\s+auth/)
    expect(status.out).toMatch(/docs\s+ready\s+2\s+authorized/)

    const logout = await run(['logout', 'docs', '--config', config, '--oauth-dir', oauthDir]).done
    expect(logout.code, logout.err).toBe(0)
    expect(logout.out).toContain(`Signed out of 'docs'`)
    expect(fs.readdirSync(oauthDir).filter((f) => f.endsWith('.json'))).toHaveLength(0)

    const without = await run(['--config', config, '--oauth-dir', oauthDir]).done
    expect(without.code).toBe(1)
    expect(without.err).toContain('openclaw-mcp-native login docs')
    expect(without.out).toMatch(/docs\s+error\s+0\s+login-required/)
  })

  it('login --code takes the pasted callback URL', async () => {
    const s = await stack()
    const config = configFile(s)
    const oauthDir = tempDir()
    let sent = false
    const login = run(['login', 'docs', '--config', config, '--oauth-dir', oauthDir, '--code'], (err, stdin) => {
      const url = /https?:\/\/\S+\/auth\?\S+/.exec(err)?.[0]
      if (!url || sent || !err.includes('Paste')) return
      sent = true
      void approve(url).then((callback: string) => stdin.write(`${callback}\n`))
    })
    const result = await login.done
    expect(result.code, result.err).toBe(0)
    expect(fs.readdirSync(oauthDir).filter((f) => f.endsWith('.json'))).toHaveLength(1)
  })

  it('login names what is wrong: an unknown server, a server without auth, a missing --config', async () => {
    const s = await stack()
    const config = configFile(s)
    const unknown = await run(['login', 'nope', '--config', config]).done
    expect(unknown.code).toBe(2)
    expect(unknown.err).toContain("has no server named 'nope'")
    const noConfig = await run(['login', 'docs']).done
    expect(noConfig.code).toBe(2)
    expect(noConfig.err).toContain('login needs --config')
    const plain = path.join(tempDir(), 'plain.json')
    fs.writeFileSync(plain, JSON.stringify({ servers: { plain: { command: NODE, args: ['-e', '0'] } } }))
    const noAuth = await run(['logout', 'plain', '--config', plain]).done
    expect(noAuth.code).toBe(2)
    expect(noAuth.err).toContain("server 'plain' has no auth (OAuth)")
  })
})
