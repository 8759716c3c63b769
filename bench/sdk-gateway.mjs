#!/usr/bin/env node
// The comparator for the native gateway (`manager.serve()`): the same job written on the
// TypeScript SDK v1, the way a JS user would do it today. One MCP server that re-serves the tools
// of upstream MCP servers: an SDK `Client` per upstream (stdio or Streamable HTTP), their tools
// listed at start (and again on `tools/list_changed`), each call forwarded with progress and
// cancellation (a downstream `notifications/cancelled` aborts the upstream request).
//
//   node bench/sdk-gateway.mjs --config gw.json [--stdio | --http PORT] [--separator __]
//
// gw.json: { "servers": { "<name>": { "command", "args"?, "env"?, "cwd"? } | { "url" } } }
// (also accepted: the file is just that "servers" object). Tools are served as
// `<name><separator><tool>` (default separator `__`); with a single upstream and
// `--no-prefix`, under their own names.
// --http PORT: Streamable HTTP on 127.0.0.1:PORT (0: any free port), endpoint /mcp, one session
// per client (an unknown session id gets 404); prints `listening <port>` on stdout once bound.
// --stdio (default): serves on stdin/stdout; exits when stdin closes, and when its parent dies.

import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import {
  CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, LoggingMessageNotificationSchema, McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'

const argv = process.argv.slice(2)
const opt = (f) => {
  const i = argv.indexOf(f)
  return i >= 0 ? argv[i + 1] : undefined
}
if (argv.includes('--help') || !opt('--config')) {
  console.error(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 17).join('\n'))
  process.exit(argv.includes('--help') ? 0 : 2)
}
const config = JSON.parse(readFileSync(opt('--config'), 'utf8'))
const upstreamSpecs = config.servers ?? config
const SEP = opt('--separator') ?? '__'
const NO_PREFIX = argv.includes('--no-prefix') && Object.keys(upstreamSpecs).length === 1
const CALL_TIMEOUT_MS = Number(opt('--call-timeout-ms') ?? 600_000)

// Stdio mode: gone with the parent (an interrupted benchmark leaves nothing behind).
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) shutdown(0)
}, 500).unref()

// ------------------------------------------------------------------------------- upstreams

/** served tool name -> { client, name (upstream's), tool (as listed) } */
const routes = new Map()
const upstreams = new Map()
const servers = new Set() // downstream Server instances (one per HTTP session, one on stdio)

async function connectUpstream(name, spec) {
  const client = new Client({ name: 'sdk-gateway', version: '1.0.0' }, { capabilities: {} })
  const transport = spec.url
    ? new StreamableHTTPClientTransport(new URL(spec.url))
    : new StdioClientTransport({
        command: spec.command, args: spec.args ?? [], cwd: spec.cwd,
        env: { ...getDefaultEnvironment(), ...(spec.env ?? {}) }, stderr: 'inherit',
      })
  await client.connect(transport)
  upstreams.set(name, client)
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    await listUpstream(name, client)
    for (const s of servers) s.sendToolListChanged().catch(() => {})
  })
  // Upstream log messages go to every downstream session (the gateway has no finer routing).
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    for (const s of servers) s.sendLoggingMessage({ ...n.params, logger: n.params.logger ?? name }).catch(() => {})
  })
  await listUpstream(name, client)
}

async function listUpstream(name, client) {
  for (const [k, r] of routes) if (r.upstream === name) routes.delete(k)
  let cursor
  for (let page = 0; page < 1000; page++) {
    const res = await client.listTools(cursor ? { cursor } : undefined)
    for (const tool of res.tools) {
      const served = NO_PREFIX ? tool.name : `${name}${SEP}${tool.name}`
      routes.set(served, { upstream: name, client, name: tool.name, tool: { ...tool, name: served } })
    }
    cursor = res.nextCursor
    if (!cursor) break
  }
}

// ------------------------------------------------------------------------------- downstream

function buildServer() {
  const server = new Server(
    { name: 'sdk-gateway', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  )
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...routes.values()].map((r) => r.tool) }))
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const route = routes.get(req.params.name)
    if (!route) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`)
    const token = req.params._meta?.progressToken
    return route.client.callTool(
      { name: route.name, arguments: req.params.arguments ?? {} },
      undefined,
      {
        signal: extra.signal, // aborted by the downstream's notifications/cancelled: cancels upstream
        timeout: CALL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        onprogress: token === undefined
          ? undefined
          : (p) => extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } }),
      },
    )
  })
  servers.add(server)
  server.onclose = () => servers.delete(server)
  return server
}

let closing = false
async function shutdown(code) {
  if (closing) return
  closing = true
  const t = setTimeout(() => process.exit(code), 3_000)
  t.unref()
  await Promise.allSettled([...servers].map((s) => s.close()))
  await Promise.allSettled([...upstreams.values()].map((c) => c.close()))
  process.exit(code)
}
process.on('SIGTERM', () => shutdown(0))
process.on('SIGINT', () => shutdown(0))

// ------------------------------------------------------------------------------- main

try {
  await Promise.all(Object.entries(upstreamSpecs).map(([name, spec]) => connectUpstream(name, spec)))
} catch (error) {
  console.error(`sdk-gateway: upstream failed: ${error.message}`)
  await shutdown(1)
}

if (opt('--http') !== undefined) {
  const sessions = new Map()
  const httpServer = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1')
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end()
        return
      }
      const sid = req.headers['mcp-session-id']
      let transport = sid ? sessions.get(sid) : undefined
      if (sid && !transport) {
        res.writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }))
        return
      }
      if (!transport) {
        if (req.method !== 'POST') {
          res.writeHead(400).end()
          return
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => sessions.set(id, transport),
        })
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId)
        await buildServer().connect(transport)
      }
      await transport.handleRequest(req, res)
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error?.message ?? error))
    }
  })
  httpServer.listen(Number(opt('--http')), '127.0.0.1', () => {
    process.stdout.write(`listening ${httpServer.address().port}\n`)
  })
} else {
  const transport = new StdioServerTransport()
  const server = buildServer()
  server.onclose = () => shutdown(0)
  process.stdin.on('end', () => shutdown(0))
  await server.connect(transport)
}
