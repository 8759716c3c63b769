'use strict'
// Which MCP servers the OpenClaw plugin runs and what each agent sees, from an openclaw.json
// (already parsed) and the plugin's own config (`plugins.entries.mcp-native.config`). Shared by
// the plugin (openclaw/plugin.js) and `openclaw-mcp-native openclaw sync`, so both compute the
// same servers, views and tool names. Only the package's public API is used.
//
// Servers:
//   - the plugin config's `servers` (bundle-mcp's `mcp.servers` shape) when given, else OpenClaw's
//     own top-level `mcp.servers` (what bundle-mcp reads): every agent sees them;
//   - the plugin config's `agents` (PR #21530's shape: `defaults.mcp.servers` and
//     `list[].mcp.servers`; OpenClaw 2026.9.x's own schema has no per-agent `mcp`): per agent,
//     merged and shared through `sharedManagerConfigForOpenclaw` (one process per distinct
//     definition however many agents use it).
// Resources and prompts are offered as tools, as bundle-mcp does (`resourceTools`, `promptTools`).
// `mcp.sessionIdleTtlMs` (bundle-mcp's idle eviction) becomes each server's `idleTimeoutMs`
// unless the plugin config or the server sets one.

const os = require('node:os')
const path = require('node:path')
const { nativePackage } = require('./native')

const PLUGIN_ID = 'mcp-native'
/** The view of an agent that `agents.list` does not name. */
const DEFAULT_AGENT = '*'

class PluginConfigError extends Error {}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** The plugin's config (`plugins.entries.mcp-native.config`) of an openclaw.json, or {}. */
function pluginConfigOf(openclawJson) {
  const entry = openclawJson?.plugins?.entries?.[PLUGIN_ID]
  return isObject(entry?.config) ? entry.config : {}
}

/**
 * `{ config, views, options, fingerprint, warnings }`:
 *   config       the McpConfig of every server the plugin runs (validated, defaults filled in)
 *   views        { [agentId | '*']: string[] } the server keys each agent sees ('*': any other)
 *   options      the McpManagerOptions the config asks for (without logger and callbacks)
 *   fingerprint  a string that changes when any of the above does
 *   warnings     what the mapping of the servers ignored, each naming its place
 * Throws a PluginConfigError naming the place and the problem.
 */
function resolvePluginSetup(openclawJson, pluginConfig = pluginConfigOf(openclawJson)) {
  const cfg = isObject(openclawJson) ? openclawJson : {}
  const pc = isObject(pluginConfig) ? pluginConfig : {}
  const where = pc.servers !== undefined ? `plugins.entries.${PLUGIN_ID}.config.servers` : 'mcp.servers'
  const rawServers = pc.servers !== undefined ? pc.servers : cfg.mcp?.servers
  if (rawServers !== undefined && !isObject(rawServers)) {
    throw new PluginConfigError(`${where}: must be an object of server definitions`)
  }

  const servers = {}
  const everyone = []
  const warnings = []
  if (rawServers && Object.keys(rawServers).length > 0) {
    let loaded
    try {
      const inspected = nativePackage().inspectMcpConfig({ mcp: { servers: rawServers } }, { shape: 'openclaw-mcp' })
      loaded = inspected.config
      // What the mapping left out (e.g. bundle-mcp's `oauth.scope`), named with its place.
      for (const w of inspected.warnings) warnings.push(pc.servers !== undefined ? `plugins.entries.${PLUGIN_ID}.config.servers${w.replace(/^mcp\.servers/, '')}` : w)
    } catch (e) {
      throw new PluginConfigError(`${where}: ${e.message}`)
    }
    for (const [name, server] of Object.entries(loaded.servers ?? {})) {
      // bundle-mcp offers a server's resources and prompts as tools (`<server>__resources_list`,
      // `…__resources_read`, `…__prompts_list`, `…__prompts_get`); so does the plugin.
      if (server.resourceTools === undefined) server.resourceTools = true
      if (server.promptTools === undefined) server.promptTools = true
      servers[name] = server
      everyone.push(name)
    }
  }

  const views = { [DEFAULT_AGENT]: [...everyone] }
  if (pc.agents !== undefined) {
    if (!isObject(pc.agents)) throw new PluginConfigError(`plugins.entries.${PLUGIN_ID}.config.agents: must be an object ({ defaults?, list? })`)
    let shared
    let defaults
    try {
      shared = nativePackage().sharedManagerConfigForOpenclaw({ agents: pc.agents })
      defaults = pc.agents.defaults?.mcp
        ? nativePackage().loadMcpConfig({ agents: { defaults: pc.agents.defaults } }, { shape: 'openclaw' })
        : { servers: {} }
    } catch (e) {
      throw new PluginConfigError(`plugins.entries.${PLUGIN_ID}.config.agents: ${e.message}`)
    }
    for (const [name, server] of Object.entries(shared.config.servers ?? {})) {
      if (servers[name] !== undefined) {
        throw new PluginConfigError(
          `plugins.entries.${PLUGIN_ID}.config.agents: server '${name}' is also defined in ${where}; give one of them another name`,
        )
      }
      servers[name] = server
    }
    for (const { agent, view } of shared.agents) views[agent] = [...everyone, ...view.servers]
    views[DEFAULT_AGENT] = [...everyone, ...Object.keys(defaults.servers ?? {})]
  }

  const idle = pc.idleTimeoutMs ?? positive(cfg.mcp?.sessionIdleTtlMs)
  if (idle !== undefined) {
    if (typeof idle !== 'number' || !(idle > 0)) throw new PluginConfigError(`plugins.entries.${PLUGIN_ID}.config.idleTimeoutMs: must be a positive number of ms`)
    for (const server of Object.values(servers)) {
      if (server.idleTimeoutMs === undefined) server.idleTimeoutMs = Math.floor(idle)
    }
  }

  const options = { toolNames: pc.toolNames ?? 'openclaw' }
  for (const key of ['results', 'detection', 'detectionModel', 'onSuspicious', 'pinning', 'schemas', 'hygiene', 'allow', 'deny', 'wrapFormat']) {
    if (pc[key] !== undefined) options[key] = pc[key]
  }
  if (isObject(cfg.secrets?.providers)) options.secretProviders = cfg.secrets.providers

  const config = { servers }
  try {
    const checked = nativePackage().validateMcpConfig(config)
    if (!checked.success) throw new Error(checked.error)
  } catch (e) {
    throw new PluginConfigError(`${where}: ${e.message}`)
  }
  const fingerprint = JSON.stringify({ config, views, options })
  return { config, views, options, fingerprint, warnings }
}

function positive(v) {
  return typeof v === 'number' && v > 0 ? v : undefined
}

/** Where the plugin keeps servers' tool lists and OAuth tokens (the CLI's OAuth default, so
 *  `openclaw-mcp-native login <server> --config ~/.openclaw/openclaw.json` signs the plugin in). */
const DATA_DIR = path.join(os.homedir(), '.openclaw', 'mcp-native')

/**
 * The McpManagerOptions of a setup, the same for the plugin and for `openclaw sync` (a server's
 * tool list may depend on what the client declares: server-everything lists its elicitation
 * tools only to a client that declares elicitation).
 */
function managerOptionsFor(setup, log, { oauthDir } = {}) {
  return {
    ...setup.options,
    logger: log,
    cacheDir: path.join(DATA_DIR, 'tools'),
    oauth: { dir: oauthDir ?? path.join(DATA_DIR, 'oauth') },
    elicitation: (request, { server }) => {
      log?.warn?.(`MCP server '${server}' asked the user for input (elicitation); declined: an OpenClaw plugin has no way to ask the user in the middle of a tool call`)
      return { action: 'decline' }
    },
  }
}

/** The servers agent `agentId` sees. */
function viewFor(views, agentId) {
  return views[agentId] ?? views[DEFAULT_AGENT]
}

module.exports = { PLUGIN_ID, DEFAULT_AGENT, DATA_DIR, PluginConfigError, pluginConfigOf, resolvePluginSetup, managerOptionsFor, viewFor }
