'use strict'
// The manager's logger for the command line. A server's stderr is shown only with --verbose (or,
// by the caller, when that server fails); each warning and error is printed once; while servers
// start, lines are held back so the start display is not torn and an error it already shows is
// not printed again.

const STDERR_LINE = /^MCP server '(.+?)' stderr: ([\s\S]*)$/
const TAIL = 20

class CliLogger {
  constructor({ verbose = false, quiet = false } = {}) {
    this.verbose = verbose
    this.quiet = quiet
    // Set by a command whose own report covers what the manager warns of (doctor).
    this.reportOnly = false
    this.printed = new Set()
    this.held = null
    this.shown = []
    this.tails = new Map()
    if (!verbose) {
      // Debug and info lines are never shown without --verbose: without the methods the
      // manager does not even send them (a gateway's every call logs one at debug).
      this.debug = undefined
      this.info = undefined
    }
  }

  debug(m) {
    this.line('debug', m)
  }

  info(m) {
    this.line('info', m)
  }

  warn(m) {
    this.line('warn', m)
  }

  error(m) {
    this.line('error', m)
  }

  line(level, message) {
    const text = String(message)
    const stderr = STDERR_LINE.exec(text)
    if (stderr) {
      const tail = this.tails.get(stderr[1]) || []
      tail.push(stderr[2])
      if (tail.length > TAIL) tail.shift()
      this.tails.set(stderr[1], tail)
    }
    if (this.verbose) {
      process.stderr.write(`[${level}] ${text}\n`)
      return
    }
    if (stderr || level === 'debug' || level === 'info' || ((this.quiet || this.reportOnly) && level === 'warn')) return
    if (this.reportOnly) return
    if (this.held) this.held.push([level, text])
    else this.once(level, text)
  }

  once(level, text) {
    if (this.shown.some((s) => s && text.includes(s))) return
    const key = `${level} ${text}`
    if (this.printed.has(key)) return
    this.printed.add(key)
    process.stderr.write(`[${level}] ${text}\n`)
  }

  /** Holds warnings and errors back until `release`. */
  hold() {
    if (!this.verbose) this.held = this.held || []
  }

  /** Prints what was held, once each; from now on leaves out lines that contain an error shown. */
  release(shown = []) {
    const held = this.held || []
    this.held = null
    // Lines that arrive later (logging crosses threads) are checked against these too.
    this.shown = this.shown.concat(shown)
    for (const [level, text] of held) this.once(level, text)
  }

  /** The last stderr lines of `server` (its own, as it wrote them), oldest first. */
  stderrOf(server) {
    return this.tails.get(server) || []
  }
}

module.exports = { CliLogger }
