'use strict'
// `openclaw-mcp-native openclaw sync` (and `openclaw mcp-native sync`): starts the servers the
// plugin would run for an openclaw.json, and writes every agent's tool names into the plugin's
// manifest (`contracts.tools`) and their definitions into openclaw.tools.json. Says, per server,
// what changed since the last sync.

const path = require('node:path')
const { McpManager } = require('..')
const { DATA_DIR, managerOptionsFor, resolvePluginSetup } = require('./config')
const { readSyncState, writeSyncState, hashTools } = require('./sync-state')

const TOOL_CACHE = path.join(DATA_DIR, 'tools')

/**
 * Syncs `pluginDir` for `openclawJson`. Options: `logger`, `cached` (take a server's tools from
 * the tool cache when it has them, without starting it), `timeoutMs` (each server's start).
 * Resolves `{ names, added, servers: [{ server, status, tools, change }], manifestPath, syncPath, failed }`
 * (`added`: how many names were not declared before)
 * where `change` is 'new', 'changed' (with `added`, `removed`), 'unchanged', 'gone', or 'kept'
 * (the server did not start: what the last sync saw of it is kept).
 */
async function syncPlugin(openclawJson, pluginDir, { logger, cached = false, timeoutMs, oauthDir } = {}) {
  const setup = resolvePluginSetup(openclawJson)
  const config = { servers: {} }
  for (const [name, server] of Object.entries(setup.config.servers)) {
    const s = { ...server }
    delete s.idleTimeoutMs
    if (cached) s.lazy = true
    if (timeoutMs !== undefined) s.timeout = Math.min(s.timeout ?? Infinity, timeoutMs)
    config.servers[name] = s
  }
  const manager = new McpManager(config, managerOptionsFor(setup, logger, { oauthDir }))
  const before = readSyncState(pluginDir)
  try {
    await manager.start()
    const status = new Map(manager.getStatus().map((s) => [s.name, s]))
    const agents = {}
    const names = new Set()
    const byServer = new Map()
    for (const [agent, servers] of Object.entries(setup.views)) {
      const view = manager.view({ servers, toolNames: setup.options.toolNames })
      const owner = new Map()
      for (const server of servers) {
        const own = manager.view({ servers: [server], toolNames: setup.options.toolNames })
        // A view names over its own servers; map each of this view's tools to its server
        // through the label (`MCP: <server>/<tool>`) the manager gives every tool.
        for (const t of own.getAgentTools()) owner.set(t.label, server)
      }
      agents[agent] = view.getAgentTools().map((t) => {
        names.add(t.name)
        const server = owner.get(t.label) ?? serverOfLabel(t.label)
        const def = { name: t.name, label: t.label, description: t.description, parameters: t.parameters, server }
        if (!byServer.has(server)) byServer.set(server, new Map())
        byServer.get(server).set(t.name, def)
        return def
      })
    }
    // A server that did not start keeps what the last sync saw of it (its tools stay declared).
    const kept = new Set()
    for (const [name, s] of status) {
      if (s.status === 'ready' || !before.servers[name]) continue
      kept.add(name)
      for (const [agent, servers] of Object.entries(setup.views)) {
        if (!servers.includes(name)) continue
        for (const def of before.agents[agent] ?? before.agents['*'] ?? []) {
          if (def.server !== name) continue
          agents[agent].push(def)
          names.add(def.name)
          if (!byServer.has(name)) byServer.set(name, new Map())
          byServer.get(name).set(def.name, def)
        }
      }
    }
    const servers = {}
    const report = []
    for (const name of Object.keys(setup.config.servers)) {
      const defs = [...(byServer.get(name)?.values() ?? [])]
      const s = status.get(name)
      if (kept.has(name)) {
        servers[name] = before.servers[name]
        report.push({ server: name, status: s?.status ?? 'disconnected', tools: defs.length, change: 'kept' })
        continue
      }
      const entry = { hash: hashTools(defs), tools: defs.map((d) => d.name) }
      servers[name] = entry
      const prev = before.servers[name]
      let change
      if (!prev) change = { change: 'new' }
      else if (prev.hash === entry.hash) change = { change: 'unchanged' }
      else {
        const was = new Set(prev.tools ?? [])
        const now = new Set(entry.tools)
        change = {
          change: 'changed',
          added: entry.tools.filter((t) => !was.has(t)),
          removed: [...was].filter((t) => !now.has(t)),
        }
      }
      report.push({ server: name, status: s?.status ?? 'disconnected', tools: entry.tools.length, ...change })
    }
    for (const name of Object.keys(before.servers)) {
      if (!(name in servers)) report.push({ server: name, status: 'removed', tools: 0, change: 'gone' })
    }
    const failed = report.filter((r) => r.status !== 'ready' && r.status !== 'removed').map((r) => r.server)
    const sorted = [...names].sort()
    const had = new Set(before.declared)
    const added = sorted.filter((n) => !had.has(n)).length
    const written = writeSyncState(pluginDir, { names: sorted, agents, servers })
    return { names: sorted, added, servers: report, failed, ...written }
  } finally {
    await manager.shutdown()
  }
}

function serverOfLabel(label) {
  const m = /^MCP: (.*)\/[^/]*$/.exec(label ?? '')
  return m ? m[1] : undefined
}

module.exports = { syncPlugin, TOOL_CACHE }
