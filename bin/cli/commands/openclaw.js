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
  const { syncPlugin } = require('../../../openclaw/sync')
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
  const linked = (Array.isArray(json?.plugins?.load?.paths) ? json.plugins.load.paths : []).some((d) => typeof d === 'string' && path.resolve(d) === pluginDir)
  if (flags['--json']) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  } else {
    for (const s of result.servers) {
      let what
      if (s.change === 'new') what = 'new'
      else if (s.change === 'unchanged') what = 'unchanged since the last sync'
      else if (s.change === 'gone') what = 'no longer configured: its tools are no longer declared'
      else if (s.change === 'kept') what = `did not start (${s.status}): kept the tools of the last sync`
      else {
        const parts = []
        if (s.added.length) parts.push(`added ${s.added.join(', ')}`)
        if (s.removed.length) parts.push(`removed ${s.removed.join(', ')}`)
        if (!parts.length) parts.push('descriptions or schemas')
        what = `CHANGED since the last sync: ${parts.join('; ')}`
      }
      const failed = s.status !== 'ready' && s.change !== 'gone' && s.change !== 'kept' ? ` (${s.status})` : ''
      process.stdout.write(`${s.server}: ${s.tools} tool${s.tools === 1 ? '' : 's'}${failed}, ${what}\n`)
    }
    process.stdout.write(`Declared ${result.names.length} tool name${result.names.length === 1 ? '' : 's'} in ${result.manifestPath}\n`)
    process.stdout.write('Restart the gateway (openclaw gateway restart) so that OpenClaw reads them.\n')
    if (result.added > 0 && !linked) {
      // OpenClaw records the tool names a copied install declared when it was accepted; new
      // names need the same consent again (`openclaw plugins list` warns until then).
      process.stdout.write('New tool names: accept them with `openclaw plugins enable mcp-native --accept-capabilities`.\n')
    }
  }
  return result.failed.length > 0 ? 1 : 0
}

module.exports = { openclaw, defaultOpenclawConfig }
