'use strict'
// Where the servers come from: --config FILE in any shape the package reads, or the built-in
// example. Errors name the file (and the flag) they come from.

const fs = require('node:fs')
const path = require('node:path')
const { inspectMcpConfig } = require('../..')

class ConfigError extends Error {}

/** The JSON of `file`; `label` names where the path came from in errors (e.g. '--config'). */
function readJsonFile(file, label) {
  let text
  try {
    text = file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(file, 'utf8')
  } catch (e) {
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a directory' : e.message
    throw new ConfigError(`${label} ${file}: cannot read it (${why})`)
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new ConfigError(`${label} ${file}: not valid JSON (${e.message})`)
  }
}

/** `{ config, shape, warnings, source }` for --config FILE, or the built-in example without it. */
function loadConfig(flags) {
  const file = flags['--config']
  if (file === undefined) {
    if (flags['--agent'] !== undefined) throw new ConfigError('--agent needs --config (an openclaw.json)')
    if (flags['--shape'] !== undefined) throw new ConfigError('--shape needs --config')
    return { config: builtInExample(), shape: 'mcp', warnings: [], source: null }
  }
  const json = readJsonFile(file, '--config')
  try {
    const inspected = inspectMcpConfig(json, { agent: flags['--agent'], shape: flags['--shape'] })
    return { ...inspected, source: file, json }
  } catch (e) {
    throw new ConfigError(`--config ${file}: ${e.message}`)
  }
}

function builtInExample() {
  return {
    servers: {
      example: {
        command: process.execPath,
        args: [path.join(__dirname, '..', '..', 'examples', 'echo-server.mjs')],
      },
    },
  }
}

/** The config with every enabled server's start bounded by `timeoutMs` (when given). */
function withTimeout(config, timeoutMs) {
  if (timeoutMs === undefined) return config
  const servers = {}
  for (const [name, server] of Object.entries(config.servers || {})) {
    const own = typeof server.timeout === 'number' ? server.timeout : Infinity
    servers[name] = { ...server, timeout: Math.min(own, timeoutMs) }
  }
  return { ...config, servers }
}

/** Just `name`, enabled, started once (no restarts): what probe and login start. */
function singleServer(config, name, extra = {}) {
  const entry = config.servers && config.servers[name]
  if (!entry) {
    const known = Object.keys(config.servers || {})
    throw new ConfigError(`no server named '${name}' in the config${known.length ? ` (servers: ${known.join(', ')})` : ''}`)
  }
  const single = { ...entry, enabled: true, lazy: false, restartOnCrash: false, ...extra }
  delete single.idleTimeoutMs
  return { servers: { [name]: single } }
}

module.exports = { ConfigError, loadConfig, readJsonFile, withTimeout, singleServer, builtInExample }
