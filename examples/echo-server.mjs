#!/usr/bin/env node
// A complete MCP server in one small file, with no dependencies.
//
// This is the server `openclaw-mcp-native` runs when you give it no config. It
// speaks MCP's stdio transport: one JSON-RPC 2.0 message per line on stdin,
// one per line on stdout. Anything meant for humans goes to stderr.
//
// Try it by hand:
//   echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | node examples/echo-server.mjs

import { createInterface } from 'node:readline'

const SUPPORTED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']
const DEFAULT_VERSION = '2025-06-18'

// JSON-RPC error codes
const METHOD_NOT_FOUND = -32601
const INVALID_PARAMS = -32602
const INVALID_REQUEST = -32600
const PARSE_ERROR = -32700
const RESOURCE_NOT_FOUND = -32002 // MCP's code for an unknown resource URI

class RpcError extends Error {
  constructor(code, message) {
    super(message)
    this.code = code
  }
}

// ---------------------------------------------------------------- tools

const text = (t) => ({ content: [{ type: 'text', text: t }] })

function requireString(args, key) {
  if (typeof args[key] !== 'string') throw new RpcError(INVALID_PARAMS, `'${key}' must be a string`)
  return args[key]
}
function requireNumber(args, key) {
  if (typeof args[key] !== 'number') throw new RpcError(INVALID_PARAMS, `'${key}' must be a number`)
  return args[key]
}

const tools = {
  echo: {
    description: 'Echo back the given text',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'Text to echo back' } },
      required: ['text'],
    },
    run: (args) => text(requireString(args, 'text')),
  },
  add: {
    description: 'Add two numbers',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    run: (args) => text(String(requireNumber(args, 'a') + requireNumber(args, 'b'))),
  },
  current_time: {
    description: 'The current time as an ISO 8601 string (UTC)',
    inputSchema: { type: 'object', properties: {} },
    run: () => text(new Date().toISOString()),
  },
  word_count: {
    description: 'Count the words in a text',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'The text to count' } },
      required: ['text'],
    },
    run: (args) => {
      const words = requireString(args, 'text').split(/\s+/).filter(Boolean)
      return text(String(words.length))
    },
  },
}

// ---------------------------------------------------------------- resources

const resources = {
  'example://readme': {
    name: 'readme',
    description: 'What this example server offers',
    mimeType: 'text/plain',
    text:
      'This is the example MCP server of @openclaw/mcp-native.\n' +
      'Tools: echo, add, current_time, word_count.\n' +
      'Read examples/echo-server.mjs to see how an MCP server works.',
  },
}

// ---------------------------------------------------------------- methods

const handlers = {
  initialize(params) {
    const asked = params?.protocolVersion
    return {
      protocolVersion: SUPPORTED_VERSIONS.includes(asked) ? asked : DEFAULT_VERSION,
      capabilities: { tools: {}, resources: {} },
      serverInfo: { name: 'openclaw-example', version: '1.0.0' },
    }
  },

  ping: () => ({}),

  'tools/list': () => ({
    tools: Object.entries(tools).map(([name, t]) => ({
      name,
      description: t.description,
      inputSchema: t.inputSchema,
    })),
  }),

  'tools/call'(params) {
    const tool = Object.hasOwn(tools, params?.name) ? tools[params.name] : undefined
    if (!tool) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${params?.name}`)
    const args = params.arguments ?? {}
    if (typeof args !== 'object' || Array.isArray(args)) {
      throw new RpcError(INVALID_PARAMS, 'arguments must be an object')
    }
    return tool.run(args)
  },

  'resources/list': () => ({
    resources: Object.entries(resources).map(([uri, r]) => ({
      uri,
      name: r.name,
      description: r.description,
      mimeType: r.mimeType,
    })),
  }),

  'resources/read'(params) {
    const uri = params?.uri
    if (typeof uri !== 'string') throw new RpcError(INVALID_PARAMS, "'uri' must be a string")
    const r = Object.hasOwn(resources, uri) ? resources[uri] : undefined
    if (!r) throw new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`)
    return { contents: [{ uri, mimeType: r.mimeType, text: r.text }] }
  },
}

// ---------------------------------------------------------------- transport

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
}

function handle(line) {
  if (!line.trim()) return
  let msg
  try {
    msg = JSON.parse(line)
  } catch {
    return send({ id: null, error: { code: PARSE_ERROR, message: 'Parse error' } })
  }
  const isRequest = msg !== null && typeof msg === 'object' && 'id' in msg
  if (msg?.jsonrpc !== '2.0' || typeof msg.method !== 'string') {
    // Responses to requests we never sent, or garbage: answer only if it has an id.
    if (isRequest && !('result' in msg || 'error' in msg)) {
      send({ id: msg.id, error: { code: INVALID_REQUEST, message: 'Invalid request' } })
    }
    return
  }
  // Notifications (no id) get no answer: notifications/initialized,
  // notifications/cancelled (our calls finish at once) and the rest.
  if (!isRequest) return

  const handler = Object.hasOwn(handlers, msg.method) ? handlers[msg.method] : undefined
  if (!handler) {
    return send({ id: msg.id, error: { code: METHOD_NOT_FOUND, message: `Method not found: ${msg.method}` } })
  }
  try {
    send({ id: msg.id, result: handler(msg.params) })
  } catch (err) {
    const code = err instanceof RpcError ? err.code : -32603
    send({ id: msg.id, error: { code, message: err.message } })
  }
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity })
input.on('line', handle)
input.on('close', () => process.exit(0))
