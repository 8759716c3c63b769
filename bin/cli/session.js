'use strict'
// Starting the configured servers for one command: the manager, the start display, --timeout,
// and what to print about servers that failed.

const os = require('node:os')
const path = require('node:path')
const { McpManager } = require('../..')
const { withTimeout } = require('./config')
const { StartDisplay } = require('./live')

function defaultOAuthDir() {
  return path.join(os.homedir(), '.openclaw', 'mcp-native', 'oauth')
}

/**
 * Starts the servers of `config`; resolves `{ manager, timedOut, startErrors }` once each has connected or
 * failed its first attempt, or when --timeout runs out. The caller shuts the manager down.
 */
async function startServers(ctx, config, options = {}) {
  const { flags, logger } = ctx
  const timeoutMs = flags['--timeout']
  const manager = new McpManager(withTimeout(config, timeoutMs), {
    logger,
    toolNames: flags['--tool-names'],
    oauth: { dir: flags['--oauth-dir'] || defaultOAuthDir() },
    ...options,
  })
  const names = manager.getStatus().map((s) => s.name)
  const display = new StartDisplay(names, {
    enabled: !flags['--quiet'] && (!flags['--json'] || Boolean(process.stderr.isTTY)),
  })
  display.attach(manager)
  logger.hold()
  let timedOut = false
  let timer
  const started = manager.start()
  if (timeoutMs !== undefined) {
    // Each server's own connect timeout is already bounded; this catches what runs past it
    // (an OAuth sign-in, a slow shutdown of a failed attempt).
    const expired = new Promise((resolve) => {
      timer = setTimeout(() => resolve('expired'), timeoutMs + 1000)
    })
    timedOut = (await Promise.race([started, expired])) === 'expired'
    clearTimeout(timer)
  } else {
    await started
  }
  display.finish(timedOut ? { timedOutAfter: timeoutMs } : {})
  logger.release(display.shownErrors())
  if (!flags['--quiet']) printFailedServersStderr(ctx, manager, display.errors())
  return { manager, timedOut, startErrors: display.errors() }
}

/** For each server that failed to start, the last lines it wrote to stderr (without --verbose). */
function printFailedServersStderr(ctx, manager, shown) {
  if (ctx.flags['--verbose']) return
  for (const s of manager.getStatus()) {
    if (s.status === 'ready') continue
    // An error that quotes the server's stderr (a failed handshake does) has shown those lines.
    const error = shown.get(s.name) || ''
    const tail = ctx.logger.stderrOf(s.name).filter((line) => !error.includes(line))
    if (tail.length === 0) continue
    process.stderr.write(`${s.name} wrote to stderr (last ${tail.length} line${tail.length === 1 ? '' : 's'}):\n`)
    for (const line of tail) process.stderr.write(`  | ${line}\n`)
  }
}

module.exports = { startServers, defaultOAuthDir }
