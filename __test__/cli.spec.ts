// The command-line tool (bin/mcp-native.js). Without a config it runs the
// built-in example server (examples/echo-server.mjs as server `example`).

import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, CLI, ECHO_SERVER, exitWithin, FAULT_SERVER, NODE, spawnNode, tempDir } from './helpers'

afterEach(cleanup)

async function runCli(args: string[]) {
  const p = spawnNode([CLI, ...args])
  const exit = await exitWithin(p, 20_000)
  return { ...exit, stdout: p.stdout(), stderr: p.stderr() }
}

/** A status-table line naming the server and its status. */
const statusLine = (server: string, status: string) => new RegExp(`^.*\\b${server}\\b.*\\b${status}\\b.*$`, 'm')

function writeJson(dir: string, name: string, value: unknown): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, JSON.stringify(value, null, 2))
  return file
}

describe('openclaw-mcp-native CLI', () => {
  it('without a config runs the example server, prints it as ready and lists its tools', async () => {
    const r = await runCli([])
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    expect(r.stdout).toMatch(statusLine('example', 'ready'))
    for (const t of ['echo', 'add', 'current_time', 'word_count']) expect(r.stdout).toContain(`mcp_example_${t}`)
  })

  it('--call <tool> --args <json> prints the wrapped result', async () => {
    const r = await runCli(['--call', 'mcp_example_echo', '--args', JSON.stringify({ text: 'hello from the cli' })])
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    const m = /<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]{16})">>>\nSource: MCP Server\nFrom: example\n---\nhello from the cli\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]{16})">>>/.exec(r.stdout)
    expect(m, r.stdout).not.toBeNull()
    expect(m![1]).toBe(m![2])
    expect(r.stdout).toContain('SECURITY NOTICE')
  })

  it('--call with the add tool computes on the server', async () => {
    const r = await runCli(['--call', 'mcp_example_add', '--args', '{"a":40,"b":2}'])
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    expect(r.stdout).toMatch(/\n---\n42\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>/)
  })

  it('--config <file> with a plain McpConfig uses those servers instead of the example', async () => {
    const dir = tempDir()
    const file = writeJson(dir, 'mcp.json', { servers: { fault: { command: NODE, args: [FAULT_SERVER] } } })
    const r = await runCli(['--config', file])
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    expect(r.stdout).toMatch(statusLine('fault', 'ready'))
    expect(r.stdout).toContain('mcp_fault_echo')
    expect(r.stdout).not.toContain('mcp_example_echo')
  })

  it('--config <openclaw.json> --agent <id> merges the agent servers over agents.defaults.mcp', async () => {
    const dir = tempDir()
    const file = writeJson(dir, 'openclaw.json', {
      agents: {
        defaults: { mcp: { servers: { shared: { command: NODE, args: [ECHO_SERVER] } } } },
        list: [{ id: 'worker', mcp: { servers: { own: { command: NODE, args: [FAULT_SERVER] } } } }],
      },
    })
    const withAgent = await runCli(['--config', file, '--agent', 'worker'])
    expect(withAgent, withAgent.stderr).toMatchObject({ code: 0, signal: null })
    expect(withAgent.stdout).toMatch(statusLine('shared', 'ready'))
    expect(withAgent.stdout).toMatch(statusLine('own', 'ready'))
    expect(withAgent.stdout).toContain('mcp_shared_echo')
    expect(withAgent.stdout).toContain('mcp_own_echo')

    const defaultsOnly = await runCli(['--config', file])
    expect(defaultsOnly, defaultsOnly.stderr).toMatchObject({ code: 0, signal: null })
    expect(defaultsOnly.stdout).toContain('mcp_shared_echo')
    expect(defaultsOnly.stdout).not.toContain('mcp_own_echo')
  })

  it('reads a Claude Desktop mcpServers file (shape detected), with --tool-names openclaw', async () => {
    const dir = tempDir()
    const file = writeJson(dir, 'claude_desktop_config.json', {
      mcpServers: { files: { command: NODE, args: [FAULT_SERVER], disabledTools: [] } },
    })
    const r = await runCli(['--config', file, '--tool-names', 'openclaw', '--call', 'files__add', '--args', '{"a":20,"b":22}'])
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    expect(r.stdout).toContain('(mcpServers)')
    expect(r.stderr).toContain("Ignored unrecognized key 'disabledTools'")
    expect(r.stdout).toMatch(/\n---\n42\n<<<END_EXTERNAL_UNTRUSTED_CONTENT/)
  })

  it('--shape acp reads an ACP session/new mcpServers array', async () => {
    const dir = tempDir()
    const file = writeJson(dir, 'acp.json', [{ name: 'example', command: NODE, args: [ECHO_SERVER], env: [] }])
    const r = await runCli(['--config', file, '--shape', 'acp', '--no-call'])
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    expect(r.stdout).toMatch(statusLine('example', 'ready'))
  })

  // Issue 19's defects, each found by running the tool on real configs.
  it("a working server's stderr is not printed (it was, every line as [warn]); --verbose prints it", async () => {
    const file = writeJson(tempDir(), 'mcp.json', { servers: { chatty: { command: NODE, args: [FAULT_SERVER, '--stderr-chatter'] } } })
    const r = await runCli(['--config', file])
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    expect(r.stderr).not.toContain('chatter: started')
    const verbose = await runCli(['--config', file, '--verbose'])
    expect(verbose.stderr).toContain('chatter: started 1')
  })

  it('--call of a tool that returns isError: true exits 1', async () => {
    const file = writeJson(tempDir(), 'mcp.json', { servers: { fault: { command: NODE, args: [FAULT_SERVER] } } })
    const r = await runCli(['--config', file, '--call', 'mcp_fault_is_error'])
    expect(r.code, r.stdout + r.stderr).toBe(1)
  })

  it('a bad --args names the flag', async () => {
    const r = await runCli(['--call', 'mcp_example_echo', '--args', '{text: 1}'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--args: not valid JSON/)
  })

  it('a tool description of many lines stays on its one line of the tool list', async () => {
    const dir = tempDir()
    const toolsFile = writeJson(dir, 'tools.json', [{ name: 'long', description: Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n'), inputSchema: { type: 'object' } }])
    const file = writeJson(dir, 'mcp.json', { servers: { fault: { command: NODE, args: [FAULT_SERVER, '--tools-file', toolsFile] } } })
    const r = await runCli(['--config', file])
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    expect(r.stdout).toMatch(/^  mcp_fault_long  \[MCP server: fault\] line 1$/m)
    expect(r.stdout).not.toMatch(/^line 2$/m)
  })

  it('a refused URL retried while another server starts slowly is reported once', async () => {
    const dir = tempDir()
    const file = writeJson(dir, 'mcp.json', {
      servers: {
        gone: { transport: 'http', url: 'http://127.0.0.1:9/mcp' },
        slow: { command: NODE, args: [FAULT_SERVER, '--init-delay', '3500'] },
      },
    })
    const r = await runCli(['--config', file])
    expect(r.code).toBe(1)
    expect(r.stderr.split('connection refused').length - 1, r.stderr).toBe(1)
  })
})

