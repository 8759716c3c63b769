#!/usr/bin/env node
// Writes docs/cli.md: every subcommand of the command-line tool run on the built-in example and on
// a config of real servers (server-everything, filesystem and memory over stdio, server-everything
// over Streamable HTTP), with what it printed. Run it again after changing the CLI:
//   node scripts/cli-transcript.mjs            (needs `npm install` and `npm run build`)
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CLI = path.join(ROOT, 'bin', 'mcp-native.js')
const OUT = process.argv[2] || path.join(ROOT, 'docs', 'cli.md')
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-native-cli-'))
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
    s.on('error', reject)
  })
}

async function waitForHttp(url, child) {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server-everything exited (${child.exitCode}) before listening`)
    try {
      await fetch(url)
      return
    } catch {
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  throw new Error(`${url} did not answer within 15 s`)
}

const port = await freePort()
const http = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' })
const url = `http://127.0.0.1:${port}/mcp`

const files = path.join(work, 'files')
fs.mkdirSync(files)
fs.writeFileSync(path.join(files, 'notes.txt'), 'MCP servers as agent tools.\n')
// A Claude Desktop config, as users have them: npx with pinned versions (installed locally).
const config = path.join(work, 'claude_desktop_config.json')
fs.writeFileSync(config, JSON.stringify({
  mcpServers: {
    everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything@2026.8.31'] },
    filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem@2026.8.31', files] },
    memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory@2026.8.31'], env: { MEMORY_FILE_PATH: path.join(work, 'memory.jsonl') } },
    'everything-http': { type: 'http', url },
  },
}, null, 2))
// A config with problems for doctor: one of each kind it checks without a network.
const broken = path.join(work, 'broken.json')
fs.writeFileSync(broken, JSON.stringify({
  mcpServers: {
    github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_' + 'x'.repeat(36) } },
    missing: { command: 'mcp-server-that-is-not-installed' },
    vault: { command: process.execPath, args: [path.join(ROOT, 'examples', 'echo-server.mjs')], env: { API_KEY: 'secret://env/MCP_NATIVE_TRANSCRIPT_UNSET' } },
    refused: { type: 'http', url: 'http://127.0.0.1:9/mcp' },
  },
}, null, 2))

// openclaw sync: the OpenClaw plugin's tool declaration, for an openclaw.json of the example and
// server-everything over HTTP, into a copy of the plugin's manifest; then again after a change.
async function openclawSyncSection() {
  const dir = path.join(work, 'plugin')
  fs.mkdirSync(dir)
  fs.copyFileSync(path.join(ROOT, 'openclaw.plugin.json'), path.join(dir, 'openclaw.plugin.json'))
  const openclawJson = path.join(work, 'openclaw.json')
  const write = (echo) => fs.writeFileSync(openclawJson, JSON.stringify({
    tools: { deny: ['bundle-mcp'], alsoAllow: ['mcp-native'] },
    mcp: { servers: { echo, web: { url, transport: 'streamable-http' } } },
  }, null, 2))
  const echo = { command: process.execPath, args: [path.join(ROOT, 'examples', 'echo-server.mjs')] }
  write(echo)
  let out = `\n## openclaw sync: declare the OpenClaw plugin's tools\n\nOpenClaw offers a plugin's tool only when its name is in the plugin's \`contracts.tools\`\n([integration.md](integration.md#use-it-in-openclaw-the-plugin)). An openclaw.json with the example and\nserver-everything over HTTP, \`--plugin-dir\` a copy of the plugin's directory; then the same after the\nexample's \`add\` is filtered out (\`toolFilter\`):\n`
  for (const args of [['openclaw', 'sync', '--config', openclawJson, '--plugin-dir', dir], null, ['openclaw', 'sync', '--config', openclawJson, '--plugin-dir', dir]]) {
    if (!args) {
      write({ ...echo, toolFilter: { exclude: ['add'] } })
      continue
    }
    const r = spawnSync('sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, COLUMNS: '100', HOME: work, OPENCLAW_STATE_DIR: path.join(work, 'state') }, timeout: 120_000 })
    out += `\n\`\`\`console\n$ ${shown(['openclaw-mcp-native', ...args].join(' '))}\n${shown(r.stdout || '').trimEnd()}\n[exit ${r.status}]\n\`\`\`\n`
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'openclaw.plugin.json'), 'utf8'))
  out += `\nThe manifest's \`contracts.tools\` afterwards: ${manifest.contracts.tools.map((t) => `\`${t}\``).join(', ')}.\n`
  return out
}

const shown = (p) => p.split(work).join('/tmp/demo').split(ROOT).join('.').split(String(port)).join('PORT')
const runs = [
  ['The built-in example', []],
  ['', ['status']],
  ['', ['tools']],
  ['', ['call', 'mcp_example_add', '--args', '{"a":40,"b":2}']],
  ['', ['probe', 'example']],
  ['', ['resources']],
  ['', ['doctor', '--offline']],
  ['A Claude Desktop config of real servers', ['status', '--config', config]],
  ['', ['tools', 'memory', '--config', config]],
  ['', ['tools', 'everything', '--config', config, '--full']],
  ['', ['call', 'mcp_everything_trigger-long-running-operation', '--args', '{"duration":1,"steps":4}', '--config', config]],
  ['', ['call', 'mcp_filesystem_read_text_file', '--args', JSON.stringify({ path: path.join(files, 'notes.txt') }), '--config', config]],
  ['', ['prompts', '--config', config]],
  ['', ['resources', '--config', config, '--json']],
  ['', ['probe', 'everything-http', '--config', config]],
  ['', ['probe', 'filesystem', '--config', config, '--json']],
  ['', ['doctor', '--config', config]],
  ['', ['import', config, '--to', 'openclaw']],
  ['A config with problems', ['doctor', '--config', broken, '--timeout', '10s']],
  ['Errors name the flag or file they come from', ['call', 'mcp_example_echo', '--args', '{text: hi}']],
  ['', ['status', '--config', path.join(work, 'nope.json')]],
]

let md = `# The command-line tool: a transcript

Every subcommand of \`openclaw-mcp-native\` (\`bin/mcp-native.js\`; \`login\`/\`logout\` need an OAuth server, see
[oauth.md](oauth.md)), run on the built-in example and
on a Claude Desktop config of real servers: \`@modelcontextprotocol/server-everything\`,
\`server-filesystem\` and \`server-memory\` over stdio (through \`npx\`, versions pinned), and
server-everything over Streamable HTTP on 127.0.0.1. Written by \`node scripts/cli-transcript.mjs\`
(${new Date().toISOString().slice(0, 10)}); stdout and stderr together, in the order written (not a TTY here,
so the start display prints one plain line per server; on a terminal it redraws one line per server). Temporary paths read \`/tmp/demo\`, the port \`PORT\`.

The config of real servers:

\`\`\`json
${shown(fs.readFileSync(config, 'utf8'))}
\`\`\`
`
for (const [title, args] of runs) {
  if (title) md += `\n## ${title}\n`
  // stdout and stderr through one pipe, so they read in the order they were written.
  const r = spawnSync('sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, COLUMNS: '100' }, timeout: 120_000 })
  const cmd = ['openclaw-mcp-native', ...args.map((a) => (/^[\w./:@=-]+$/.test(a) ? a : `'${a}'`))].join(' ')
  md += `\n\`\`\`console\n$ ${shown(cmd)}\n${shown(r.stdout || '').trimEnd()}\n[exit ${r.status}]\n\`\`\`\n`
}

// serve: the real servers as one MCP server over Streamable HTTP, and an MCP client (the
// TypeScript SDK v1 driver of the tests) listing and calling through it; then the built-in
// example served with the gateway's options.
async function serveThrough(serveArgs, call) {
  const gateway = spawn(process.execPath, [CLI, ...serveArgs], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, COLUMNS: '100' } })
  let out = ''
  let err = ''
  gateway.stderr.on('data', (d) => (err += d))
  const url = await new Promise((resolve, reject) => {
    gateway.stdout.on('data', (d) => {
      out += d
      const m = /^(http:\/\/\S+)$/m.exec(out)
      if (m) resolve(m[1])
    })
    gateway.on('exit', (code) => reject(new Error(`serve exited (${code}): ${err}`)))
  })
  const script = { connect: { url }, steps: [{ op: 'listTools' }, { op: 'callTool', ...call }] }
  const driver = path.join(ROOT, '__test__', 'fixtures', 'clients', 'sdk-v1-client.mjs')
  const r = spawnSync(process.execPath, [driver, JSON.stringify(script)], { encoding: 'utf8', timeout: 60_000 })
  const lines = (r.stdout || '').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  const listed = lines.find((l) => l.op === 'listTools')
  const called = lines.find((l) => l.op === 'callTool')
  const stopped = new Promise((resolve) => gateway.on('exit', (code) => resolve(code)))
  gateway.kill('SIGTERM')
  const code = await stopped
  const anyPort = (text) => shown(text).replace(/127\.0\.0\.1:\d+\/mcp/g, '127.0.0.1:PORT/mcp')
  const shownArgs = serveArgs.map((a) => (/^[\w./:@=,-]+$/.test(a) ? a : `'${a}'`)).join(' ')
  const transcript = `\n\`\`\`console\n$ openclaw-mcp-native ${shown(shownArgs)}\n${anyPort(err + out).trimEnd()}\n[exit ${code}]\n\`\`\`\n`
  return { listed, called, transcript }
}
{
  const { listed, called, transcript } = await serveThrough(['serve', '--http', '0', '--config', config], { name: 'mcp_memory_read_graph', args: {} })
  md += `\n## serve: every server's tools as one MCP server\n\nThe gateway over Streamable HTTP, and an MCP client (the TypeScript SDK v1) talking to it\n(\`__test__/fixtures/clients/sdk-v1-client.mjs\`): it lists ${listed.result.tools.length} tools under the manager's names and\ncalls one; the result comes wrapped as untrusted content. Stopped with SIGTERM.\n`
  md += transcript
  md += `\nThe client's view: ${shown(listed.result.tools.slice(0, 4).map((t) => t.name).join(', '))}, … and the call's result:\n\n\`\`\`text\n${shown(called.result.content[0].text)}\n\`\`\`\n`
}
{
  const serveArgs = ['serve', '--http', '0', '--names', 'upstream', '--no-wrap', '--deny', '*_current_time']
  const { listed, called, transcript } = await serveThrough(serveArgs, { name: 'echo', args: { text: 'as the server sent it' } })
  md += `\n## serve with the gateway's options\n\nThe built-in example served under its own tool names (\`--names upstream\`), each result as the\nserver sent it (\`--no-wrap\`), one tool left out (\`--deny\` on the agent name); \`--servers\`,\n\`--allow\`, \`--results\`, \`--schemas\` and \`--limits\` work the same way (\`serve --help\`).\n`
  md += transcript
  md += `\nThe client's view: ${shown(listed.result.tools.map((t) => t.name).join(', '))}; the call's result: \`${shown(JSON.stringify(called.result.content))}\`\n`
}
md += await openclawSyncSection()
http.kill()
fs.rmSync(work, { recursive: true, force: true })
fs.writeFileSync(OUT, md)
console.log(`wrote ${OUT}`)
