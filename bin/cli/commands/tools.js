'use strict'
// `tools [SERVER]`: one line per agent tool, or with --full each tool's whole text and schema.

const { loadConfig } = require('../config')
const { firstLine, oneLine, safe, printJson, terminalWidth } = require('../output')
const { startServers } = require('../session')
const { toolsByServer } = require('../tools')

async function tools(ctx) {
  const { flags, positional } = ctx
  const only = positional[0]
  const loaded = loadConfig(flags)
  if (only !== undefined && !(loaded.config.servers && only in loaded.config.servers)) {
    throw new ctx.ConfigError(`no server named '${only}' in the config (servers: ${Object.keys(loaded.config.servers || {}).join(', ')})`)
  }
  for (const w of loaded.warnings) ctx.logger.warn(w)
  const { manager } = await startServers(ctx, loaded.config)
  try {
    const groups = toolsByServer(manager).filter((g) => only === undefined || g.server === only)
    const notReady = manager.getStatus().filter((s) => s.status !== 'ready' && groups.some((g) => g.server === s.name))
    if (flags['--json']) {
      printJson(groups.flatMap((g) => g.tools.map(({ tool, own }) => ({
        server: g.server, tool: own, name: tool.name, description: tool.description, ...(flags['--full'] ? { parameters: tool.parameters } : {}),
      }))))
    } else {
      const width = terminalWidth()
      const rows = groups.flatMap((g) => g.tools)
      const nameWidth = Math.min(48, Math.max(0, ...rows.map(({ tool }) => tool.name.length)))
      for (const g of groups) {
        if (flags['--full']) {
          for (const { tool, own } of g.tools) {
            console.log(`${tool.name}  (${g.server}: ${own})`)
            for (const line of safe(tool.description).split('\n')) console.log(`  ${line}`)
            console.log('  input schema:')
            for (const line of JSON.stringify(tool.parameters, null, 2).split('\n')) console.log(`    ${line}`)
            console.log('')
          }
          continue
        }
        for (const { tool } of g.tools) {
          const name = tool.name.padEnd(nameWidth)
          console.log(`${name}  ${oneLine(firstLine(tool.description), Math.max(10, width - name.length - 2))}`)
        }
      }
      const count = rows.length
      if (!flags['--quiet']) process.stderr.write(`${count} tool${count === 1 ? '' : 's'} from ${groups.length - notReady.length} ready server${groups.length - notReady.length === 1 ? '' : 's'}\n`)
    }
    return notReady.length ? 1 : 0
  } finally {
    await manager.shutdown()
  }
}

module.exports = { tools }
