// The floor: JSON-RPC over a pipe with no MCP client at all. Writes one request per line to the
// server's stdin, splits its stdout into lines, JSON.parse()s each and resolves the request with
// that id. No validation, no wrapping, no schema work: what any client must at least pay.

import { spawn } from 'node:child_process'

export class RawPipeClient {
  #child
  #nextId = 1
  #pending = new Map()
  #chunks = []
  #exited

  constructor(command, args = []) {
    this.command = command
    this.args = args
  }

  async start() {
    const child = spawn(this.command, this.args, { stdio: ['pipe', 'pipe', 'inherit'] })
    this.#child = child
    this.#exited = new Promise((resolve) => child.once('exit', resolve))
    child.stdout.on('data', (chunk) => this.#onData(chunk))
    child.stdin.on('error', () => {})
    child.once('exit', () => {
      for (const { reject } of this.#pending.values()) reject(new Error('server exited'))
      this.#pending.clear()
    })
    await new Promise((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', reject)
    })
    await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw-pipe', version: '0' },
    })
    this.notify('notifications/initialized')
    this.tools = (await this.request('tools/list', {})).tools
    return this
  }

  #onData(chunk) {
    let from = 0
    let nl = chunk.indexOf(10)
    while (nl !== -1) {
      let line
      if (this.#chunks.length) {
        this.#chunks.push(chunk.subarray(from, nl))
        line = Buffer.concat(this.#chunks).toString('utf8')
        this.#chunks = []
      } else {
        line = chunk.toString('utf8', from, nl)
      }
      this.#onLine(line)
      from = nl + 1
      nl = chunk.indexOf(10, from)
    }
    if (from < chunk.length) this.#chunks.push(chunk.subarray(from))
  }

  #onLine(line) {
    if (!line.trim()) return
    const msg = JSON.parse(line)
    const p = this.#pending.get(msg.id)
    if (!p) return
    this.#pending.delete(msg.id)
    if (msg.error) p.reject(new Error(msg.error.message))
    else p.resolve(msg.result)
  }

  request(method, params) {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      this.#child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    })
  }

  notify(method, params) {
    this.#child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}) })}\n`)
  }

  /** tools/call, returning the joined text of the result (the least a caller needs). */
  async call(name, args) {
    const result = await this.request('tools/call', { name, arguments: args })
    return result.content.map((c) => c.text ?? '').join('\n')
  }

  /** End stdin and wait for the exit; SIGKILL after `killAfterMs`. */
  async close(killAfterMs = 2000) {
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    child.stdin.end()
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    await this.#exited
    clearTimeout(timer)
  }

  kill() {
    this.#child?.kill('SIGKILL')
  }
}

/** The HTTP floor: one `fetch` POST of a JSON-RPC request per call, the JSON response parsed. */
export class RawHttpClient {
  #nextId = 1

  constructor(url) {
    this.url = url
  }

  async start() {
    await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw-http', version: '0' },
    })
    await this.#post({ jsonrpc: '2.0', method: 'notifications/initialized' })
    this.tools = (await this.request('tools/list', {})).tools
    return this
  }

  async #post(message) {
    const response = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(message),
    })
    const text = await response.text()
    if (response.status >= 400) throw new Error(`HTTP ${response.status}: ${text}`)
    return text
  }

  async request(method, params) {
    const reply = JSON.parse(await this.#post({ jsonrpc: '2.0', id: this.#nextId++, method, params }))
    if (reply.error) throw new Error(reply.error.message)
    return reply.result
  }

  async call(name, args) {
    const result = await this.request('tools/call', { name, arguments: args })
    return result.content.map((c) => c.text ?? '').join('\n')
  }

  kill() {}

  async close() {}
}
