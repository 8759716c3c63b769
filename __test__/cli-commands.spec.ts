// The command-line tool's subcommands (bin/mcp-native.js status|tools|call|resources|prompts|probe|
// doctor|import), end to end: real child processes (the CLI and the MCP servers it starts), exit
// codes, what goes to stdout and what to stderr.

import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, CLI, ECHO_SERVER, exitWithin, FAULT_BUILTIN_TOOLS, FAULT_SERVER, NODE, spawnNode, tempDir } from './helpers'

afterEach(cleanup)

async function runCli(args: string[], env: NodeJS.ProcessEnv = {}, base: NodeJS.ProcessEnv = process.env) {
  const p = spawnNode([CLI, ...args], { env: { ...base, COLUMNS: '100', ...env } })
  const exit = await exitWithin(p, 30_000)
  return { ...exit, stdout: p.stdout(), stderr: p.stderr() }
}

function writeJson(dir: string, name: string, value: unknown): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, JSON.stringify(value, null, 2))
  return file
}

/** A config of the fault server with `flags`, as server `name`. */
function faultConfig(flags: string[] = [], name = 'fault', extra: Record<string, unknown> = {}): string {
  return writeJson(tempDir(), 'mcp.json', { servers: { [name]: { command: NODE, args: [FAULT_SERVER, ...flags], ...extra } } })
}

const count = (text: string, needle: string) => text.split(needle).length - 1

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = net.createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as net.AddressInfo
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

describe('CLI status', () => {
  it('prints one row per server with transport, protocol, status, tools, restarts, uptime and last error', async () => {
    const dir = tempDir()
    const file = writeJson(dir, 'mcp.json', {
      servers: {
        echo: { command: NODE, args: [ECHO_SERVER] },
        broken: { command: NODE, args: [FAULT_SERVER, '--exit-at-start'], restartOnCrash: false },
      },
    })
    const r = await runCli(['status', '--config', file])
    expect(r.code, r.stderr).toBe(1)
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^server\s+transport\s+protocol\s+status\s+tools\s+restarts\s+uptime\s+last error$/)
    expect(lines[1]).toMatch(/^echo\s+stdio\s+2025-11-25\s+ready\s+4\s+0\s+\S/)
    expect(lines[2]).toMatch(/^broken\s+stdio\s+-\s+error\s+0\s+0\s+-\s+\S/)
    // The failed server's stderr is shown (it failed), once.
    expect(count(r.stderr, 'fault-server: exiting at start (code 3)')).toBe(1)
  })

  it('--json prints the rows as JSON and nothing else on stdout', async () => {
    const r = await runCli(['status', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const rows = JSON.parse(r.stdout)
    expect(rows).toEqual([expect.objectContaining({ server: 'example', transport: 'stdio', status: 'ready', tools: 4, restarts: 0 })])
    expect(rows[0].uptimeMs).toBeGreaterThanOrEqual(0)
  })

  it("a server's stderr is not shown while it works, and is with --verbose", async () => {
    const file = faultConfig(['--stderr-chatter'])
    const quiet = await runCli(['status', '--config', file])
    expect(quiet.code, quiet.stderr).toBe(0)
    expect(quiet.stderr).not.toContain('chatter')
    expect(quiet.stderr).not.toContain('[warn]')
    const verbose = await runCli(['status', '--config', file, '--verbose'])
    expect(verbose.code, verbose.stderr).toBe(0)
    expect(verbose.stderr).toContain('chatter: started 1')
  })

  it('a refused URL is reported once, in the start line, and the table', async () => {
    const port = await closedPort()
    const file = writeJson(tempDir(), 'mcp.json', { servers: { gone: { transport: 'http', url: `http://127.0.0.1:${port}/mcp` } } })
    const r = await runCli(['status', '--config', file])
    expect(r.code).toBe(1)
    expect(count(r.stderr, 'connection refused')).toBe(1)
    expect(r.stderr).toMatch(/✗ gone: failed \(.*\): cannot connect to/)
    expect(r.stdout).toMatch(/^gone\s+http\s.*error.*connection refused/m)
  })

  it('a start that fails before connecting (a secret that does not resolve) is shown as failed, its error once', async () => {
    const file = faultConfig([], 'vault', { env: { API_KEY: 'secret://env/MCP_NATIVE_CLI_TEST_UNSET' } })
    const r = await runCli(['status', '--config', file])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^✗ vault: failed \(.*\): Environment variable 'MCP_NATIVE_CLI_TEST_UNSET' not set/m)
    expect(count(r.stderr, "Environment variable 'MCP_NATIVE_CLI_TEST_UNSET' not set"), r.stderr).toBe(1)
    expect(r.stdout).toMatch(/^vault\s+stdio\s.*Environment variable 'MCP_NATIVE_CLI_TEST_UNSET' not set/m)
  })

  it('--timeout bounds the start: a server still starting is reported as timed out', async () => {
    const file = faultConfig(['--init-delay', '20000'])
    const began = Date.now()
    const r = await runCli(['status', '--config', file, '--timeout', '1s'])
    expect(r.code).toBe(1)
    expect(Date.now() - began).toBeLessThan(15_000)
    expect(r.stderr).toMatch(/✗ fault: /)
  })

  it('--quiet prints no start display', async () => {
    const r = await runCli(['status', '--quiet'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe('')
  })
})

describe('CLI tools', () => {
  it('one line per tool, descriptions of many lines cut to the terminal; --full prints them whole', async () => {
    const dir = tempDir()
    const long = Array.from({ length: 50 }, (_, i) => `Line ${i + 1} of a long description ${'x'.repeat(60)}`).join('\n')
    const toolsFile = writeJson(dir, 'tools.json', [
      { name: 'long', description: long, inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
      { name: 'escapes', description: 'red \u001b[31mtext\u001b[0m here', inputSchema: { type: 'object' } },
    ])
    const file = faultConfig(['--tools-file', toolsFile])
    const r = await runCli(['tools', 'fault', '--config', file])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    const longLine = lines.find((l) => l.startsWith('mcp_fault_long'))!
    expect(longLine).toContain('Line 1 of a long description')
    expect(longLine.length).toBeLessThanOrEqual(100)
    expect(longLine.endsWith('…')).toBe(true)
    expect(r.stdout).not.toContain('Line 2 of')
    expect(r.stdout).not.toContain('\u001b')
    const n = FAULT_BUILTIN_TOOLS.length + 2 // the fault server's own tools and the two from the file
    expect(lines.length).toBe(n)
    expect(r.stderr).toContain(`${n} tools from 1 ready server`)

    const full = await runCli(['tools', 'fault', '--config', file, '--full'])
    expect(full.code, full.stderr).toBe(0)
    expect(full.stdout).toContain('Line 50 of a long description')
    expect(full.stdout).toContain('"q": {')
  })

  it('tools SERVER names an unknown server with exit 2', async () => {
    const r = await runCli(['tools', 'nope'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("no server named 'nope'")
  })

  it('--json lists server, the server tool name and the agent tool name', async () => {
    const r = await runCli(['tools', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toContainEqual(expect.objectContaining({ server: 'example', tool: 'echo', name: 'mcp_example_echo' }))
  })
})

describe('CLI call', () => {
  it('prints the wrapped result and exits 0', async () => {
    const r = await runCli(['call', 'mcp_example_add', '--args', '{"a":40,"b":2}'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/\n---\n42\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>/)
  })

  it('exits 1 on an isError result and on a failed call', async () => {
    const file = faultConfig()
    const isError = await runCli(['call', 'mcp_fault_is_error', '--config', file])
    expect(isError.code, isError.stderr).toBe(1)
    expect(isError.stderr).toContain('returned an error result')
    const failed = await runCli(['call', 'mcp_fault_fail', '--config', file])
    expect(failed.code, failed.stderr).toBe(1)
    // The legacy form agrees.
    const legacy = await runCli(['--config', file, '--call', 'mcp_fault_is_error'])
    expect(legacy.code).toBe(1)
  })

  it('shows progress on stderr while the call runs', async () => {
    const r = await runCli(['call', 'mcp_fault_slow', '--args', '{"ms":300}', '--config', faultConfig()])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/^progress 1\/6 \(17 %\)$/m)
    expect(r.stdout).toContain('slept 300 ms')
  })

  it('--timeout cancels a call that runs too long, exit 1', async () => {
    // --timeout bounds the server's start as well; 500 ms was once too short for the fault
    // server's start on a loaded CI machine, so the budget leaves the start room.
    const r = await runCli(['call', 'mcp_fault_hang', '--config', faultConfig(), '--timeout', '3s'])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toContain('cancelled after --timeout 3000 ms')
  })

  it('a --timeout too short for any start says it bounds the start too, exit 1', async () => {
    const r = await runCli(['call', 'mcp_fault_hang', '--config', faultConfig(), '--timeout', '1ms'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^✗ fault: failed \(.*\): no answer to initialize within 1 ms/m)
    expect(r.stderr).toContain("no agent tool named 'mcp_fault_hang' (no server is ready; --timeout 1 ms bounds each server's start too)")
  })

  it('bad arguments name the flag, exit 2, and start nothing', async () => {
    const bad = await runCli(['call', 'mcp_example_echo', '--args', '{text: 1}'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^openclaw-mcp-native: --args: not valid JSON \(.*\); give a JSON object/m)
    expect(bad.stderr).not.toContain('example: ready')
    const array = await runCli(['call', 'mcp_example_echo', '--args', '[1]'])
    expect(array.stderr).toContain('--args: the arguments must be a JSON object, got an array')
    const dir = tempDir()
    const missing = await runCli(['call', 'mcp_example_echo', '--args-file', path.join(dir, 'none.json')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(`--args-file ${path.join(dir, 'none.json')}: cannot read it (no such file)`)
    const good = await runCli(['call', 'mcp_example_echo', '--args-file', writeJson(dir, 'a.json', { text: 'from a file' })])
    expect(good.code, good.stderr).toBe(0)
    expect(good.stdout).toContain('\nfrom a file\n')
  })

  it('an unknown tool exits 1 and suggests the close ones', async () => {
    const r = await runCli(['call', 'mcp_example_ad'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("no agent tool named 'mcp_example_ad'; did you mean mcp_example_add?")
  })
})

describe('CLI resources, prompts, probe, import', () => {
  it('resources and prompts list what the servers offer', async () => {
    const file = faultConfig(['--resources'])
    const r = await runCli(['resources', '--config', file])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^fault\s+fault:\/\/text\/alpha\s+Alpha\s+text\/plain/m)
    const p = await runCli(['prompts', '--json'])
    expect(p.code, p.stderr).toBe(0)
    expect(Array.isArray(JSON.parse(p.stdout))).toBe(true)
  })

  it('probe times connect, initialize, tools/list and ping', async () => {
    const r = await runCli(['probe', 'example'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^probe example: ok$/m)
    for (const step of ['connect', 'initialize', 'tools/list', 'ping', 'total']) expect(r.stdout).toMatch(new RegExp(`^  ${step}\\s+\\d+(\\.\\d)? (ms|s)`, 'm'))
    const json = await runCli(['probe', 'example', '--json'])
    const report = JSON.parse(json.stdout)
    for (const k of ['connectMs', 'initializeMs', 'listMs', 'pingMs']) expect(typeof report.steps[k]).toBe('number')
    expect(report).toMatchObject({ server: 'example', status: 'ready', tools: 4, error: null })
  })

  it('probe of a failing server exits 1 with its error; of an unknown one exits 2', async () => {
    const failing = await runCli(['probe', 'fault', '--config', faultConfig(['--exit-at-start'])])
    expect(failing.code).toBe(1)
    expect(failing.stdout).toMatch(/^probe fault: failed$/m)
    const unknown = await runCli(['probe', 'nope'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("no server named 'nope' in the config (servers: example)")
  })

  it('import prints an McpConfig without the defaults, or an openclaw.json fragment', async () => {
    const dir = tempDir()
    const file = writeJson(dir, 'claude.json', {
      mcpServers: { files: { command: 'npx', args: ['-y', 'pkg@1.0.0'], env: { A: 'b' }, disabledTools: [] }, web: { type: 'http', url: 'https://example.com/mcp' } },
    })
    const r = await runCli(['import', file])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      servers: { files: { command: 'npx', args: ['-y', 'pkg@1.0.0'], env: { A: 'b' } }, web: { url: 'https://example.com/mcp', transport: 'http' } },
    })
    expect(r.stderr).toContain("Ignored unrecognized key 'disabledTools'")
    const oc = await runCli(['import', file, '--to', 'openclaw'])
    expect(JSON.parse(oc.stdout).agents.defaults.mcp.servers.web.url).toBe('https://example.com/mcp')
    const bad = await runCli(['import', writeJson(dir, 'bad.json', { mcpServers: { x: { command: 3 } } })])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^openclaw-mcp-native: import .*bad\.json: /m)
  })
})

describe('CLI usage', () => {
  it('every command has --help (exit 0); unknown commands and flags exit 2 naming them', async () => {
    for (const c of ['status', 'tools', 'call', 'resources', 'prompts', 'probe', 'doctor', 'import', 'login', 'logout']) {
      const r = await runCli([c, '--help'])
      expect(r.code, c).toBe(0)
      expect(r.stdout, c).toMatch(new RegExp(`^usage: openclaw-mcp-native ${c}\\b`))
    }
    const bogus = await runCli(['bogus'])
    expect(bogus.code).toBe(2)
    expect(bogus.stderr).toContain("unknown command 'bogus'")
    const flag = await runCli(['tools', '--args', '{}'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain("unknown flag '--args' for tools (it belongs to: run, call)")
    const argsAlone = await runCli(['--args', '{}'])
    expect(argsAlone.code).toBe(2)
    expect(argsAlone.stderr).toContain('--args needs --call TOOL')
    const timeout = await runCli(['status', '--timeout', 'soon'])
    expect(timeout.code).toBe(2)
    expect(timeout.stderr).toContain("--timeout: expected a duration such as 30s, 500ms or 2m (a bare number is seconds), got 'soon'")
    const config = await runCli(['status', '--config', '/nonexistent/mcp.json'])
    expect(config.code).toBe(2)
    expect(config.stderr).toContain('--config /nonexistent/mcp.json: cannot read it (no such file)')
    expect(count(config.stderr, 'no such file')).toBe(1)
  })

  it('on a terminal the start display redraws one line per server', async () => {
    // `script` gives the CLI a pseudo-terminal, as an operator's shell would.
    const r = spawnSync('script', ['-qec', `${NODE} ${CLI} status`, '/dev/null'], { encoding: 'utf8', env: { ...process.env, COLUMNS: '100' }, timeout: 30_000 })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain('\u001b[2K')
    expect(r.stdout).toMatch(/… example: starting/)
    expect(r.stdout).toMatch(/\u001b\[1A\r\u001b\[2K✓ example: ready, 4 tools/)
  })
})

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** An HTTPS server on 127.0.0.1 with a self-signed certificate (no client trusts it). */
async function selfSignedServer(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const key = path.join(dir, 'key.pem')
  const cert = path.join(dir, 'cert.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' })
  const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (_req, res) => res.writeHead(404).end())
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as net.AddressInfo
  return { url: `https://127.0.0.1:${port}/mcp`, close: () => new Promise<void>((r) => server.close(() => r())) }
}

describe('CLI doctor', () => {
  it.skipIf(!hasOpenssl())('reports each problem of a config once, with its fix, and never a secret value; exit 2', async () => {
    const dir = tempDir()
    const token = 'ghp_' + 'Zq8'.repeat(12)
    const tls = await selfSignedServer(dir)
    try {
      const tools = (name: string, names: string[]) =>
        writeJson(dir, `${name}.json`, names.map((n) => ({ name: n, description: `tool ${n}`, inputSchema: { type: 'object' } })))
      const file = writeJson(dir, 'claude_desktop_config.json', {
        mcpServers: {
          github: { command: NODE, args: [ECHO_SERVER], env: { GITHUB_TOKEN: token } },
          memory: { command: 'npx', args: ['--no-install', '@modelcontextprotocol/server-memory'], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } },
          missing: { command: 'mcp-server-that-is-not-installed' },
          refused: { type: 'http', url: `http://127.0.0.1:${await closedPort()}/mcp` },
          tls: { type: 'http', url: tls.url },
          vault: { command: NODE, args: [FAULT_SERVER, '--stderr-chatter'], env: { API_KEY: 'secret://env/MCP_NATIVE_DOCTOR_UNSET' } },
          crashing: { command: NODE, args: [FAULT_SERVER, '--exit-at-start'] },
          a: { command: NODE, args: [FAULT_SERVER, '--tools-file', tools('a', ['b_c', 'x'.repeat(70)])] },
          a_b: { command: NODE, args: [FAULT_SERVER, '--tools-file', tools('a_b', ['c'])] },
        },
      })
      const r = await runCli(['doctor', '--config', file, '--timeout', '10s', '--json'], { NODE_OPTIONS: '--no-deprecation' })
      expect(r.code, r.stderr).toBe(2)
      const findings = JSON.parse(r.stdout) as Array<{ severity: string; code: string; server?: string; message: string; fix: string }>
      const key = (f: { code: string; server?: string }) => `${f.code} ${f.server ?? '-'}`
      const keys = findings.map(key)
      expect(new Set(keys).size, keys.join('\n')).toBe(keys.length)
      for (const want of [
        'plaintext-credential github',
        'unpinned-package memory',
        'command-not-found missing',
        'url-unreachable refused',
        'tls-failure tls',
        'secret-unresolved vault',
        'server-failed crashing',
        'tool-name-unsafe a',
        'tool-name-collision a_b',
        'loader-hijack-env -',
      ]) expect(keys, keys.join('\n')).toContain(want)
      // A server whose failure a finding already explains is not reported again as failed.
      for (const s of ['missing', 'refused', 'tls', 'vault']) expect(keys).not.toContain(`server-failed ${s}`)
      for (const f of findings) expect(f.fix.length, key(f)).toBeGreaterThan(10)
      expect(findings.find((f) => f.code === 'server-failed')!.message).toContain('fault-server: exiting at start (code 3)')
      // The CLI passes no env: the host's own is read, and named as such (it said 'options.env').
      expect(findings.find((f) => f.code === 'command-not-found')!.message).toContain('on the PATH from the process environment')
      expect(r.stdout + r.stderr).not.toContain(token)
      expect(r.stdout + r.stderr).not.toContain(token.slice(4, 16))

      const text = await runCli(['doctor', '--config', file, '--timeout', '10s'], { NODE_OPTIONS: '--no-deprecation' })
      expect(text.code).toBe(2)
      expect(text.stdout).toMatch(/^warning plaintext-credential  \(github: servers\.github\.env\.GITHUB_TOKEN\)$/m)
      expect(text.stdout).toMatch(/^        fix: .*"GITHUB_TOKEN": "secret:\/\/env\/GITHUB_TOKEN"/m)
      expect(text.stdout).toMatch(/^\d+ error\(s\), \d+ warning\(s\), \d+ note\(s\)$/m)
      expect(text.stdout + text.stderr).not.toContain(token)
    } finally {
      await tls.close()
    }
  })

  it('a clean config: no problems, exit 0; warnings only: exit 1; --offline starts nothing', async () => {
    // Whatever loader-hijack variables this machine sets (doctor would rightly warn of them).
    const hijack = /^(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|BASH_ENV|ENV|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|GCONV_PATH|DYLD_.*)$/
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !hijack.test(k)))
    const clean = await runCli(['doctor'], {}, env)
    expect(clean.code, clean.stdout + clean.stderr).toBe(0)
    expect(clean.stdout).toContain('No problems found.')
    const dir = tempDir()
    const pidfile = path.join(dir, 'pid')
    const file = writeJson(dir, 'mcp.json', { servers: { s: { command: NODE, args: [FAULT_SERVER, '--pidfile', pidfile], env: { API_TOKEN: 'plain-text-value-123' } } } })
    const warned = await runCli(['doctor', '--config', file, '--offline'], {}, env)
    expect(warned.code, warned.stdout + warned.stderr).toBe(1)
    expect(warned.stdout).toContain('plaintext-credential')
    expect(warned.stdout).not.toContain('plain-text-value-123')
    expect(fs.existsSync(pidfile)).toBe(false)
  })

  it('a config that does not load is one config-invalid error', async () => {
    const file = writeJson(tempDir(), 'mcp.json', { servers: { s: { command: 3 } } })
    const r = await runCli(['doctor', '--config', file])
    expect(r.code).toBe(2)
    expect(r.stdout).toMatch(/^error   config-invalid$/m)
  })
})

