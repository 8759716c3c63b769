'use strict'
// `openclaw sync`: declare the tools of the OpenClaw plugin (openclaw/plugin.js). OpenClaw offers
// a plugin's tool only when its name is in the plugin's openclaw.plugin.json (`contracts.tools`),
// read when the gateway starts; this starts the servers the plugin would run for an openclaw.json,
// writes their tool names there (and each agent's definitions to openclaw.tools.json), and says
// per server what changed since the last sync.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { readJsonFile } = require('../config')
const { PLUGIN_ID } = require('../../../openclaw/config')

const SUBCOMMANDS = ['sync']

function defaultOpenclawConfig() {
  if (process.env.OPENCLAW_CONFIG_PATH) return process.env.OPENCLAW_CONFIG_PATH
  const state = process.env.OPENCLAW_STATE_DIR || path.join(os.homedir(), '.openclaw')
  return path.join(state, 'openclaw.json')
}

/** Where OpenClaw loads the plugin from: a linked checkout (`plugins install -l`: a
 *  plugins.load.paths entry holding our manifest), the copy `plugins install` made under the
 *  state directory (extensions/mcp-native), else this package itself. */
function installedPluginDir(json) {
  const ours = (dir) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, 'openclaw.plugin.json'), 'utf8')).id === PLUGIN_ID
    } catch {
      return false
    }
  }
  const linked = json?.plugins?.load?.paths
  for (const dir of Array.isArray(linked) ? linked : []) {
    if (typeof dir === 'string' && ours(dir)) return dir
  }
  const state = process.env.OPENCLAW_STATE_DIR || path.join(os.homedir(), '.openclaw')
  const installed = path.join(state, 'extensions', PLUGIN_ID)
  if (ours(installed)) return installed
  return path.join(__dirname, '..', '..', '..')
}

async function openclaw(ctx) {
  const { flags, positional, logger } = ctx
  const sub = positional[0]
  if (!SUBCOMMANDS.includes(sub)) throw new ctx.UsageError(`unknown openclaw subcommand '${sub}' (subcommands: ${SUBCOMMANDS.join(', ')})`, 'openclaw')
  for (const flag of ['--shape', '--agent', '--tool-names']) {
    if (flags[flag] !== undefined) throw new ctx.UsageError(`${flag} does not apply to openclaw sync: the plugin's config decides`, 'openclaw')
  }
  const configFile = flags['--config'] ?? defaultOpenclawConfig()
  const json = readJsonFile(configFile, flags['--config'] ? '--config' : 'openclaw.json')
  const pluginDir = path.resolve(flags['--plugin-dir'] ?? installedPluginDir(json))
  if (!fs.existsSync(path.join(pluginDir, 'openclaw.plugin.json'))) {
    throw new ctx.ConfigError(`--plugin-dir ${pluginDir}: no openclaw.plugin.json there (the directory OpenClaw installed @openclaw/mcp-native into; 'openclaw plugins inspect mcp-native' shows it)`)
  }
  const { syncPlugin, formatSyncReport } = require('../../../openclaw/sync')
  const { PluginConfigError } = require('../../../openclaw/config')
  let result
  try {
    result = await syncPlugin(json, pluginDir, {
      logger,
      cached: Boolean(flags['--cached']),
      timeoutMs: flags['--timeout'],
      oauthDir: flags['--oauth-dir'],
    })
  } catch (e) {
    if (e instanceof PluginConfigError) throw new ctx.ConfigError(`${configFile}: ${e.message}`)
    throw e
  }
  const linked = require('../../../openclaw/sync').isLinked(json, pluginDir)
  if (flags['--json']) process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  else process.stdout.write(formatSyncReport(result, { linked }))
  return result.failed.length > 0 ? 1 : 0
}

module.exports = { openclaw, defaultOpenclawConfig }
