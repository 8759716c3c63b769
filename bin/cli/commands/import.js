'use strict'
// `import FILE`: any config this package reads, printed as an McpConfig or an openclaw.json fragment.

const { inspectMcpConfig, validateMcpConfig } = require('../../..')
const { ConfigError, readJsonFile } = require('../config')
const { printJson } = require('../output')

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)

/** A server's entry without the values validation would fill in anyway. */
function withoutDefaults(server) {
  const minimal = server.command !== undefined ? { command: server.command } : { url: server.url, transport: server.transport }
  const checked = validateMcpConfig({ servers: { x: minimal } })
  if (!checked.success) return server
  const defaults = checked.data.servers.x
  const out = {}
  for (const [key, value] of Object.entries(server)) {
    if (!(key in minimal) && key in defaults && same(value, defaults[key])) continue
    out[key] = value
  }
  return out
}

async function importConfig(ctx) {
  const { flags, positional } = ctx
  const file = positional[0]
  const to = flags['--to'] || 'mcp'
  if (to !== 'mcp' && to !== 'openclaw') throw new ctx.UsageError(`--to: expected mcp or openclaw, got '${to}'`)
  const json = readJsonFile(file, 'import')
  let inspected
  try {
    inspected = inspectMcpConfig(json, { agent: flags['--agent'], shape: flags['--shape'] })
  } catch (e) {
    throw new ConfigError(`import ${file}: ${e.message}`)
  }
  const servers = {}
  for (const [name, server] of Object.entries(inspected.config.servers || {})) servers[name] = withoutDefaults(server)
  const mcp = { ...inspected.config, servers }
  for (const w of inspected.warnings) ctx.logger.warn(`${file}: ${w}`)
  if (!flags['--quiet']) process.stderr.write(`${file}: read as ${inspected.shape}, ${Object.keys(servers).length} server${Object.keys(servers).length === 1 ? '' : 's'}\n`)
  if (to === 'mcp') printJson(mcp)
  else if (flags['--agent'] !== undefined) printJson({ agents: { list: [{ id: flags['--agent'], mcp }] } })
  else printJson({ agents: { defaults: { mcp } } })
  return 0
}

module.exports = { importConfig }
