#!/usr/bin/env node
// The package's main job from a shell: load a config, start its MCP servers, print their status
// and the agent tools they offer, optionally call one tool and print the wrapped result, then shut
// everything down. With no --config it runs the built-in example server.
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { McpManager, inspectMcpConfig } = require('..')

const USAGE = `usage: openclaw-mcp-native [--config FILE] [--shape SHAPE] [--agent ID] [--call TOOL] [--args JSON]
                           [--tool-names compat|openclaw] [--no-call] [--verbose]

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
  --verbose      print every log line (debug included) to stderr

With no --config, runs the built-in example server (examples/echo-server.mjs) and calls its
echo tool.`

function parseArgs(argv) {
  const opts = { config: null, shape: undefined, agent: undefined, call: null, args: '{}', toolNames: undefined, noCall: false, verbose: false }
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
      case '--verbose': opts.verbose = true; break
      case '-h': case '--help': opts.help = true; break
      default: throw new Error(`unknown argument '${arg}'`)
    }
  }
  return opts
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
  const manager = new McpManager(config, { logger, toolNames: opts.toolNames })
  let exitCode = 0
  try {
    await manager.start()
    const status = manager.getStatus()
    console.log('MCP servers')
    console.log(table([['server', 'status', 'tools'], ...status.map((s) => [s.name, s.status, s.toolCount])]))
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
