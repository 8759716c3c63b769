'use strict'
// The start display: one line per server, updated as each connects. On a terminal the lines are
// redrawn in place; otherwise one plain line is printed per server when it is ready or has failed.

const { duration, oneLine } = require('./output')

const MARK = { connecting: '…', ready: '✓', error: '✗', closed: '✗', disconnected: '…', timeout: '✗' }

class StartDisplay {
  /** `names`: the servers in config order; `tty`: redraw in place; `enabled`: print at all. */
  constructor(names, { stream = process.stderr, tty = Boolean(process.stderr.isTTY), enabled = true } = {}) {
    this.stream = stream
    this.tty = tty
    this.enabled = enabled && names.length > 0
    this.began = Date.now()
    this.rows = new Map(names.map((n) => [n, { status: 'connecting', error: null, tools: 0, ms: null, printed: false }]))
    this.drawn = 0
    this.manager = null
    this.listener = null
  }

  attach(manager) {
    this.manager = manager
    // A start that fails before connecting (a secret that does not resolve) goes back to
    // `disconnected` rather than to `error`.
    this.listener = (e) => this.update(e.server, e.previous === 'connecting' && e.status === 'disconnected' ? 'error' : e.status, e.error)
    manager.on('status', this.listener)
    if (this.enabled && this.tty) this.draw()
  }

  update(server, status, error) {
    const row = this.rows.get(server)
    if (!row || row.ms !== null) return
    row.status = status
    if (error) row.error = error
    if (status === 'ready' || status === 'error' || status === 'closed') {
      row.ms = Date.now() - this.began
      const entry = this.manager && this.manager.getStatus().find((s) => s.name === server)
      row.tools = entry ? entry.toolCount : 0
      if (status !== 'ready' && !row.error) row.error = this.lastError(server)
    }
    if (!this.enabled) return
    if (this.tty) this.draw()
    else if (row.ms !== null && !row.printed) {
      row.printed = true
      this.stream.write(this.text(server, row, 160) + '\n')
    }
  }

  lastError(server) {
    const m = this.manager && this.manager.getMetrics().find((x) => x.server === server)
    return (m && m.lastError) || null
  }

  /** Servers still starting when the time ran out are shown as timed out. */
  finish({ timedOutAfter } = {}) {
    for (const [server, row] of this.rows) {
      if (row.ms !== null || timedOutAfter === undefined) continue
      row.status = 'timeout'
      row.error = `still starting after ${duration(timedOutAfter)} (--timeout)`
      row.ms = timedOutAfter
      if (this.enabled && !this.tty) this.stream.write(this.text(server, row, 160) + '\n')
    }
    if (this.enabled && this.tty) this.draw()
    if (this.manager && this.listener) this.manager.off('status', this.listener)
    this.listener = null
  }

  /** Each server's last start error (as shown), by name. */
  errors() {
    return new Map([...this.rows].filter(([, r]) => r.error).map(([n, r]) => [n, r.error]))
  }

  /** The errors shown (so the logger does not print them again). */
  shownErrors() {
    return [...this.rows.values()].map((r) => r.error).filter(Boolean)
  }

  text(server, row, width) {
    const mark = MARK[row.status] || '•'
    let what
    if (row.status === 'ready') what = `ready, ${row.tools} tool${row.tools === 1 ? '' : 's'}`
    else if (row.status === 'timeout') what = 'timed out'
    else if (row.status === 'error' || row.status === 'closed') what = 'failed'
    else what = 'starting'
    const took = row.ms === null ? '' : ` (${duration(row.ms)})`
    const error = row.error && row.status !== 'ready' ? `: ${row.error}` : ''
    return oneLine(`${mark} ${server}: ${what}${took}${error}`, width)
  }

  draw() {
    const width = Math.max(20, (this.stream.columns || 100) - 1)
    let out = this.drawn ? `\x1b[${this.drawn}A` : ''
    for (const [server, row] of this.rows) out += `\r\x1b[2K${this.text(server, row, width)}\n`
    this.drawn = this.rows.size
    this.stream.write(out)
  }
}

module.exports = { StartDisplay }
