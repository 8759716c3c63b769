'use strict'
// `doctor`: the config checked (doctorMcpConfig), then every server started and pinged; each
// problem printed once with its fix; the exit status says how bad the worst one is.

const native = require('../../..')
const { ConfigError, loadConfig } = require('../config')
const { oneLine, printJson } = require('../output')
const { startServers } = require('../session')
const { toolsByServer } = require('../tools')

/** Findings that already explain why a server could not start: no second "failed to start". */
const EXPLAINS_START = new Set(['command-not-found', 'url-unreachable', 'tls-failure', 'secret-unresolved', 'invalid-url'])
const RANK = { error: 2, warning: 1, info: 0 }

async function doctor(ctx) {
  const { flags } = ctx
  const offline = Boolean(flags['--offline'])
  let loaded
  try {
    loaded = loadConfig(flags)
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e
    return report(ctx, [{ severity: 'error', code: 'config-invalid', message: e.message, fix: 'fix the file (the message names the place), then run doctor again' }])
  }
  const input = loaded.json !== undefined ? loaded.json : loaded.config
  const options = { agent: flags['--agent'], shape: flags['--shape'], network: !offline, timeoutMs: flags['--timeout'] }
  const findings = await native.doctorMcpConfig(input, options)
  if (offline) return report(ctx, findings)

  const config = { ...loaded.config, servers: {} }
  for (const [name, server] of Object.entries(loaded.config.servers || {})) {
    // One attempt each: a server that fails is reported once, not once per restart.
    config.servers[name] = { ...server, restartOnCrash: false }
  }
  // Its findings say what the manager's warnings and errors would: each is reported once there.
  ctx.logger.reportOnly = true
  const { manager } = await startServers(ctx, config)
  try {
    const explained = new Set(findings.filter((f) => f.server && EXPLAINS_START.has(f.code)).map((f) => f.server))
    const metrics = manager.getMetrics()
    for (const s of manager.getStatus()) {
      if (s.status === 'ready') {
        if (s.running === false) continue
        try {
          await manager.ping(s.name)
        } catch (e) {
          findings.push({ severity: 'error', code: 'ping-failed', server: s.name, message: `'${s.name}' started but did not answer a ping: ${e.message}`, fix: `run 'openclaw-mcp-native probe ${s.name} --verbose' to see what it writes` })
        }
        continue
      }
      if (explained.has(s.name)) continue
      const m = metrics.find((x) => x.server === s.name) || {}
      const tail = ctx.logger.stderrOf(s.name)
      findings.push({
        severity: 'error',
        code: 'server-failed',
        server: s.name,
        message: `'${s.name}' did not start: ${m.lastError || s.status}${tail.length ? ` (its last stderr line: ${oneLine(tail[tail.length - 1], 200)})` : ''}`,
        fix: `run 'openclaw-mcp-native probe ${s.name} --verbose' to see each step and everything it writes to stderr`,
      })
    }
    const tools = {}
    for (const g of toolsByServer(manager)) if (g.tools.length) tools[g.server] = g.tools.map((t) => t.own)
    if (Object.keys(tools).length) {
      const named = await native.doctorMcpConfig(input, { ...options, network: false, tools, toolNames: flags['--tool-names'] })
      findings.push(...named.filter((f) => f.code.startsWith('tool-name-')))
    }
  } finally {
    await manager.shutdown()
  }
  return report(ctx, findings)
}

function report(ctx, findings) {
  const worst = Math.max(-1, ...findings.map((f) => RANK[f.severity] ?? 0))
  if (ctx.flags['--json']) printJson(findings)
  else {
    if (findings.length === 0) console.log('No problems found.')
    for (const f of findings) {
      const where = [f.server, f.field].filter(Boolean).join(': ')
      console.log(`${f.severity.padEnd(7)} ${f.code}${where ? `  (${where})` : ''}`)
      console.log(`        ${f.message}`)
      if (f.fix) console.log(`        fix: ${f.fix}`)
    }
    const count = (s) => findings.filter((f) => f.severity === s).length
    if (findings.length) console.log(`\n${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} note(s)`)
  }
  return worst === 2 ? 2 : worst === 1 ? 1 : 0
}

module.exports = { doctor }
