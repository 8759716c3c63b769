'use strict'
// `serve`: the configured servers' agent tools as one MCP server (manager.serve()), over this
// process's stdin/stdout or Streamable HTTP. stdout belongs to the protocol (stdio) or carries
// only the URL (HTTP); everything else goes to stderr.

const { loadConfig } = require('../config')
const { gatewayOptions, checkServers } = require('../gateway-options')
const { startServers } = require('../session')

async function serve(ctx) {
  const { flags } = ctx
  const options = gatewayOptions(flags, ctx.UsageError)
  const loaded = loadConfig(flags)
  checkServers(options.servers, loaded.config, ctx.UsageError)
  for (const w of loaded.warnings) ctx.logger.warn(w)
  let http
  if (flags['--http'] !== undefined) {
    const port = Number(flags['--http'])
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ctx.UsageError(`--http: expected a port number (0 for a free one), got '${flags['--http']}'`)
    http = { transport: 'http', port, ...(flags['--host'] ? { host: flags['--host'] } : {}), ...(flags['--stateless'] ? { stateless: true } : {}) }
  } else if (flags['--host'] !== undefined || flags['--stateless']) {
    throw new ctx.UsageError(`${flags['--host'] !== undefined ? '--host' : '--stateless'} needs --http PORT`)
  }
  const { manager } = await startServers(ctx, loaded.config, options.manager)
  const view = options.serve.view ? manager.view(options.serve.view) : manager
  const tools = view.getAgentTools().length
  if (!http) {
    if (!flags['--quiet']) process.stderr.write(`Serving ${tools} tool${tools === 1 ? '' : 's'} over stdio\n`)
    try {
      await manager.serve({ transport: 'stdio', ...options.serve })
    } finally {
      await manager.shutdown()
    }
    return 0
  }
  let gateway
  try {
    gateway = await manager.serve({ ...http, ...options.serve })
  } catch (e) {
    await manager.shutdown()
    process.stderr.write(`openclaw-mcp-native: ${e.message}\n`)
    return 1
  }
  process.stdout.write(`${gateway.url}\n`)
  if (!flags['--quiet']) process.stderr.write(`Serving ${tools} tool${tools === 1 ? '' : 's'} at ${gateway.url} (Ctrl-C stops)\n`)
  await new Promise((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await gateway.close()
  await manager.shutdown()
  return 0
}

module.exports = { serve }
