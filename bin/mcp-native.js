#!/usr/bin/env node
// The package's main job from a shell: load a config, start its MCP servers, print their status
// and the agent tools they offer, optionally call one tool and print the wrapped result, then shut
// everything down. With no --config it runs the built-in example server.
'use strict'

const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const readline = require('node:readline')
const { McpManager, inspectMcpConfig } = require('..')

const USAGE = `usage: openclaw-mcp-native [--config FILE] [--shape SHAPE] [--agent ID] [--call TOOL] [--args JSON]
                           [--tool-names compat|openclaw] [--no-call] [--oauth-dir DIR] [--verbose]
       openclaw-mcp-native login SERVER --config FILE [--code] [--oauth-dir DIR]
       openclaw-mcp-native logout SERVER --config FILE [--oauth-dir DIR]

  --config FILE  any MCP config, its shape detected: an McpConfig ({"servers": {...}}), an
                 openclaw.json (agents.defaults.mcp merged with agents.list[].mcp of --agent, or
                 current OpenClaw's top-level mcp.servers), a Claude Desktop / Cursor / VS Code
                 mcpServers file, or an ACP session/new mcpServers array
  --shape SHAPE  skip detection: mcp, openclaw, openclaw-mcp, mcpServers or acp
  --agent ID     the agent whose servers to use, with an openclaw.json
  --tool-names S compat (mcp_<server>_<tool>, the default) or openclaw (<server>__<tool>)
  --call TOOL    call this agent tool (e.g. mcp_example_echo) and print the wrapped result
  --args JSON    the tool's arguments, a JSON object (default {})
  --no-call      with the built-in example: only list, call nothing
  --oauth-dir D  where OAuth tokens are kept (default ~/.openclaw/mcp-native/oauth; files
                 of mode 0600, one per authorization server and resource)
  --verbose      print every log line (debug included) to stderr

login SERVER   sign in to an OAuth server (auth in its config): prints the authorization URL,
               waits for the browser on the loopback redirect URI (auth.redirectUri, default
               http://127.0.0.1:8976/callback), stores the tokens; --code reads the callback URL
               or the code from stdin instead of listening
logout SERVER  delete the stored OAuth tokens of SERVER

With no --config, runs the built-in example server (examples/echo-server.mjs) and calls its
echo tool.`

function parseArgs(argv) {
  const opts = { config: null, shape: undefined, agent: undefined, call: null, args: '{}', toolNames: undefined, noCall: false, verbose: false, command: null, server: null, code: false, oauthDir: null }
  if (argv[0] === 'login' || argv[0] === 'logout') {
    opts.command = argv[0]
    if (!argv[1] || argv[1].startsWith('-')) throw new Error(`${argv[0]} needs the server's name`)
    opts.server = argv[1]
    argv = argv.slice(2)
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`)
      return argv[++i]
    }
    switch (arg) {
      case '--config': opts.config = value(); break
      case '--agent': opts.agent = value(); break
      case '--shape': opts.shape = value(); break
      case '--tool-names': opts.toolNames = value(); break
      case '--call': opts.call = value(); break
      case '--args': opts.args = value(); break
      case '--no-call': opts.noCall = true; break
      case '--code': opts.code = true; break
      case '--oauth-dir': opts.oauthDir = value(); break
      case '--verbose': opts.verbose = true; break
      case '-h': case '--help': opts.help = true; break
      default: throw new Error(`unknown argument '${arg}'`)
    }
  }
  if (opts.code && opts.command !== 'login') throw new Error('--code applies to login')
  if (opts.command && !opts.config) throw new Error(`${opts.command} needs --config`)
  return opts
}

function defaultOAuthDir() {
  return path.join(os.homedir(), '.openclaw', 'mcp-native', 'oauth')
}

/** `authorize` for `login`: the loopback listener on the redirect URI, or a pasted answer. */
function loginAuthorizer(redirectUri, pasted) {
  return async (url, { server }) => {
    console.error(`Open this URL in a browser to sign in to '${server}':\n\n  ${url}\n`)
    if (pasted) return readAnswer()
    const redirect = new URL(redirectUri)
    if (redirect.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(redirect.hostname)) {
      throw new Error(`the redirect URI ${redirectUri} is not a loopback http:// address; use --code`)
    }
    return listenForCallback(redirect)
  }
}

function readAnswer() {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
  return new Promise((resolve, reject) => {
    let answered = false
    rl.question('Paste the URL the browser was sent to (or the code): ', (answer) => {
      answered = true
      rl.close()
      // Nothing more is read; an open stdin pipe would keep the process alive.
      process.stdin.destroy()
      answer.trim() ? resolve(answer.trim()) : reject(new Error('no answer given'))
    })
    rl.on('close', () => answered || reject(new Error('stdin closed before an answer')))
  })
}

function listenForCallback(redirect) {
  return new Promise((resolve, reject) => {
    const server = http.createServer((req, res) => {
      const got = new URL(req.url, redirect)
      if (got.pathname !== redirect.pathname) {
        res.writeHead(404).end()
        return
      }
      const failed = got.searchParams.get('error')
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
      res.end(failed ? `Sign-in failed: ${failed}. You can close this window.\n` : 'Signed in. You can close this window.\n')
      server.close()
      failed ? reject(new Error(`the authorization server answered ${failed}`)) : resolve(got.href)
    })
    server.on('error', (e) => reject(new Error(`cannot listen on ${redirect.host}: ${e.message}`)))
    server.listen(Number(redirect.port || 80), redirect.hostname.replace(/^\[|\]$/g, ''))
  })
}

async function loginOrLogout(opts, config, logger) {
  const entry = config.servers && config.servers[opts.server]
  if (!entry) {
    console.error(`openclaw-mcp-native: ${opts.config} has no server named '${opts.server}'`)
    return 2
  }
  if (!entry.auth) {
    console.error(`openclaw-mcp-native: server '${opts.server}' has no auth (OAuth) in ${opts.config}`)
    return 2
  }
  const dir = opts.oauthDir || defaultOAuthDir()
  const redirectUri = (typeof entry.auth === 'object' && entry.auth.redirectUri) || 'http://127.0.0.1:8976/callback'
  // A person signs in within this start: ten minutes instead of the connect timeout.
  const single = { servers: { [opts.server]: { ...entry, enabled: true, timeout: 600000, restartOnCrash: false } } }
  const oauth = opts.command === 'login' ? { dir, authorize: loginAuthorizer(redirectUri, opts.code) } : { dir }
  const manager = new McpManager(single, { logger, oauth })
  try {
    if (opts.command === 'logout') {
      const had = await manager.logout(opts.server)
      console.log(had ? `Signed out of '${opts.server}': its tokens were deleted from ${dir}` : `No stored tokens for '${opts.server}' in ${dir}`)
      return 0
    }
    await manager.start()
    const [status] = manager.getStatus()
    if (status.status === 'ready') {
      console.log(`Signed in to '${opts.server}' (${status.toolCount} tools); tokens stored in ${dir}`)
      return 0
    }
    console.error(`openclaw-mcp-native: signing in to '${opts.server}' failed (see the error above)`)
    return 1
  } finally {
    await manager.shutdown()
  }
}

function builtInExample() {
  return {
    servers: {
      example: {
        command: process.execPath,
        args: [path.join(__dirname, '..', 'examples', 'echo-server.mjs')],
      },
    },
  }
}

function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)))
  return rows.map((r) => r.map((cell, c) => String(cell).padEnd(widths[c])).join('  ').trimEnd()).join('\n')
}

async function main() {
  let opts
  try {
    opts = parseArgs(process.argv.slice(2))
  } catch (e) {
    console.error(`openclaw-mcp-native: ${e.message}\n\n${USAGE}`)
    return 2
  }
  if (opts.help) {
    console.log(USAGE)
    return 0
  }

  let config
  let callName = opts.call
  let callArgs
  try {
    if (opts.config) {
      const text = fs.readFileSync(opts.config, 'utf8')
      let json
      try {
        json = JSON.parse(text)
      } catch (e) {
        throw new Error(`${opts.config} is not valid JSON: ${e.message}`)
      }
      const inspected = inspectMcpConfig(json, { agent: opts.agent, shape: opts.shape })
      config = inspected.config
      console.log(`Config: ${opts.config} (${inspected.shape})`)
      for (const warning of inspected.warnings) console.error(`[warn] ${warning}`)
    } else {
      config = builtInExample()
      if (!callName && !opts.noCall) {
        callName = 'mcp_example_echo'
        opts.args = JSON.stringify({ text: 'Hello from the built-in example MCP server' })
      }
    }
    callArgs = JSON.parse(opts.args)
    if (callArgs === null || typeof callArgs !== 'object' || Array.isArray(callArgs)) {
      throw new Error('--args must be a JSON object')
    }
  } catch (e) {
    console.error(`openclaw-mcp-native: ${e.message}`)
    return 2
  }

  const logger = {
    debug: (m) => opts.verbose && console.error(`[debug] ${m}`),
    info: (m) => opts.verbose && console.error(`[info] ${m}`),
    warn: (m) => console.error(`[warn] ${m}`),
    error: (m) => console.error(`[error] ${m}`),
  }
  if (opts.command) return loginOrLogout(opts, config, logger)
  const oauth = { dir: opts.oauthDir || defaultOAuthDir() }
  const manager = new McpManager(config, { logger, toolNames: opts.toolNames, oauth })
  let exitCode = 0
  try {
    await manager.start()
    const status = manager.getStatus()
    console.log('MCP servers')
    const withAuth = status.some((s) => s.auth)
    const header = withAuth ? ['server', 'status', 'tools', 'auth'] : ['server', 'status', 'tools']
    const row = (s) => (withAuth ? [s.name, s.status, s.toolCount, s.auth || '-'] : [s.name, s.status, s.toolCount])
    console.log(table([header, ...status.map(row)]))
    const tools = manager.getAgentTools()
    console.log(`\nAgent tools (${tools.length})`)
    for (const tool of tools) console.log(`  ${tool.name}  ${tool.description}`)
    if (status.some((s) => s.status !== 'ready')) exitCode = 1

    if (callName) {
      const tool = tools.find((t) => t.name === callName)
      if (!tool) {
        console.error(`\nopenclaw-mcp-native: no agent tool named '${callName}'`)
        exitCode = 1
      } else {
        console.log(`\nCalling ${callName} ${JSON.stringify(callArgs)}\n`)
        const result = await tool.execute('cli-call', callArgs)
        for (const part of result.content) console.log(part.text)
        if (result.details && result.details.error) exitCode = 1
      }
    }
  } finally {
    await manager.shutdown()
  }
  return exitCode
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (e) => {
    console.error(`openclaw-mcp-native: ${e && e.message ? e.message : e}`)
    process.exitCode = 1
  },
)
