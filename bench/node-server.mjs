#!/usr/bin/env node
// The benchmark's "realistic" MCP server: the same tools as bench/rust-server, written the way
// most servers are, on @modelcontextprotocol/sdk (McpServer + zod + StdioServerTransport).
//
//   node bench/node-server.mjs [--tools N] [--ignore-sigterm] [--linger-s S]
//
// Tools: echo {text}, text {bytes} (bench/lib/text.mjs, same bytes as the Rust server), and N
// generated tools tool_0000.. with the same argument schema. --ignore-sigterm: SIGTERM is ignored
// and the process stays up after stdin closes (until SIGKILL or --linger-s, default 30 s).
// The process exits by itself when its parent dies.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { z } from 'zod'
import { genText } from './lib/text.mjs'

const argv = process.argv.slice(2)
const flag = (name) => argv.includes(name)
const num = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const generated = num('--tools', 0)
const ignoreSigterm = flag('--ignore-sigterm')
const lingerS = num('--linger-s', 30)

const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) process.exit(0)
}, 200).unref()

const server = new McpServer({ name: 'mcp-bench-node-server', version: '0.0.0' })

server.registerTool(
  'echo',
  { description: 'Echo back the given text', inputSchema: { text: z.string().describe('Text to echo back') } },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
)
server.registerTool(
  'text',
  { description: 'Return `bytes` bytes of generated text', inputSchema: { bytes: z.number().int().min(0).describe('How many bytes of text') } },
  async ({ bytes }) => ({ content: [{ type: 'text', text: genText(Math.min(bytes, 256 * 1024 * 1024)) }] }),
)
for (let i = 0; i < generated; i++) {
  const name = `tool_${String(i).padStart(4, '0')}`
  server.registerTool(
    name,
    {
      description: `Generated tool ${i}: searches collection ${i} and returns the matching records`,
      inputSchema: {
        query: z.string().describe('Search query'),
        limit: z.number().int().min(1).max(100).optional().describe('Maximum number of results'),
        mode: z.enum(['fast', 'exact', 'fuzzy']).optional().describe('Matching mode'),
        tags: z.array(z.string()).optional(),
        options: z.object({ verbose: z.boolean().optional(), depth: z.number().describe('Recursion depth') }).optional(),
      },
    },
    async () => ({ content: [{ type: 'text', text: `${name}: ok` }] }),
  )
}

if (ignoreSigterm) {
  process.on('SIGTERM', () => {})
  process.stdin.on('end', () => setTimeout(() => process.exit(0), lingerS * 1000))
}

await server.connect(new StdioServerTransport())
