// Many agents on few processes (issue 14): an openclaw.json with A agents sharing S servers,
// run the way a gateway did before (one manager per agent, `managerConfigsForOpenclaw`) and with
// one manager plus a view per agent (`sharedManagerConfigForOpenclaw` + `manager.view()`), in
// the same run, each in a fresh Node process, same server (examples/echo-server.mjs).
//
//   node bench/many-agents.mjs [--agents 12] [--servers 10] [--addon PATH] [--out FILE]
//
// Per row: server processes (counted under /proc by a tag in their command line), their total
// RSS, the host's RSS, start() time, the time for every agent's getAgentTools(), one call per
// agent, and shutdown(). Prints a markdown table with the ratios and, with --out, JSON.

import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { argv, opt, repo } from './lib/cli.mjs'


if (argv[0] === '--child') {
  await child(JSON.parse(argv[1]))
} else {
  parent()
}

function parent() {
  const agents = Number(opt('--agents', '12'))
  const servers = Number(opt('--servers', '10'))
  const addon = resolve(opt('--addon', resolve(repo, 'index.js')))
  const rows = []
  for (const mode of ['per-agent', 'shared']) {
    const tag = `many-agents-${process.pid}-${mode}`
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify({ mode, agents, servers, addon, tag })], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    if (run.status !== 0) throw new Error(`${mode} run failed (${run.status})`)
    rows.push(JSON.parse(run.stdout.trim().split('\n').pop()))
  }
  const [before, after] = rows
  const ratio = (k) => (after[k] / before[k]).toFixed(3)
  const lines = [
    `${agents} agents × ${servers} servers (examples/echo-server.mjs), ${new Date().toISOString().slice(0, 10)}, node ${process.version}`,
    '',
    '| | server processes | servers\' RSS (MB) | host RSS (MB) | start() (ms) | getAgentTools() all agents (ms) | one call per agent (ms) | shutdown() (ms) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.mode === 'shared' ? 'one manager + a view per agent' : 'one manager per agent'} | ${r.processes} | ${r.serverRssMb.toFixed(0)} | ${r.hostRssMb.toFixed(0)} | ${r.startMs.toFixed(0)} | ${r.toolsMs.toFixed(2)} | ${r.callsMs.toFixed(1)} | ${r.shutdownMs.toFixed(0)} |`),
    `| shared / per-agent | ${ratio('processes')} | ${ratio('serverRssMb')} | ${ratio('hostRssMb')} | ${ratio('startMs')} | ${ratio('toolsMs')} | ${ratio('callsMs')} | ${ratio('shutdownMs')} |`,
  ]
  console.log(lines.join('\n'))
  const out = opt('--out')
  if (out) writeFileSync(out, JSON.stringify({ agents, servers, rows }, null, 2))
}

/** Pids of live processes whose command line holds `tag`, and their total RSS in MB. */
function tagged(tag) {
  let count = 0
  let rssKb = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(tag)) continue
      const status = readFileSync(`/proc/${entry}/status`, 'utf8')
      const rss = /VmRSS:\s+(\d+) kB/.exec(status)
      if (!rss) continue // a zombie
      count++
      rssKb += Number(rss[1])
    } catch {
      // gone meanwhile
    }
  }
  return { count, rssMb: rssKb / 1024 }
}

async function child({ mode, agents, servers, addon, tag }) {
  const require = createRequire(import.meta.url)
  const native = require(addon)
  const server = { command: process.execPath, args: [resolve(repo, 'examples/echo-server.mjs'), '--tag', tag] }
  const shared = Object.fromEntries(Array.from({ length: servers }, (_, i) => [`s${i}`, server]))
  const openclaw = {
    agents: { defaults: { mcp: { servers: shared } }, list: Array.from({ length: agents }, (_, i) => ({ id: `agent${i}` })) },
  }
  const t0 = performance.now()
  let managers
  let surfaces
  if (mode === 'shared') {
    const { config, agents: views } = native.sharedManagerConfigForOpenclaw(openclaw)
    const manager = new native.McpManager(config)
    await manager.start()
    managers = [manager]
    surfaces = views.map((a) => manager.view(a.view))
  } else {
    managers = native.managerConfigsForOpenclaw(openclaw).map((a) => new native.McpManager(a.config))
    await Promise.all(managers.map((m) => m.start()))
    surfaces = managers
  }
  const startMs = performance.now() - t0
  const { count: processes, rssMb: serverRssMb } = tagged(tag)
  const t1 = performance.now()
  const toolSets = surfaces.map((s) => s.getAgentTools())
  const toolsMs = performance.now() - t1
  const t2 = performance.now()
  await Promise.all(toolSets.map((tools) => tools.find((t) => t.name === 'mcp_s0_echo').execute('c', { text: 'hi' })))
  const callsMs = performance.now() - t2
  const hostRssMb = process.memoryUsage().rss / 1048576
  const t3 = performance.now()
  await Promise.all(managers.map((m) => m.shutdown()))
  const shutdownMs = performance.now() - t3
  console.log(JSON.stringify({ mode, processes, serverRssMb, hostRssMb, startMs, toolsMs, callsMs, shutdownMs }))
}
