// The benchmark's stand-in for OpenClaw's TypeScript `src/mcp` module (PR #21530): a manager on
// `@modelcontextprotocol/sdk` that does the same work, written from
// /work/shared/openclaw-contract.md (sections 2-5, 9):
//   start(): every server in parallel: Client + StdioClientTransport (client info
//            openclaw-mcp/1.0.0, host environment inherited, stderr inherited), connect, tools/list;
//   getAgentTools(): fresh AgentTool objects: mcp_<prefix>_<tool> names, labels, descriptions,
//            the compat schema conversion (section 4) on every call;
//   execute(): callTool, collect text parts (text / [Image: ...]), join with '\n', detect the 14
//            suspicious patterns (warn log), wrap as untrusted content (id format); errors become
//            'MCP tool error (<server>/<tool>): <message>' results; never throws;
//   shutdown(): the SDK's own close() for every client in parallel (stdin end, 2 s, SIGTERM, 2 s,
//            SIGKILL).
// The original used TypeBox to build the converted schema; this builds the same JSON shape with
// plain objects.

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { wrapToolResult } from './openclaw-wrap.mjs'

const noop = () => {}

export function convertSchema(schema) {
  if (!schema || schema.type !== 'object') return { type: 'object', properties: {} }
  return convertObject(schema)
}

function convertObject(schema) {
  const properties = {}
  for (const [key, prop] of Object.entries(schema.properties ?? {})) properties[key] = convertProperty(prop)
  const required = Array.isArray(schema.required) ? schema.required : []
  return required.length > 0 ? { type: 'object', required, properties } : { type: 'object', properties }
}

function convertProperty(prop) {
  let out
  switch (prop?.type) {
    case 'string':
      if (Array.isArray(prop.enum)) {
        out = prop.enum.length === 0 ? { not: {} } : { anyOf: prop.enum.map((v) => ({ const: v, type: 'string' })) }
      } else out = { type: 'string' }
      break
    case 'number':
    case 'integer':
      out = { type: 'number' }
      break
    case 'boolean':
      out = { type: 'boolean' }
      break
    case 'array':
      out = { type: 'array', items: prop.items ? convertProperty(prop.items) : {} }
      break
    case 'object':
      out = prop.properties ? convertObject(prop) : { type: 'object', patternProperties: { '^(.*)$': {} } }
      break
    default:
      out = {}
  }
  if (prop?.description) out.description = prop.description
  return out
}

function resultText(result) {
  const parts = []
  for (const item of result?.content ?? []) {
    if (item.type === 'text' && item.text) parts.push(item.text)
    else if (item.type === 'image') parts.push(`[Image: ${item.mimeType ?? 'unknown'}]`)
  }
  return parts.join('\n')
}

export class SdkMcpManager {
  #servers = []
  #log

  constructor(config, options = {}) {
    const logger = options.logger ?? {}
    this.#log = {
      debug: logger.debug?.bind(logger) ?? noop,
      info: logger.info?.bind(logger) ?? noop,
      warn: logger.warn?.bind(logger) ?? noop,
      error: logger.error?.bind(logger) ?? noop,
    }
    for (const [name, cfg] of Object.entries(config.servers ?? {})) {
      if (cfg.enabled === false) continue
      if ((cfg.transport ?? 'stdio') !== 'stdio') throw new Error(`Unknown transport '${cfg.transport}' for server '${name}'`)
      this.#servers.push({ name, cfg, status: 'disconnected', client: null, tools: [] })
    }
  }

  async start() {
    await Promise.all(this.#servers.map((s) => this.#connect(s)))
  }

  async #connect(s) {
    s.status = 'connecting'
    try {
      // A server with a url is reached over Streamable HTTP (the bench's HTTP rows).
      const transport = s.cfg.url
        ? new StreamableHTTPClientTransport(new URL(s.cfg.url))
        : new StdioClientTransport({
            command: s.cfg.command,
            args: s.cfg.args ?? [],
            env: { ...process.env, ...(s.cfg.env ?? {}) },
            cwd: s.cfg.cwd,
          })
      const client = new Client({ name: 'openclaw-mcp', version: '1.0.0' }, { capabilities: {} })
      await client.connect(transport)
      const { tools } = await client.listTools()
      s.client = client
      s.tools = tools
      s.status = 'ready'
      this.#log.info(`MCP server '${s.name}' connected (${tools.length} tools)`)
    } catch (error) {
      s.status = 'error'
      this.#log.error(`MCP server '${s.name}' failed to start: ${error?.message ?? error}`)
    }
  }

  getStatus() {
    return this.#servers.map((s) => ({ name: s.name, status: s.status, toolCount: s.tools.length }))
  }

  getAgentTools() {
    const out = []
    for (const s of this.#servers) {
      if (s.status !== 'ready') continue
      for (const tool of s.tools) out.push(this.#agentTool(s, tool))
    }
    return out
  }

  getTools() {
    return this.getAgentTools()
  }

  #agentTool(s, tool) {
    const prefix = s.cfg.toolPrefix ?? s.name
    const timeout = s.cfg.toolTimeout ?? 60000
    return {
      name: `mcp_${prefix}_${tool.name}`,
      label: `MCP: ${s.name}/${tool.name}`,
      description: `[MCP server: ${s.name}] ${tool.description ?? 'No description'}`,
      parameters: convertSchema(tool.inputSchema),
      execute: async (_toolCallId, params) => {
        try {
          if (s.status !== 'ready') throw new Error(`MCP server '${s.name}' is not ready (status: ${s.status})`)
          const started = performance.now()
          const result = await s.client.callTool({ name: tool.name, arguments: params ?? {} }, undefined, { timeout })
          this.#log.debug(`MCP tool call ${s.name}/${tool.name} took ${Math.round(performance.now() - started)} ms`)
          const text = resultText(result)
          const wrapped = wrapToolResult(text, s.name, (found) =>
            this.#log.warn(`MCP server '${s.name}' tool '${tool.name}' returned suspicious patterns: ${found.join(', ')}`),
          )
          return {
            content: [{ type: 'text', text: wrapped }],
            details: { externalContent: { untrusted: true, source: 'mcp_server', server: s.name, tool: tool.name, wrapped: true } },
          }
        } catch (error) {
          return {
            content: [{ type: 'text', text: `MCP tool error (${s.name}/${tool.name}): ${error?.message ?? error}` }],
            details: { error: true },
          }
        }
      },
    }
  }

  async shutdown() {
    await Promise.all(
      this.#servers.map(async (s) => {
        const client = s.client
        s.client = null
        s.status = 'closed'
        if (client) {
          try {
            await client.close()
          } catch {
            // never rejects
          }
          this.#log.info(`MCP server '${s.name}' stopped`)
        }
      }),
    )
  }
}
