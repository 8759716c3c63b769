'use strict'
// The OpenClaw plugin (`openclaw plugins install @openclaw/mcp-native`): OpenClaw's MCP servers
// (`mcp.servers`, or the plugin's own config) run by one McpManager per gateway, in place of
// bundle-mcp (`tools.deny: ["bundle-mcp"]`). A thin client of the package's public API, as any
// gateway would be (docs/integration.md).
//
//   - register() and the tool factory are synchronous (OpenClaw requires it). The manager starts
//     with the gateway (a service) or, where no services run (`openclaw agent exec`), at the first
//     tool factory call; one-shot runs dispose of it (`api.lifecycle.registerRuntimeLifecycle`).
//   - OpenClaw offers only tool names declared in openclaw.plugin.json (`contracts.tools`).
//     `openclaw-mcp-native openclaw sync` writes them, with each agent's tool definitions
//     (openclaw.tools.json), from the configured servers. Until the servers are ready, an agent is
//     offered those definitions; calling one waits for the server. Live tools that are not
//     declared are named in one log line (OpenClaw would drop them without a word).
//   - One process per server whatever the number of agents: a `manager.view()` per agent, tools
//     named as bundle-mcp names them (`<server>__<tool>`, `toolNames: 'openclaw'`).
//   - A change of `mcp.*` in openclaw.json is applied with `manager.reconfigure()` at the next
//     turn (unchanged servers keep their process); OpenClaw reloads the whole plugin for a change
//     of `plugins.*`.

const path = require('node:path')
const { McpManager } = require('..')
const { PLUGIN_ID, PluginConfigError, managerOptionsFor, resolvePluginSetup, viewFor } = require('./config')
const { readSyncState, SYNC_FILE, PLACEHOLDER_TOOL } = require('./sync-state')

const SYNC_HINT = "run 'openclaw-mcp-native openclaw sync', then restart the gateway"

function prefixed(logger) {
  const line = (level) => (msg) => {
    const fn = logger?.[level] ?? logger?.info
    if (typeof fn === 'function') fn.call(logger, `[${PLUGIN_ID}] ${msg}`)
  }
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') }
}

/** One gateway's MCP servers: the manager, its views, what is declared and what was synced. */
class McpHost {
  constructor({ rootDir, config, pluginConfig, logger }) {
    this.rootDir = rootDir
    this.logger = logger
    this.log = prefixed(logger)
    this.pluginConfig = pluginConfig
    this.manager = undefined
    this.setup = undefined
    this.views = new Map()
    this.starting = undefined
    this.reconfiguring = undefined
    this.closed = false
    this.refs = 0
    this.reportedUndeclared = ''
    this.sync = readSyncState(rootDir)
    this.declared = new Set(this.sync.declared)
    this.apply(config)
  }

  /** Reads the setup from an openclaw.json; false (logged) when it is not usable. */
  resolve(config) {
    try {
      return resolvePluginSetup(config, this.pluginConfig)
    } catch (e) {
      if (!(e instanceof PluginConfigError)) throw e
      this.log.error(`config not used: ${e.message}`)
      return false
    }
  }

  /** Another registration of the plugin (a reload: maybe another plugin config) joins. */
  adopt(config, pluginConfig) {
    this.pluginConfig = pluginConfig
    if (this.manager) this.reconfigure(config)
    else this.apply(config)
  }

  /** This host, or the one that replaced it once it stopped; `revive`: a new one if none did
   *  (the service started again after a stop). */
  current(revive = false) {
    if (!this.closed) return this
    const hosts = globalThis[SLOT]
    const live = hosts?.get(this.rootDir)
    if (live && !live.closed) return live
    if (!revive) return this
    const fresh = new McpHost({ rootDir: this.rootDir, config: this.config, pluginConfig: this.pluginConfig, logger: this.logger })
    fresh.refs = this.refs
    hosts?.set(this.rootDir, fresh)
    return fresh
  }

  apply(config) {
    this.config = config
    const setup = this.resolve(config)
    if (setup) this.setup = setup
  }

  managerOptions() {
    return managerOptionsFor(this.setup, this.log)
  }

  /** Starts the servers once (the service, or the first tool factory call). */
  start() {
    if (this.closed) return Promise.resolve()
    if (!this.starting) {
      if (!this.setup) {
        this.starting = Promise.resolve()
        return this.starting
      }
      this.manager = new McpManager(this.setup.config, this.managerOptions())
      this.manager.on('toolsChanged', () => this.reportUndeclared())
      this.starting = this.manager.start().then(() => this.reportUndeclared())
    }
    return this.starting
  }

  /** Applies a changed openclaw.json (`mcp.*`) to the running manager. */
  reconfigure(config) {
    this.config = config
    const setup = this.resolve(config)
    if (!setup || setup.fingerprint === this.setup?.fingerprint) return
    const previous = this.setup
    this.setup = setup
    if (!this.manager) return
    this.views.clear()
    if (JSON.stringify(setup.config) === JSON.stringify(previous?.config)) return
    const after = this.reconfiguring ?? this.starting
    this.reconfiguring = after
      .then(() => this.manager.reconfigure(setup.config))
      .then(
        (r) => {
          this.log.info(`config changed: added ${list(r.added)}, removed ${list(r.removed)}, restarted ${list(r.restarted)}, unchanged ${list(r.unchanged)}`)
          this.reportUndeclared()
        },
        (e) => this.log.error(`config change not applied: ${e.message}`),
      )
  }

  ready() {
    return (this.reconfiguring ?? this.starting ?? this.start()).then(() => undefined)
  }

  view(agentId) {
    const key = agentId ?? ''
    let view = this.views.get(key)
    if (!view) {
      view = this.manager.view({ servers: viewFor(this.setup.views, agentId), toolNames: this.setup.options.toolNames })
      this.views.set(key, view)
    }
    return view
  }

  /** The tools agent `ctx.agentId` is offered now (synchronous, as OpenClaw asks). */
  toolsFor(ctx) {
    if (this.closed) return null
    const runtime = typeof ctx?.getRuntimeConfig === 'function' ? ctx.getRuntimeConfig() : ctx?.runtimeConfig
    if (runtime && this.manager) this.reconfigure(runtime)
    this.start()
    if (!this.setup) return null
    let live = []
    try {
      live = this.view(ctx?.agentId).getAgentTools()
    } catch (e) {
      this.log.error(`tools for agent '${ctx?.agentId ?? 'default'}' not offered: ${e.message}`)
    }
    const tools = live.filter((t) => this.declared.has(t.name))
    // Until a server is ready (or while the config is applied), offer what the last sync saw.
    const have = new Set(live.map((t) => t.name))
    const synced = this.sync.agents[ctx?.agentId] ?? this.sync.agents['*'] ?? []
    const servers = new Set(viewFor(this.setup.views, ctx?.agentId))
    for (const def of synced) {
      if (have.has(def.name) || !this.declared.has(def.name) || !servers.has(def.server)) continue
      const status = this.manager?.getStatus().find((s) => s.name === def.server)
      if (status && (status.status === 'ready' || status.status === 'error' || status.status === 'closed')) continue
      tools.push(this.deferred(def, ctx?.agentId))
    }
    return tools.length > 0 ? tools : null
  }

  /** A synced definition whose call waits for the server, then goes to the live tool. */
  deferred(def, agentId) {
    const host = this
    return {
      name: def.name,
      label: def.label,
      description: def.description,
      parameters: def.parameters,
      async execute(toolCallId, params, signal, onUpdate) {
        await host.ready()
        const tool = host.closed ? undefined : host.view(agentId).getAgentTools().find((t) => t.name === def.name)
        if (!tool) {
          const status = host.manager?.getStatus().find((s) => s.name === def.server)
          const why = status ? `MCP server '${def.server}' is not ready (status: ${status.status})` : `MCP server '${def.server}' is not configured`
          return { content: [{ type: 'text', text: `MCP tool error (${def.server}/${def.name}): ${why}` }], details: { error: true } }
        }
        return tool.execute(toolCallId, params, signal, onUpdate)
      },
    }
  }

  /** One line naming the live tools OpenClaw would drop (not in contracts.tools). */
  reportUndeclared() {
    if (!this.manager || this.closed) return
    const undeclared = new Set()
    for (const agent of Object.keys(this.setup.views)) {
      try {
        for (const t of this.manager.view({ servers: viewFor(this.setup.views, agent), toolNames: this.setup.options.toolNames }).getAgentTools()) {
          if (!this.declared.has(t.name)) undeclared.add(t.name)
        }
      } catch {}
    }
    const key = [...undeclared].sort().join(', ')
    if (key === this.reportedUndeclared) return
    this.reportedUndeclared = key
    if (undeclared.size > 0) {
      this.log.warn(`${undeclared.size} MCP tool(s) not declared in ${path.join(this.rootDir, 'openclaw.plugin.json')} (contracts.tools), so OpenClaw will not offer them: ${key}; ${SYNC_HINT}`)
    }
  }

  async stop() {
    if (this.closed) return
    this.closed = true
    const manager = this.manager
    if (manager) await manager.shutdown()
  }
}

function list(names) {
  return names.length > 0 ? names.join(', ') : 'none'
}

// OpenClaw loads the plugin more than once in one gateway (a registry for the services, others
// for tool resolution, each with its own copy of the module), and every copy must reach the same
// servers: the hosts live on globalThis, one per plugin directory. Each registration holds a
// reference, released when OpenClaw disposes of it; the last one out stops the servers. The
// service's stop (the gateway stopping) stops them whatever else holds a reference.
const SLOT = Symbol.for('@openclaw/mcp-native/openclaw-hosts')

function acquireHost(api, rootDir) {
  const hosts = (globalThis[SLOT] ??= new Map())
  let host = hosts.get(rootDir)
  if (!host || host.closed) {
    host = new McpHost({ rootDir, config: api.config, pluginConfig: api.pluginConfig, logger: api.logger })
    hosts.set(rootDir, host)
  } else {
    host.adopt(api.config, api.pluginConfig)
  }
  host.refs += 1
  let held = true
  const release = () => {
    if (!held) return undefined
    held = false
    host.refs -= 1
    return host.refs <= 0 ? host.stop() : undefined
  }
  return { host, release }
}

const plugin = {
  id: PLUGIN_ID,
  name: 'MCP (native)',
  description: 'Runs OpenClaw\'s MCP servers with @openclaw/mcp-native instead of bundle-mcp',
  register(api) {
    const rootDir = api.rootDir ?? path.join(__dirname, '..')
    // Registration does no work (nothing starts before the service or a tool factory call),
    // so every mode gets the same registrations: OpenClaw decides from a discovery load which
    // plugins own tools.
    const { host, release } = acquireHost(api, rootDir)
    api.registerTool((ctx) => host.current().toolsFor(ctx))
    api.registerService({
      id: PLUGIN_ID,
      start: () => host.current(true).start(),
      stop: () => host.current().stop(),
    })
    if (api.lifecycle?.registerRuntimeLifecycle) {
      api.lifecycle.registerRuntimeLifecycle({ id: PLUGIN_ID, description: 'stops the MCP servers', dispose: release })
    }
    if (typeof api.lifecycle?.onDispose === 'function') api.lifecycle.onDispose(release)
  },
}

module.exports = plugin
module.exports.default = plugin
module.exports.McpHost = McpHost
module.exports.SYNC_FILE = SYNC_FILE
module.exports.PLACEHOLDER_TOOL = PLACEHOLDER_TOOL
