'use strict'
// `probe SERVER`: start one server alone and time each step of getting it ready.

const { loadConfig, singleServer } = require('../config')
const { duration, oneLine, printJson, table } = require('../output')
const { startServers } = require('../session')

async function probe(ctx) {
  const { flags, positional } = ctx
  const name = positional[0]
  const loaded = loadConfig(flags)
  const config = singleServer(loaded.config, name)
  for (const w of loaded.warnings) ctx.logger.warn(w)
  const began = performance.now()
  const { manager } = await startServers(ctx, config)
  const startMs = performance.now() - began
  try {
    const [s] = manager.getStatus()
    const [m] = typeof manager.getMetrics === 'function' ? manager.getMetrics() : [{}]
    const startup = (m && m.startup) || {}
    const report = {
      server: name,
      transport: s.transport ?? null,
      protocolVersion: s.protocolVersion ?? null,
      status: s.status,
      tools: s.toolCount,
      steps: { connectMs: startup.connectMs ?? null, initializeMs: startup.initializeMs ?? null, listMs: startup.listMs ?? null, pingMs: null },
      startMs,
      error: s.status === 'ready' ? null : (m && m.lastError) || `status ${s.status}`,
    }
    if (s.status === 'ready') {
      try {
        report.steps.pingMs = await manager.ping(name)
      } catch (e) {
        report.error = `ping failed: ${e.message}`
      }
    }
    if (flags['--json']) printJson(report)
    else {
      const rows = [
        ['connect', duration(report.steps.connectMs), s.transport || ''],
        ['initialize', duration(report.steps.initializeMs), report.protocolVersion ? `protocol ${report.protocolVersion}` : ''],
        ['tools/list', duration(report.steps.listMs), s.status === 'ready' ? `${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}` : ''],
        ['ping', duration(report.steps.pingMs), ''],
        ['total', duration(startMs + (report.steps.pingMs || 0)), ''],
      ]
      console.log(`probe ${name}: ${report.error ? 'failed' : 'ok'}`)
      console.log(table(rows).split('\n').map((l) => `  ${l}`).join('\n'))
      if (report.error) console.log(`  error: ${oneLine(report.error)}`)
    }
    return report.error ? 1 : 0
  } finally {
    await manager.shutdown()
  }
}

module.exports = { probe }
