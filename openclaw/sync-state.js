'use strict'
// What `openclaw-mcp-native openclaw sync` leaves in the plugin's directory, read and written:
//   openclaw.plugin.json  `contracts.tools`: every tool name OpenClaw may offer for the plugin
//                         (OpenClaw drops any other name a plugin's tool factory returns)
//   openclaw.tools.json   per agent view, the tool definitions seen at the sync (name, label,
//                         description, parameters, server), and per server a hash of its tools,
//                         so the plugin can offer them before the servers are up and the next
//                         sync can say what changed.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

const MANIFEST = 'openclaw.plugin.json'
const SYNC_FILE = 'openclaw.tools.json'
/** OpenClaw refuses a plugin's registerTool without at least one declared name. Never offered. */
const PLACEHOLDER_TOOL = 'mcp_native_not_synced'

/** `{ declared: string[], agents: { [agent]: def[] }, servers: { [server]: { hash, tools } } }`. */
function readSyncState(rootDir) {
  let declared = []
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(rootDir, MANIFEST), 'utf8'))
    declared = Array.isArray(manifest?.contracts?.tools) ? manifest.contracts.tools.filter((n) => typeof n === 'string' && n !== PLACEHOLDER_TOOL) : []
  } catch {}
  let synced = {}
  try {
    synced = JSON.parse(fs.readFileSync(path.join(rootDir, SYNC_FILE), 'utf8'))
  } catch {}
  return {
    declared,
    agents: synced && typeof synced.agents === 'object' && synced.agents ? synced.agents : {},
    servers: synced && typeof synced.servers === 'object' && synced.servers ? synced.servers : {},
  }
}

/** A stable hash of a server's tool definitions as offered (names, descriptions, schemas). */
function hashTools(defs) {
  const canonical = JSON.stringify(defs.map((d) => [d.name, d.label, d.description, d.parameters]))
  return crypto.createHash('sha256').update(canonical).digest('hex').slice(0, 16)
}

function writeAtomic(file, text) {
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, text)
  fs.renameSync(tmp, file)
}

/** Writes contracts.tools (keeping every other manifest field) and openclaw.tools.json. */
function writeSyncState(rootDir, { names, agents, servers }) {
  const manifestPath = path.join(rootDir, MANIFEST)
  let manifest
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'))
  } catch (e) {
    throw new Error(`${manifestPath}: cannot read the plugin manifest (${e.code === 'ENOENT' ? 'no such file' : e.message})`)
  }
  manifest.contracts = { ...(manifest.contracts ?? {}), tools: names.length > 0 ? names : [PLACEHOLDER_TOOL] }
  writeAtomic(manifestPath, JSON.stringify(manifest, null, 2) + '\n')
  writeAtomic(path.join(rootDir, SYNC_FILE), JSON.stringify({ version: 1, syncedAt: new Date().toISOString(), agents, servers }, null, 2) + '\n')
  return { manifestPath, syncPath: path.join(rootDir, SYNC_FILE) }
}

module.exports = { MANIFEST, SYNC_FILE, PLACEHOLDER_TOOL, readSyncState, writeSyncState, hashTools }
