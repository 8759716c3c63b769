'use strict'
// One tool call from the command line: its arguments (--args / --args-file), progress while it
// runs, its result as the model would see it, and the exit status.

const { readJsonFile } = require('./config')
const { printJson } = require('./output')
const { similarNames } = require('./tools')

class ArgsError extends Error {}

/** The call's arguments from --args JSON or --args-file FILE (default `{}`); errors name the flag. */
function callArguments(flags, fallback = '{}') {
  let value
  let from
  if (flags['--args-file'] !== undefined) {
    from = `--args-file ${flags['--args-file']}`
    try {
      value = readJsonFile(flags['--args-file'], '--args-file')
    } catch (e) {
      throw new ArgsError(e.message)
    }
  } else {
    const text = flags['--args'] !== undefined ? flags['--args'] : fallback
    from = '--args'
    try {
      value = JSON.parse(text)
    } catch (e) {
      throw new ArgsError(`--args: not valid JSON (${e.message}); give a JSON object such as '{"text":"hi"}'`)
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const what = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`
    throw new ArgsError(`${from}: the arguments must be a JSON object, got ${what}`)
  }
  return value
}

/** Calls `name` with `args`; prints the result; resolves the exit status (0 ok, 1 failed). */
async function callAndPrint(ctx, manager, name, args) {
  const { flags } = ctx
  const tools = manager.getAgentTools()
  const tool = tools.find((t) => t.name === name)
  if (!tool) {
    const near = similarNames(tools.map((t) => t.name), name)
    const none = flags['--timeout'] !== undefined ? ` (no server is ready; --timeout ${flags['--timeout']} ms bounds each server's start too)` : ' (no server is ready)'
    const hint = near.length ? `; did you mean ${near.join(', ')}?` : tools.length ? ` (run 'tools' to list them)` : none
    process.stderr.write(`openclaw-mcp-native: no agent tool named '${name}'${hint}\n`)
    return 1
  }
  if (!flags['--json'] && !flags['--quiet']) process.stdout.write(`\nCalling ${name} ${JSON.stringify(args)}\n\n`)
  const progress = new ProgressLine(!flags['--quiet'])
  const signal = flags['--timeout'] !== undefined ? AbortSignal.timeout(flags['--timeout']) : undefined
  const began = Date.now()
  const result = await tool.execute('cli-call', args, signal, (update) => progress.show(update))
  progress.done()
  const failed = Boolean(result && result.details && result.details.error)
  const timedOut = Boolean(signal && signal.aborted)
  if (flags['--json']) {
    printJson({ tool: name, arguments: args, ms: Date.now() - began, error: failed, result })
  } else {
    for (const part of result.content) {
      if (part.type === 'text') process.stdout.write(part.text + '\n')
      else if (part.type === 'image') process.stdout.write(`[image: ${part.mimeType}, ${Buffer.byteLength(part.data || '', 'base64')} bytes]\n`)
      else process.stdout.write(`[${part.type}]\n`)
    }
  }
  if (timedOut) process.stderr.write(`openclaw-mcp-native: ${name} was cancelled after --timeout ${flags['--timeout']} ms\n`)
  else if (failed) process.stderr.write(`openclaw-mcp-native: ${name} returned an error result\n`)
  return failed || timedOut ? 1 : 0
}

/** Progress updates on stderr: redrawn in place on a terminal, one line each otherwise. */
class ProgressLine {
  constructor(enabled) {
    this.enabled = enabled
    this.tty = Boolean(process.stderr.isTTY)
    this.shown = false
  }

  show(update) {
    if (!this.enabled) return
    const d = (update && update.details) || {}
    const of = typeof d.total === 'number' ? `/${d.total}` : ''
    const pct = typeof d.total === 'number' && d.total > 0 ? ` (${Math.round((100 * d.progress) / d.total)} %)` : ''
    const text = `progress ${d.progress}${of}${pct}`
    if (this.tty) process.stderr.write(`\r\x1b[2K${text}`)
    else process.stderr.write(text + '\n')
    this.shown = true
  }

  done() {
    if (this.enabled && this.tty && this.shown) process.stderr.write('\n')
  }
}

module.exports = { callArguments, callAndPrint, ArgsError }
