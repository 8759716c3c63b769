// The four clients the benchmarks compare, behind one small interface:
//
//   contender.start(specs) -> session   (construct + connect every server + list tools)
//   session.getTools()                   (the agent tool list; may return a Promise)
//   session.caller(tool, server?, { agentRun }) -> (args) => Promise<raw result>
//                                        (agentRun: execute() gets what an agent run passes it, one
//                                        AbortSignal for the whole run and an onUpdate; the SDK
//                                        manager, like the original module, ignores both)
//   session.text(raw) -> string          (checks the result, outside the timed region)
//   session.shutdown()
//
// `specs` is [{ name, command, args }], or [{ name, url }] for a Streamable HTTP server (the HTTP
// rows). Tool names are the server's own ('echo', 'text').

import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RawHttpClient, RawPipeClient } from './raw-client.mjs'
import { SdkMcpManager } from './sdk-manager.mjs'

const BENCH = join(dirname(fileURLToPath(import.meta.url)), '..')
export const RUST_SERVER = join(BENCH, 'rust-server', 'target', 'release', 'mcp-bench-server')
export const NODE_SERVER = join(BENCH, 'node-server.mjs')
// One thread, one write(2) per answer, no JSON library (bench/c-server/server.c): the server
// whose own time is smallest, so its rows show the client and the pipe. Built by bench/run.mjs.
export const C_SERVER = join(BENCH, 'c-server', 'target', 'mcp-bench-c-server')

/** Command line of one benchmark server. */
export function serverSpec(kind, name, { tools = 0, ignoreSigterm = false } = {}) {
  const extra = []
  if (tools) extra.push('--tools', String(tools))
  if (ignoreSigterm) extra.push('--ignore-sigterm')
  if (kind === 'rust') return { name, command: RUST_SERVER, args: extra }
  if (kind === 'node') return { name, command: process.execPath, args: [NODE_SERVER, ...extra] }
  if (kind === 'c') {
    if (tools || ignoreSigterm) throw new Error('the C bench server has no --tools or --ignore-sigterm')
    return { name, command: C_SERVER, args: [] }
  }
  throw new Error(`unknown server kind ${kind}`)
}

function agentToolText(result) {
  if (result?.details?.error) throw new Error(result.content?.[0]?.text ?? 'tool error')
  const text = result?.content?.[0]?.text
  if (typeof text !== 'string') throw new Error('no text in result')
  return text
}

// --------------------------------------------------------------------------- native (the addon)

let nativeAddon
export function loadNative(addonPath) {
  if (!nativeAddon) nativeAddon = createRequire(import.meta.url)(resolve(addonPath))
  return nativeAddon
}

export function nativeContender(addonPath, options = {}) {
  const { McpManager } = loadNative(addonPath)
  return {
    id: 'native',
    async start(specs) {
      const servers = Object.fromEntries(
        specs.map((s) => [s.name, s.url ? { transport: 'http', url: s.url } : { command: s.command, args: s.args }]),
      )
      const manager = new McpManager({ servers }, options)
      await manager.start()
      return {
        verify() {
          const bad = manager.getStatus().filter((s) => s.status !== 'ready')
          if (bad.length) throw new Error(`native: not ready: ${JSON.stringify(bad)}`)
        },
        getTools: () => manager.getAgentTools(),
        caller(tool, server = specs[0].name, { agentRun = false } = {}) {
          const t = manager.getAgentTools().find((x) => x.name === `mcp_${server}_${tool}`)
          if (!t) throw new Error(`native: no tool ${tool}`)
          if (!agentRun) return (args) => t.execute('bench', args)
          const run = new AbortController()
          const onUpdate = () => {}
          return (args) => t.execute('bench', args, run.signal, onUpdate)
        },
        text: agentToolText,
        shutdown: () => manager.shutdown(),
      }
    },
  }
}

// ------------------------------------------------------------- the OpenClaw-like SDK manager

export function sdkContender() {
  return {
    id: 'sdk',
    async start(specs) {
      const servers = Object.fromEntries(specs.map((s) => [s.name, s.url ? { url: s.url } : { command: s.command, args: s.args }]))
      const manager = new SdkMcpManager({ servers }, {})
      await manager.start()
      return {
        verify() {
          const bad = manager.getStatus().filter((s) => s.status !== 'ready')
          if (bad.length) throw new Error(`sdk: not ready: ${JSON.stringify(bad)}`)
        },
        getTools: () => manager.getAgentTools(),
        caller(tool, server = specs[0].name, { agentRun = false } = {}) {
          const t = manager.getAgentTools().find((x) => x.name === `mcp_${server}_${tool}`)
          if (!t) throw new Error(`sdk: no tool ${tool}`)
          if (!agentRun) return (args) => t.execute('bench', args)
          const run = new AbortController()
          const onUpdate = () => {}
          return (args) => t.execute('bench', args, run.signal, onUpdate)
        },
        text: agentToolText,
        shutdown: () => manager.shutdown(),
      }
    },
  }
}

// ---------------------------------------------------------------- LangChain MultiServerMCPClient

let langchain
export async function loadLangChain() {
  if (langchain === undefined) {
    try {
      langchain = await import('@langchain/mcp-adapters')
    } catch (error) {
      langchain = null
      console.warn(`@langchain/mcp-adapters not installed (${error.code ?? error.message}): LangChain columns skipped`)
    }
  }
  return langchain
}

export async function langchainContender() {
  const lc = await loadLangChain()
  if (!lc) return null
  return {
    id: 'langchain',
    async start(specs) {
      const mcpServers = Object.fromEntries(
        specs.map((s) => [s.name, s.url ? { transport: 'http', url: s.url } : { transport: 'stdio', command: s.command, args: s.args }]),
      )
      const client = new lc.MultiServerMCPClient({
        mcpServers,
        onConnectionError: 'throw',
        throwOnLoadError: true,
        prefixToolNameWithServerName: true,
      })
      await client.initializeConnections()
      const tools = await client.getTools()
      return {
        verify() {
          if (tools.length === 0) throw new Error('langchain: no tools')
        },
        getTools: () => client.getTools(),
        caller(tool, server = specs[0].name) {
          const t = tools.find((x) => x.name === `${server}__${tool}`)
          if (!t) throw new Error(`langchain: no tool ${tool}`)
          return (args) => t.invoke(args)
        },
        text(result) {
          if (typeof result === 'string') return result
          if (Array.isArray(result)) return result.map((c) => c.text ?? '').join('\n')
          throw new Error(`langchain: unexpected result ${typeof result}`)
        },
        shutdown: () => client.close(),
      }
    },
  }
}

// ----------------------------------------------------------------------- floor: raw JSON-RPC pipe

export function floorContender() {
  return {
    id: 'floor',
    async start(specs) {
      const clients = specs.map((s) => (s.url ? new RawHttpClient(s.url) : new RawPipeClient(s.command, s.args)))
      try {
        await Promise.all(clients.map((c) => c.start()))
      } catch (error) {
        for (const c of clients) c.kill()
        throw error
      }
      return {
        verify() {},
        getTools: () => clients.flatMap((c) => c.tools),
        caller(tool, server = specs[0].name) {
          const c = clients[specs.findIndex((s) => s.name === server)]
          return (args) => c.call(tool, args)
        },
        text: (r) => r,
        shutdown: () => Promise.all(clients.map((c) => c.close())),
      }
    },
  }
}
