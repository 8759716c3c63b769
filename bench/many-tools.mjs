// A server listing a huge number of tools (issue 12, defect 7): host RSS and the JS thread's
// longest block, native against the SDK-based manager (bench/lib/sdk-manager.mjs), each in a
// fresh Node process, same server (fault-server.mjs with a generated --tools-file), same run.
//
//   node bench/many-tools.mjs [--tools 45000] [--rows default,raised,sdk] [--addon PATH] [--out FILE]
//
// 45,000 tools make an 8.7 MB listing: the SDK's stdio reader refuses a message over 10 MB, so
// a larger --tools leaves the SDK row empty (the server's listing fails there).
//
// Rows: native with the default maxTools (10,000), native with maxTools raised to the whole
// listing, and the SDK manager (no bound). For each: start() time, RSS after start(), the
// blocks of three getAgentTools() calls (synchronous: the call's duration is the block) and
// RSS after them; and the peak RSS while start() reads the listing (issue 37: the kernel's
// high-water mark, VmHWM, reset through /proc/self/clear_refs right after the baseline, so it
// is the true peak, not a sample). Prints a markdown table and, with --out, JSON. --rows picks
// which of the three rows run (all by default).

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { argv, opt, repo } from './lib/cli.mjs'


if (argv[0] === '--child') {
  await child(JSON.parse(argv[1]))
} else {
  await parent()
}

async function parent() {
  const count = Number(opt('--tools', '45000'))
  const dir = mkdtempSync(join(tmpdir(), 'many-tools-'))
  const file = join(dir, 'tools.json')
  const tools = []
  for (let i = 0; i < count; i++) {
    tools.push({
      name: `tool_${i}`,
      description: `Tool number ${i}: looks up the query.`,
      inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'What to look up' } }, required: ['query'] },
    })
  }
  const listing = JSON.stringify(tools)
  writeFileSync(file, listing)
  const addon = opt('--addon') ? resolve(opt('--addon')) : undefined
  const picked = opt('--rows', 'default,raised,sdk').split(',')
  const rows = [
    { key: 'default', client: 'native', label: 'native, default maxTools' },
    { key: 'raised', client: 'native', label: 'native, maxTools = listing', maxTools: count + 100 },
    { key: 'sdk', client: 'sdk', label: 'SDK manager' },
  ].filter((row) => picked.includes(row.key))
  const results = []
  for (const row of rows) {
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', JSON.stringify({ ...row, file, addon })], {
      encoding: 'utf8',
      env: addon ? { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: addon } : process.env,
      maxBuffer: 1 << 24,
    })
    const line = r.stdout.trim().split('\n').pop()
    if (r.status !== 0 || !line?.startsWith('{')) throw new Error(`${row.label} failed: ${r.stderr.slice(-2000)}`)
    results.push({ ...row, ...JSON.parse(line) })
  }
  const mb = (kb) => (kb / 1024).toFixed(0)
  console.log(`tools/list: ${count} tools, ${(listing.length / 1048576).toFixed(1)} MB\n`)
  console.log('| client | tools offered | start() | peak RSS during start() | RSS after start | getAgentTools() blocks (1st, 2nd, 3rd) | RSS after |')
  console.log('|---|---|---|---|---|---|---|')
  for (const r of results) {
    const peak = r.rssPeakKB === undefined ? '–' : `+${mb(r.rssPeakKB - r.rssBaseKB)} MB (${((r.rssPeakKB - r.rssBaseKB) * 1024 / listing.length).toFixed(1)}× the listing)`
    console.log(`| ${r.label} | ${r.offered} | ${r.startMs} ms | ${peak} | +${mb(r.rssStartKB - r.rssBaseKB)} MB | ${r.blocksMs.join(', ')} ms | +${mb(r.rssEndKB - r.rssBaseKB)} MB |`)
  }
  const sdk = results.find((r) => r.client === 'sdk' && r.offered > 0)
  if (!sdk) console.log('the SDK manager listed no tools (its stdio reader refuses a message over 10 MB)')
  else for (const r of results.filter((r) => r.client === 'native')) {
    console.log(`${r.label}: first block ${(r.blocksMs[0] / sdk.blocksMs[0]).toFixed(2)}× the SDK's, RSS after ${((r.rssEndKB - r.rssBaseKB) / (sdk.rssEndKB - sdk.rssBaseKB)).toFixed(2)}× the SDK's`)
  }
  if (opt('--out')) writeFileSync(opt('--out'), JSON.stringify({ tools: count, listingBytes: listing.length, results }, null, 2))
}

async function child({ client, file, maxTools }) {
  const rssKB = () => Math.round(process.memoryUsage().rss / 1024)
  const status = (field) => Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))?.[1])
  const Manager = client === 'sdk'
    ? (await import('./lib/sdk-manager.mjs')).SdkMcpManager
    : (await import(join(repo, 'index.js'))).McpManager
  const server = { command: process.execPath, args: [join(repo, '__test__/fixtures/fault-server.mjs'), '--tools-file', file], timeout: 300000 }
  if (maxTools !== undefined) server.maxTools = maxTools
  globalThis.gc()
  const rssBaseKB = rssKB()
  // From here VmHWM is the peak above this baseline (Linux ≥ 4.0; left out where refused).
  let peakable = true
  try { writeFileSync('/proc/self/clear_refs', '5') } catch { peakable = false }
  const manager = new Manager({ servers: { f: server } }, {})
  let t = performance.now()
  await manager.start()
  const startMs = Math.round(performance.now() - t)
  const rssPeakKB = peakable ? status('VmHWM') : undefined
  globalThis.gc()
  const rssStartKB = rssKB()
  const blocksMs = []
  let offered = 0
  for (let i = 0; i < 3; i++) {
    t = performance.now()
    const tools = manager.getAgentTools()
    blocksMs.push(Math.round(performance.now() - t))
    offered = tools.length
  }
  globalThis.gc()
  const rssEndKB = rssKB()
  await manager.shutdown()
  console.log(JSON.stringify({ offered, startMs, rssBaseKB, rssPeakKB, rssStartKB, rssEndKB, blocksMs }))
}
