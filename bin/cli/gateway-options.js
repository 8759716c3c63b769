'use strict'
// What `serve` passes on from its flags: the manager's result and schema modes, and
// manager.serve()'s names, wrapping, view and response limits. Read and checked before any
// server starts; every error names the flag.

const fs = require('node:fs')
const { McpServerHost } = require('../..')

const CHOICES = {
  '--names': ['manager', 'upstream'],
  '--results': ['compat', 'rich'],
  '--schemas': ['compat', 'faithful'],
}

/**
 * `{ manager, serve, servers }`: options for `new McpManager` (results, schemas), for
 * `manager.serve()` (names, wrap, view, limits), and the servers the view names (to check
 * against the config). `UsageError` is the CLI's usage error class.
 */
function gatewayOptions(flags, UsageError) {
  const choice = (flag) => {
    const value = flags[flag]
    if (value === undefined) return undefined
    if (!CHOICES[flag].includes(value)) {
      throw new UsageError(`${flag}: expected ${CHOICES[flag].map((c) => `'${c}'`).join(' or ')}, got '${value}'`, 'serve')
    }
    return value
  }
  const manager = {}
  const results = choice('--results')
  if (results) manager.results = results
  const schemas = choice('--schemas')
  if (schemas) manager.schemas = schemas

  const serve = {}
  const names = choice('--names')
  if (names) serve.names = names
  if (flags['--no-wrap']) serve.wrap = false
  const view = {}
  for (const [flag, key] of [['--servers', 'servers'], ['--allow', 'allow'], ['--deny', 'deny']]) {
    if (flags[flag] !== undefined) view[key] = list(flag, flags[flag], UsageError)
  }
  if (Object.keys(view).length > 0) serve.view = view
  if (flags['--limits'] !== undefined) serve.limits = limits(flags['--limits'], UsageError)
  return { manager, serve, servers: view.servers }
}

/** `a,b` → ['a', 'b']; an empty entry is an error. */
function list(flag, text, UsageError) {
  const items = String(text).split(',').map((s) => s.trim())
  if (items.some((s) => s === '')) {
    throw new UsageError(`${flag}: expected a comma-separated list without empty entries, got '${text}'`, 'serve')
  }
  return items
}

/** `openclaw`, a JSON object, or `@FILE` holding one; checked by the rules McpServerHost applies. */
function limits(text, UsageError) {
  if (text === 'openclaw') return text
  let source = text
  let where = ''
  if (text.startsWith('@')) {
    where = ` (in ${text.slice(1)})`
    try {
      source = fs.readFileSync(text.slice(1), 'utf8')
    } catch (e) {
      throw new UsageError(`--limits: cannot read ${text.slice(1)}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`, 'serve')
    }
  }
  let value
  try {
    value = JSON.parse(source)
  } catch (e) {
    throw new UsageError(`--limits: expected 'openclaw', a JSON object or @FILE${where}: ${e.message}`, 'serve')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`--limits: expected 'openclaw', a JSON object or @FILE${where}, got ${JSON.stringify(value)}`, 'serve')
  }
  try {
    // Serves nothing; its constructor checks the limits and names what is wrong.
    new McpServerHost({ name: 'limits-check', version: '0', limits: value })
  } catch (e) {
    throw new UsageError(`--limits${where}: ${e.message.replace(/^McpServerHost: /, '')}`, 'serve')
  }
  return value
}

/** A UsageError when `wanted` names a server the config does not enable. */
function checkServers(wanted, config, UsageError) {
  if (!wanted) return
  const enabled = Object.entries(config.servers ?? {})
    .filter(([, s]) => s.enabled !== false)
    .map(([name]) => name)
  const unknown = wanted.find((name) => !enabled.includes(name))
  if (unknown !== undefined) {
    throw new UsageError(`--servers: no enabled server named '${unknown}' (servers: ${enabled.join(', ') || 'none'})`, 'serve')
  }
}

module.exports = { gatewayOptions, checkServers }
