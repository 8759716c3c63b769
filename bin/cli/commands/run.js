'use strict'
// No command: start the servers, print their status and agent tools, optionally call one tool.
// This is what the tool always did; its output is unchanged apart from descriptions on one line.

const { callAndPrint, callArguments } = require('../call')
const { loadConfig } = require('../config')
const { firstLine, oneLine, printJson, table, terminalWidth } = require('../output')
const { startServers } = require('../session')

async function run(ctx) {
  const { flags } = ctx
  const loaded = loadConfig(flags)
  let callName = flags['--call'] || null
  let fallbackArgs = '{}'
  if (!loaded.source && !callName && !flags['--no-call']) {
    callName = 'mcp_example_echo'
    fallbackArgs = JSON.stringify({ text: 'Hello from the built-in example MCP server' })
  }
  if (flags['--no-call'] && flags['--call']) throw new ctx.UsageError('--call and --no-call cannot be used together')
  for (const f of ['--args', '--args-file']) {
    if (flags[f] !== undefined && !flags['--call']) throw new ctx.UsageError(`${f} needs --call TOOL (or use: call TOOL ${f} …)`)
  }
  const args = callName ? callArguments(flags, fallbackArgs) : null
  if (loaded.source && !flags['--json']) console.log(`Config: ${loaded.source} (${loaded.shape})`)
  for (const w of loaded.warnings) ctx.logger.warn(w)

  const { manager } = await startServers(ctx, loaded.config, callName ? { results: 'rich' } : {})
  let code = 0
  try {
    const status = manager.getStatus()
    const tools = manager.getAgentTools()
    if (status.some((s) => s.status !== 'ready')) code = 1
    if (flags['--json'] && !callName) {
      printJson({ servers: status.map((s) => ({ ...s, auth: s.auth })), tools: tools.map((t) => ({ name: t.name, description: t.description })) })
      return code
    }
    if (!flags['--json']) {
      console.log('MCP servers')
      const withAuth = status.some((s) => s.auth)
      const header = withAuth ? ['server', 'status', 'tools', 'auth'] : ['server', 'status', 'tools']
      const row = (s) => (withAuth ? [s.name, s.status, s.toolCount, s.auth || '-'] : [s.name, s.status, s.toolCount])
      console.log(table([header, ...status.map(row)]))
      console.log(`\nAgent tools (${tools.length})`)
      const width = terminalWidth()
      for (const tool of tools) {
        const line = `  ${tool.name}  `
        console.log(line + oneLine(firstLine(tool.description), Math.max(10, width - line.length)))
      }
    }
    if (callName) code = Math.max(code, await callAndPrint(ctx, manager, callName, args))
    return code
  } finally {
    await manager.shutdown()
  }
}

module.exports = { run }
