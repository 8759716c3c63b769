'use strict'
// `status`: one line per server with everything an operator asks first.

const { loadConfig } = require('../config')
const { duration, fitted, oneLine, printJson, table } = require('../output')
const { startServers } = require('../session')

/** getStatus() and getMetrics() of each server, merged; `config` and `startErrors` fill gaps. */
function serverRows(manager, config = { servers: {} }, startErrors = new Map()) {
  const metrics = typeof manager.getMetrics === 'function' ? manager.getMetrics() : []
  return manager.getStatus().map((s) => {
    const m = metrics.find((x) => x.server === s.name) || {}
    return {
      server: s.name,
      transport: s.transport ?? (config.servers[s.name] || {}).transport ?? null,
      protocolVersion: s.protocolVersion ?? null,
      status: s.status,
      running: s.running,
      tools: s.toolCount,
      restarts: m.restarts ?? 0,
      uptimeMs: m.uptimeMs ?? null,
      lastError: m.lastError ?? (s.status === 'ready' ? null : startErrors.get(s.name) ?? null),
      auth: s.auth ?? null,
    }
  })
}

async function status(ctx) {
  const { flags } = ctx
  const loaded = loadConfig(flags)
  for (const w of loaded.warnings) ctx.logger.warn(w)
  const { manager, startErrors } = await startServers(ctx, loaded.config)
  try {
    const rows = serverRows(manager, loaded.config, startErrors)
    if (flags['--json']) printJson(rows)
    else {
      const withAuth = rows.some((r) => r.auth)
      const header = ['server', 'transport', 'protocol', 'status', 'tools', 'restarts', 'uptime', ...(withAuth ? ['auth'] : []), 'last error']
      const body = rows.map((r) => [
        r.server,
        r.transport || '-',
        r.protocolVersion || '-',
        r.running === false && r.status === 'ready' ? 'ready (idle)' : r.status,
        r.tools,
        r.restarts,
        r.uptimeMs ? duration(r.uptimeMs) : '-',
        ...(withAuth ? [r.auth || '-'] : []),
        r.lastError ? oneLine(r.lastError) : '-',
      ])
      console.log(fitted(table([header, ...body])))
    }
    return rows.some((r) => r.status !== 'ready') ? 1 : 0
  } finally {
    await manager.shutdown()
  }
}

module.exports = { status, serverRows }
