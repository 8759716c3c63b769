// doctorMcpConfig against real peers: a closed port, a local HTTPS server with a self-signed
// certificate, the real secret resolvers, the real file system and PATH.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, ECHO_SERVER, native, NODE, tempDir } from './helpers'

afterEach(cleanup)

type Finding = Awaited<ReturnType<typeof native.doctorMcpConfig>>[number]

const GH = 'ghp_' + 'Zx9'.repeat(12)
const PRELOAD = '/tmp/doctor-preload-value.so'

function codes(findings: Finding[]): string[] {
  return findings.map((f) => f.code)
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

describe('doctorMcpConfig', () => {
  it('reports each problem once, with a fix, and never a secret value', async () => {
    const config = {
      servers: {
        github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: GH } },
        missing: { command: 'doctor-no-such-command-1234' },
        remote: { transport: 'http', url: 'http://mcp.example.com/mcp' },
        broken: { transport: 'http', url: 'ftp://files.example.com/x' },
        vault: { command: NODE, args: [ECHO_SERVER, '--vault'], env: { API_KEY: 'secret://env/MISSING_DOCTOR_VAR' } },
        a_b: { command: NODE, args: [ECHO_SERVER, 'x'] },
        a: { command: NODE, args: [ECHO_SERVER, 'x'] },
      },
    }
    const findings = await native.doctorMcpConfig(config, {
      env: { PATH: '/usr/bin:/bin', LD_PRELOAD: PRELOAD, UNSET: undefined },
      tools: { a_b: ['c'], a: ['b_c', 'read.file'] },
    })
    expect(codes(findings).sort()).toEqual(
      [
        'command-not-found',
        'duplicate-server',
        'insecure-url',
        'invalid-url',
        'loader-hijack-env',
        'plaintext-credential',
        'secret-unresolved',
        'tool-name-collision',
        'tool-name-unsafe',
        'unpinned-package',
      ].sort(),
    )
    // Per server in config order, then the host.
    expect(findings.map((f) => f.server ?? null)).toEqual([
      'github', 'github', 'missing', 'remote', 'broken', 'vault', 'a', 'a', 'a', null,
    ])
    for (const f of findings) {
      expect(f.fix.length).toBeGreaterThan(10)
      expect(['error', 'warning', 'info']).toContain(f.severity)
    }
    const byCode = Object.fromEntries(findings.map((f) => [f.code, f]))
    expect(byCode['plaintext-credential']).toMatchObject({
      severity: 'warning',
      server: 'github',
      field: 'servers.github.env.GITHUB_TOKEN',
    })
    expect(byCode['plaintext-credential'].message).toContain('looks like a GitHub token')
    expect(byCode['plaintext-credential'].fix).toContain('"GITHUB_TOKEN": "secret://env/GITHUB_TOKEN"')
    expect(byCode['unpinned-package'].fix).toContain('npx -y @modelcontextprotocol/server-github@<version>')
    expect(byCode['command-not-found']).toMatchObject({ severity: 'error', field: 'servers.missing.command' })
    expect(byCode['secret-unresolved'].message).toContain(
      "Environment variable 'MISSING_DOCTOR_VAR' not set (from secret://env/MISSING_DOCTOR_VAR)",
    )
    expect(byCode['loader-hijack-env'].message).toContain('LD_PRELOAD')
    expect(byCode['tool-name-collision'].message).toContain("which tool 'c' of server 'a_b' already has")
    expect(byCode['duplicate-server'].severity).toBe('info')

    const json = JSON.stringify(findings)
    for (const secret of [GH, PRELOAD, GH.slice(4, 20)]) expect(json).not.toContain(secret)
  })

  it('a good config has no findings', async () => {
    const findings = await native.doctorMcpConfig(
      {
        servers: {
          echo: { command: NODE, args: [ECHO_SERVER], env: { TOKEN: 'secret://env/DOCTOR_OK', REF: { source: 'env', id: 'DOCTOR_OK' } } },
          remote: { transport: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${DOCTOR_OK}' } },
          pinned: { command: 'npx', args: ['-y', '@scope/pkg@1.2.3'] },
        },
      },
      { env: { PATH: '/usr/bin:/bin', DOCTOR_OK: 'value' } },
    )
    expect(findings).toEqual([])
  })

  it('reads other config shapes, and process.env when options.env is absent', async () => {
    process.env.DOCTOR_SPEC_VAR = 'set-in-process-env'
    try {
      const findings = await native.doctorMcpConfig({
        mcpServers: { s: { command: NODE, env: { A: 'secret://env/DOCTOR_SPEC_VAR', B: 'secret://env/DOCTOR_SPEC_UNSET' } } },
      })
      expect(findings.filter((f) => f.server === 's').map((f) => [f.code, f.field])).toEqual([
        ['secret-unresolved', 'servers.s.env.B'],
      ])
      expect(JSON.stringify(findings)).not.toContain('set-in-process-env')
    } finally {
      delete process.env.DOCTOR_SPEC_VAR
    }
  })

  it('a missing secret:// reference is secret-unresolved', async () => {
    const findings = await native.doctorMcpConfig(
      { servers: { s: { command: NODE, env: { K: 'secret://env/MISSING' } } } },
      { env: { PATH: '/usr/bin' } },
    )
    expect(findings).toHaveLength(1)
    expect(findings[0]).toMatchObject({ severity: 'error', code: 'secret-unresolved', server: 's', field: 'servers.s.env.K' })
    expect(findings[0].message).toContain('secret://env/MISSING')
  })

  it('a closed port is url-unreachable', async () => {
    const port = await closedPort()
    const config = { servers: { r: { transport: 'http', url: `http://127.0.0.1:${port}/mcp` } } }
    expect(await native.doctorMcpConfig(config, { env: {} })).toEqual([])
    const findings = await native.doctorMcpConfig(config, { env: {}, network: true, timeoutMs: 3000 })
    expect(codes(findings)).toEqual(['url-unreachable'])
    expect(findings[0].message).toContain('connection refused')
    expect(findings[0]).toMatchObject({ severity: 'error', server: 'r', field: 'servers.r.url' })
  })

  it.skipIf(!hasOpenssl())('a certificate from an unknown CA is a tls-failure; trusted through caFile, an HTTP answer of any status is reachable', async () => {
    // A private CA and a leaf certificate for 127.0.0.1 signed by it.
    const dir = tempDir()
    const file = (name: string) => path.join(dir, name)
    const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' })
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'),
      '-days', '1', '-subj', '/CN=doctor test CA')
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('leaf.key'), '-out', file('leaf.csr'),
      '-subj', '/CN=localhost')
    fs.writeFileSync(file('leaf.ext'), 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n')
    openssl('x509', '-req', '-in', file('leaf.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'),
      '-CAcreateserial', '-out', file('leaf.pem'), '-days', '1', '-extfile', file('leaf.ext'))
    const key = file('leaf.key')
    const cert = file('leaf.pem')
    const requests: string[] = []
    const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
      requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`)
      res.writeHead(405).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as net.AddressInfo
    try {
      const url = `https://127.0.0.1:${port}/mcp`
      const findings = await native.doctorMcpConfig(
        { servers: { tls: { transport: 'http', url, headers: { Authorization: 'Bearer ${DOCTOR_TLS_TOKEN}' } } } },
        { env: { DOCTOR_TLS_TOKEN: 'tls-token-value' }, network: true, timeoutMs: 5000 },
      )
      expect(codes(findings)).toEqual(['tls-failure'])
      expect(findings[0].message).toContain('unknown issuer')
      expect(findings[0].fix).toContain('caFile')
      // With the certificate trusted through caFile the server answers 405: reachable.
      const trusted = await native.doctorMcpConfig(
        { servers: { tls: { transport: 'http', url, caFile: file('ca.pem'), headers: { Authorization: 'Bearer ${DOCTOR_TLS_TOKEN}' } } } },
        { env: { DOCTOR_TLS_TOKEN: 'tls-token-value' }, network: true, timeoutMs: 5000 },
      )
      expect(trusted).toEqual([])
      expect(requests).toEqual(['GET /mcp '])
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it('bad input never throws: config-invalid findings; bad options reject naming the option', async () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const inputs: unknown[] = [undefined, null, 42, 'text', true, Symbol('s'), () => 1, 10n, cyclic,
      { servers: { a: { command: 3 } } }, { servers: 'nope' }]
    for (const input of inputs) {
      let promise: Promise<Finding[]> | undefined
      expect(() => {
        promise = native.doctorMcpConfig(input, { env: {} })
      }).not.toThrow()
      const findings = await promise!
      expect(codes(findings)).toEqual(['config-invalid'])
      expect(findings[0].severity).toBe('error')
    }
    const invalid = await native.doctorMcpConfig({ servers: { a: { command: 3 } } }, { env: {} })
    expect(invalid[0].message).toContain('servers.a.command')

    const bad: [unknown, RegExp][] = [
      [5, /options must be an object, got a number/],
      ['x', /options must be an object, got a string/],
      [{ network: 'yes' }, /options\.network must be a boolean/],
      [{ timeoutMs: -5 }, /options\.timeoutMs must be a positive number/],
      [{ env: { A: 1 } }, /options\.env\.A must be a string/],
      [{ tools: { s: 'x' } }, /options\.tools\.s must be an array of strings/],
      [{ toolNames: 'other' }, /options\.toolNames must be 'compat' or 'openclaw'/],
      [{ shape: 'yaml' }, /options\.shape: Unknown config shape/],
    ]
    for (const [options, message] of bad) {
      let promise: Promise<Finding[]> | undefined
      expect(() => {
        promise = native.doctorMcpConfig({ servers: {} }, options as never)
      }).not.toThrow()
      await expect(promise!).rejects.toThrow(message)
    }
  })
})
