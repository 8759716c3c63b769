// How well the addon's prompt-injection detectors work: for each detector ('openclaw', the
// default, and 'enhanced' when the build has it)
//   - recall on attack corpora (bastioncorpus's malicious rows; AgentDojo's injection tasks as
//     its `important_instructions` attack renders them, as bare goals, and under its other
//     fixed-template attacks), each as is and disguised by the transforms of
//     lib/injection-transforms.mjs (zero-width characters, fullwidth forms, Unicode tag
//     characters, homoglyphs): detected / total;
//   - false positives on benign text cut into passages of at most 2,000 characters (paragraph or
//     line boundaries): bastioncorpus's benign rows, the README*.md of every package in
//     node_modules, a deterministic sample of ~300 source files from node_modules (≤ 3 MB), and
//     real tool output (server-filesystem on docs/ and server-everything's harmless tools, run
//     through the addon itself and unwrapped from the untrusted-content block, plus this repo's
//     git log/show): passages flagged / passages;
//   - throughput (MB/s) over the README prose (its passages concatenated): the median of 5
//     rounds of ≥ 5 MB each, so one slow round (a page fault storm, a busy core) does not decide.
// `detectInjection(content, { detection })` is used when the addon exports it; otherwise only
// 'openclaw' is evaluated, through `detectSuspiciousPatterns`.
//
//   bash scripts/detector-eval.sh [--show-misses N] [--json OUT]     (builds the corpus first)
//   node bench/detector-eval.mjs [--addon PATH] [--corpus DIR] [--json OUT] [--show-misses N]
//
// --corpus: the JSONL files of scripts/detector-corpus.py (default target/detector-corpus).
// --show-misses N: up to N missed attacks, N evasions (caught as is, missed once transformed)
// and N false positives per detector, 160 characters each, for tuning. Prints one markdown
// table (recall and false-positive rows, one column per detector), a throughput line per
// detector and, with 'enhanced', a one-line summary. A bad item is counted and reported, never
// fatal.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { opt, repo } from './lib/cli.mjs'
import { TRANSFORMS } from './lib/injection-transforms.mjs'

const t0 = performance.now()
const require = createRequire(import.meta.url)
const native = require(resolve(opt('--addon', resolve(repo, 'index.js'))))
const corpusDir = resolve(opt('--corpus', resolve(repo, 'target/detector-corpus')))
const jsonOut = opt('--json', null)
const showMisses = Number(opt('--show-misses', '0'))
const PASSAGE = 2000
const SOURCE_FILES = 300
const SOURCE_BYTES = 3 * 1024 * 1024
const SOURCE_FILE_MAX = 256 * 1024 // bigger files (bundles, generated tables) are left out of the sample
const THROUGHPUT_BYTES = 5 * 1024 * 1024
const THROUGHPUT_ROUNDS = 5
const notes = []
const problems = [] // bad items: counted, reported, skipped

// --- the detectors --------------------------------------------------------------------------

const detectors = {}
if (typeof native.detectInjection === 'function') {
  for (const detection of ['openclaw', 'enhanced']) {
    try {
      native.detectInjection('hello', { detection })
      detectors[detection] = (s) => native.detectInjection(s, { detection })
    } catch (error) {
      notes.push(`detectInjection(…, { detection: '${detection}' }) throws (${error.message}): not evaluated`)
    }
  }
} else {
  detectors.openclaw = (s) => native.detectSuspiciousPatterns(s)
  notes.push('the enhanced detector is not in this build (no detectInjection export): evaluating openclaw through detectSuspiciousPatterns only')
}
const names = Object.keys(detectors)
// The binary actually loaded (a debug build is far slower: see the throughput line).
const binaries = Object.keys(require.cache).filter((k) => k.endsWith('.node'))
  .map((k) => `${relative(repo, k).startsWith('..') ? k : relative(repo, k)} (${(statSync(k).size / 1e6).toFixed(0)} MB)`)
if (names.length === 0) {
  console.error('detector-eval: no usable detector in this addon')
  process.exit(1)
}

/** The detector's findings, or null (counted) when it throws. */
function detect(name, text, where) {
  try {
    const found = detectors[name](text)
    return Array.isArray(found) ? found : []
  } catch (error) {
    problems.push(`${name} threw on ${where}: ${error.message}`)
    return null
  }
}

// --- the attack corpora ---------------------------------------------------------------------

if (!existsSync(corpusDir)) {
  console.error(`detector-eval: no corpus at ${corpusDir}; run: bash scripts/detector-eval.sh`)
  process.exit(1)
}
const rows = []
for (const file of readdirSync(corpusDir).filter((f) => f.endsWith('.jsonl')).sort()) {
  readFileSync(join(corpusDir, file), 'utf8').split('\n').forEach((line, i) => {
    if (!line.trim()) return
    try {
      const row = JSON.parse(line)
      if (typeof row.text !== 'string' || !['attack', 'benign'].includes(row.label)) throw new Error('no text or label')
      rows.push({ file, ...row })
    } catch (error) {
      problems.push(`${file}:${i + 1} unreadable (${error.message})`)
    }
  })
}

const ATTACK_NAMES = {
  bastion: 'bastioncorpus attacks',
  agentdojo: 'agentdojo important_instructions',
  'agentdojo-goal': 'agentdojo goals',
  'agentdojo-other': 'agentdojo other attacks',
}
const attackCorpora = new Map() // display name -> rows
for (const row of rows.filter((r) => r.label === 'attack')) {
  const key = ATTACK_NAMES[row.source] ?? `${row.source} attacks`
  if (!attackCorpora.has(key)) attackCorpora.set(key, [])
  attackCorpora.get(key).push(row)
}
const order = Object.values(ATTACK_NAMES)
const corpusNames = [...attackCorpora.keys()].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99))

// --- the benign sets --------------------------------------------------------------------------

/** `text` cut into passages of at most `max` characters at paragraph, then line boundaries. */
function passages(text, max = PASSAGE) {
  const out = []
  let cur = ''
  const add = (piece, sep) => {
    if (cur && cur.length + sep.length + piece.length > max) {
      out.push(cur)
      cur = ''
    }
    cur = cur ? cur + sep + piece : piece
  }
  for (const para of text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n/)) {
    if (para.length <= max) {
      add(para, '\n\n')
      continue
    }
    for (const line of para.split('\n')) {
      if (line.length <= max) {
        add(line, '\n')
        continue
      }
      for (let i = 0; i < line.length;) {
        let end = Math.min(i + max, line.length)
        const c = line.charCodeAt(end - 1)
        if (end < line.length && c >= 0xd800 && c <= 0xdbff) end-- // keep surrogate pairs whole
        add(line.slice(i, end), '')
        i = end
      }
    }
  }
  if (cur) out.push(cur)
  return out.filter((p) => p.trim())
}

const sha = (s) => createHash('sha1').update(s).digest('hex')

/** Every file under `dir` (symlinks not followed) whose name passes `keep`. */
function walk(dir, keep, out = []) {
  let entries
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return out
  }
  for (const e of entries) {
    const p = join(dir, e.name)
    if (e.isDirectory()) walk(p, keep, out)
    else if (e.isFile() && keep(e.name, p)) out.push(p)
  }
  return out
}

const benign = new Map() // set name -> [{ text, where }]
const addPassages = (set, text, where) => {
  if (!benign.has(set)) benign.set(set, [])
  passages(text).forEach((p, i) => benign.get(set).push({ text: p, where: `${where}#${i + 1}` }))
}
const setInfo = {}

// bastioncorpus's benign rows (and any other benign rows of the corpus), whole texts.
for (const row of rows.filter((r) => r.label === 'benign')) addPassages(`${row.source} benign rows`, row.text, row.id)

// README*.md of every package in node_modules, all depths, one copy of each content.
const modules = resolve(repo, 'node_modules')
{
  const seen = new Set()
  const files = walk(modules, (n) => /^readme.*\.md$/i.test(n)).sort()
  let bytes = 0
  for (const f of files) {
    try {
      const text = readFileSync(f, 'utf8')
      const h = sha(text)
      if (seen.has(h)) continue
      seen.add(h)
      bytes += Buffer.byteLength(text)
      addPassages('node_modules READMEs', text, relative(repo, f))
    } catch (error) {
      problems.push(`${relative(repo, f)} unreadable (${error.message})`)
    }
  }
  setInfo['node_modules READMEs'] = { files: seen.size, duplicates: files.length - seen.size, bytes }
}

// A deterministic sample of node_modules sources: sorted paths, every k-th, ≤ 3 MB.
{
  const all = walk(modules, (n) => /\.(js|mjs|ts|py)$/.test(n)).sort()
  const k = Math.max(1, Math.floor(all.length / SOURCE_FILES))
  const seen = new Set()
  let bytes = 0
  let big = 0
  for (let i = 0; i < all.length; i += k) {
    try {
      const size = statSync(all[i]).size
      if (size > SOURCE_FILE_MAX) {
        big++
        continue
      }
      if (bytes + size > SOURCE_BYTES) break
      const text = readFileSync(all[i], 'utf8')
      const h = sha(text)
      if (seen.has(h)) continue
      seen.add(h)
      bytes += size
      addPassages('node_modules sources', text, relative(repo, all[i]))
    } catch (error) {
      problems.push(`${relative(repo, all[i])} unreadable (${error.message})`)
    }
  }
  setInfo['node_modules sources'] = { candidates: all.length, every: k, files: seen.size, skippedOver256KB: big, bytes }
}

// Tool output of real servers, through the addon; git output of this repo.
const TOOL_SET = 'tool outputs'
const toolInfo = { calls: 0, results: 0, empty: 0, errors: 0, skipped: [], byOrigin: {} }

/** The server's own text inside an untrusted-content block (marker header and metadata removed). */
function unwrap(text) {
  const start = text.indexOf('<<<EXTERNAL_UNTRUSTED_CONTENT')
  const end = text.lastIndexOf('<<<END_EXTERNAL_UNTRUSTED_CONTENT')
  if (start < 0 || end < start) return null
  let inner = text.slice(text.indexOf('\n', start) + 1, end).replace(/\n$/, '')
  const sep = inner.indexOf('\n---\n') // "Source: MCP Server\nFrom: <server>\n---\n"
  if (/^Source: /.test(inner) && sep >= 0) inner = inner.slice(sep + 5)
  return inner
}

/** Arguments for a tool from its input schema: one set, or one per value of its first enum. */
function argsFor(tool) {
  const schema = tool.parameters ?? {}
  const base = {}
  let variants = null
  for (const [k, p] of Object.entries(schema.properties ?? {})) {
    const consts = [...(p.anyOf ?? p.oneOf ?? []).map((x) => x.const), ...(p.enum ?? [])].filter((v) => v !== undefined)
    if (consts.length) {
      base[k] = consts[0]
      variants ??= [k, consts]
    } else if (p.type === 'string') {
      base[k] = /\b(url|uri)\b/i.test(p.description ?? '')
        ? `data:text/plain;base64,${Buffer.from('Quarterly notes: the north region grew 12 percent.').toString('base64')}`
        : /name/i.test(k) ? 'notes.txt' : 'The quick brown fox jumps over the lazy dog.'
    } else if (p.type === 'number' || p.type === 'integer') {
      const range = /\((\d+)\s*-\s*(\d+)\)/.exec(p.description ?? '')
      base[k] = range ? Number(range[2]) : 3
    } else if (p.type === 'boolean') {
      base[k] = false
    } else if ((schema.required ?? []).includes(k)) {
      return null
    }
  }
  return variants ? variants[1].map((v) => ({ ...base, [variants[0]]: v })) : [base]
}

async function toolOutputs() {
  const docs = resolve(repo, 'docs')
  const fsServer = resolve(modules, '@modelcontextprotocol/server-filesystem/dist/index.js')
  const evServer = resolve(modules, '@modelcontextprotocol/server-everything/dist/index.js')
  const servers = {}
  if (existsSync(fsServer) && existsSync(docs)) servers.filesystem = { command: process.execPath, args: [fsServer, docs] }
  else notes.push('server-filesystem or docs/ missing: no filesystem tool output')
  if (existsSync(evServer)) servers.everything = { command: process.execPath, args: [evServer, 'stdio'] }
  else notes.push('server-everything missing: no everything tool output')

  const calls = [] // [origin, tool, args]
  let manager
  if (Object.keys(servers).length) {
    try {
      manager = new native.McpManager({ servers })
      await manager.start()
      for (const s of manager.getStatus()) if (s.status !== 'ready') problems.push(`MCP server ${s.name} is ${s.status}`)
      const tools = manager.getAgentTools()
      const byName = (server, name) => tools.find((t) => t.name === `mcp_${server}_${name}`)
      if (servers.filesystem) {
        const mds = readdirSync(docs).filter((f) => f.endsWith('.md')).sort().map((f) => join(docs, f))
        const read = byName('filesystem', 'read_text_file') ?? byName('filesystem', 'read_file')
        for (const [name, args] of [
          ['list_directory', { path: docs }],
          ['list_directory_with_sizes', { path: docs }],
          ['directory_tree', { path: docs }],
          ['list_allowed_directories', {}],
          ['search_files', { path: docs, pattern: '*.md' }],
        ]) if (byName('filesystem', name)) calls.push(['server-filesystem', byName('filesystem', name), args])
        for (const md of mds) {
          if (read) calls.push(['server-filesystem', read, { path: md }])
          if (byName('filesystem', 'get_file_info')) calls.push(['server-filesystem', byName('filesystem', 'get_file_info'), { path: md }])
        }
      }
      // server-everything: whatever it lists, except what samples, elicits, takes long, toggles
      // background activity or dumps the environment.
      const SKIP = /long-running|toggle|sampl|elicit|research|env|trigger|roots|subscri|notif/i
      for (const tool of tools.filter((t) => t.name.startsWith('mcp_everything_'))) {
        const name = tool.name.slice('mcp_everything_'.length)
        const argSets = SKIP.test(name) || /\b(sampling|elicitation)\b/i.test(tool.description) ? null : argsFor(tool)
        if (!argSets) {
          toolInfo.skipped.push(name)
          continue
        }
        for (const args of argSets) calls.push(['server-everything', tool, args])
      }
      for (const [origin, tool, args] of calls) {
        toolInfo.calls++
        const label = `${tool.label.replace(/^MCP: /, '')} ${JSON.stringify(args).slice(0, 80)}`
        try {
          const result = await tool.execute(`eval-${toolInfo.calls}`, args, AbortSignal.timeout(10_000))
          if (result?.details?.error) throw new Error(result.content?.[0]?.text ?? 'error result')
          for (const part of result?.content ?? []) {
            if (part.type !== 'text') continue
            const inner = unwrap(part.text)
            if (inner === null) throw new Error('result not wrapped as untrusted content')
            toolInfo.results++
            toolInfo.byOrigin[origin] = (toolInfo.byOrigin[origin] ?? 0) + 1
            if (!inner.trim()) toolInfo.empty++ // e.g. only resource links, which the default results mode drops
            addPassages(TOOL_SET, inner, label)
          }
        } catch (error) {
          toolInfo.errors++
          problems.push(`tool ${label}: ${String(error.message).slice(0, 160)}`)
        }
      }
    } catch (error) {
      problems.push(`MCP servers: ${error.message}`)
    } finally {
      await manager?.shutdown()
    }
  }
  for (const args of [['log', '-n', '200', '--stat'], ['show', '--stat', 'HEAD~5..HEAD']]) {
    try {
      const out = execFileSync('git', args, { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] })
      toolInfo.byOrigin.git = (toolInfo.byOrigin.git ?? 0) + 1
      addPassages(TOOL_SET, out, `git ${args.join(' ')}`)
    } catch (error) {
      problems.push(`git ${args.join(' ')}: ${error.message.split('\n')[0]}`)
    }
  }
}
await toolOutputs()
setInfo[TOOL_SET] = { ...toolInfo }
const benignNames = [...benign.keys()]
const tLoad = performance.now()

// --- scoring --------------------------------------------------------------------------------

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)}%` : '–')
const results = {} // detector -> { recall: { corpus: { transform: { detected, total, errors } } }, fp: { set: {...} } }
const misses = {} // detector -> { missed: [], evaded: [], fps: [] }
for (const name of names) {
  results[name] = { recall: {}, fp: {} }
  misses[name] = { missed: [], evaded: [], fps: [] }
  for (const corpus of corpusNames) {
    const caughtAsIs = new Set()
    for (const [tname, transform] of Object.entries(TRANSFORMS)) {
      const cell = { detected: 0, total: 0, errors: 0 }
      for (const row of attackCorpora.get(corpus)) {
        let text
        try {
          text = transform(row.text)
        } catch (error) {
          problems.push(`transform ${tname} threw on ${row.id}: ${error.message}`)
          cell.errors++
          continue
        }
        const found = detect(name, text, `${row.id} (${tname})`)
        if (found === null) {
          cell.errors++
          continue
        }
        cell.total++
        if (found.length) {
          cell.detected++
          if (tname === 'none') caughtAsIs.add(row.id)
        } else if (tname === 'none') {
          misses[name].missed.push({ corpus, id: row.id, text: row.text })
        } else if (caughtAsIs.has(row.id)) {
          misses[name].evaded.push({ corpus, transform: tname, id: row.id, text: row.text })
        }
      }
      ;(results[name].recall[corpus] ??= {})[tname] = cell
    }
  }
  for (const set of benignNames) {
    const cell = { flagged: 0, total: 0, errors: 0 }
    for (const p of benign.get(set)) {
      const found = detect(name, p.text, `${set} ${p.where}`)
      if (found === null) {
        cell.errors++
        continue
      }
      cell.total++
      if (found.length) {
        cell.flagged++
        misses[name].fps.push({ set, where: p.where, rules: found, text: p.text })
      }
    }
    results[name].fp[set] = cell
  }
}

// Throughput: the README prose, concatenated, timed over ≥ 5 MB.
const prose = (benign.get('node_modules READMEs') ?? []).map((p) => p.text).join('\n\n')
const proseBytes = Buffer.byteLength(prose)
const throughput = {}
for (const name of names) {
  if (!proseBytes) break
  try {
    detectors[name](prose) // warm-up
    const rounds = []
    for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
      let bytes = 0
      let calls = 0
      const start = process.hrtime.bigint()
      while (bytes < THROUGHPUT_BYTES) {
        detectors[name](prose)
        bytes += proseBytes
        calls++
      }
      const seconds = Number(process.hrtime.bigint() - start) / 1e9
      rounds.push({ mbPerS: bytes / 1e6 / seconds, bytes, calls, seconds })
    }
    rounds.sort((a, b) => a.mbPerS - b.mbPerS)
    const median = rounds[Math.floor(rounds.length / 2)]
    throughput[name] = { ...median, rounds: rounds.map((r) => Number(r.mbPerS.toFixed(1))) }
  } catch (error) {
    problems.push(`throughput ${name}: ${error.message}`)
  }
}

// --- report -----------------------------------------------------------------------------------

const total = (name, pick) => {
  let a = 0
  let b = 0
  for (const corpus of corpusNames) for (const t of Object.keys(TRANSFORMS)) {
    if (!pick(corpus, t)) continue
    a += results[name].recall[corpus][t].detected
    b += results[name].recall[corpus][t].total
  }
  return [a, b]
}
const fpTotal = (name) => benignNames.reduce(([a, b], s) => [a + results[name].fp[s].flagged, b + results[name].fp[s].total], [0, 0])

console.log(`detector-eval: addon ${resolve(opt('--addon', resolve(repo, 'index.js')))}${binaries.length ? ` → ${binaries.join(', ')}` : ''}; corpus ${relative(process.cwd(), corpusDir) || '.'}; detectors ${names.join(', ')}`)
for (const n of notes) console.log(`note: ${n}`)
console.log('attack corpora (rows; each is scored under every transform):')
for (const c of corpusNames) console.log(`  ${c}: ${attackCorpora.get(c).length}`)
console.log('benign sets (passages of ≤ 2,000 characters):')
for (const s of benignNames) {
  const info = setInfo[s]
  let extra = ''
  if (s === 'node_modules READMEs') extra = ` from ${info.files} files (${info.duplicates} duplicates dropped), ${(info.bytes / 1e6).toFixed(2)} MB`
  else if (s === 'node_modules sources') extra = ` from ${info.files} of ${info.candidates} files (every ${info.every}-th path; ${info.skippedOver256KB} over 256 KB left out), ${(info.bytes / 1e6).toFixed(2)} MB`
  else if (s === TOOL_SET) extra = ` from ${info.calls} tool calls (${info.errors} failed, ${info.empty} empty; text parts: ${Object.entries(info.byOrigin).map(([k, v]) => `${k} ${v}`).join(', ')}); skipped tools: ${info.skipped.join(', ') || 'none'}`
  else extra = ' (whole texts)'
  console.log(`  ${s}: ${benign.get(s).length}${extra}`)
}

const clip = (s) => {
  const one = s.replace(/\s+/g, ' ').trim()
  return one.length > 160 ? `${one.slice(0, 157)}...` : one
}
/** Up to n items, taken in turn from each group, so every corpus or set shows. */
const roundRobin = (items, key, n) => {
  const groups = new Map()
  for (const it of items) {
    if (!groups.has(key(it))) groups.set(key(it), [])
    groups.get(key(it)).push(it)
  }
  const out = []
  for (let i = 0; out.length < n && [...groups.values()].some((g) => g.length > i); i++) {
    for (const g of groups.values()) if (g[i] && out.length < n) out.push(g[i])
  }
  return out
}
if (showMisses > 0) {
  for (const name of names) {
    const m = misses[name]
    console.log(`\n${name}: missed attacks (as is), ${m.missed.length} in all:`)
    for (const x of roundRobin(m.missed, (x) => x.corpus, showMisses)) console.log(`  [${x.id}] ${clip(x.text)}`)
    console.log(`${name}: evasions (caught as is, missed once transformed), ${m.evaded.length} in all:`)
    for (const x of roundRobin(m.evaded, (x) => x.transform, showMisses)) console.log(`  [${x.id} ${x.transform}] ${clip(x.text)}`)
    console.log(`${name}: false positives, ${m.fps.length} in all:`)
    for (const x of roundRobin(m.fps, (x) => x.set, showMisses)) console.log(`  [${x.set}: ${x.where}] {${x.rules.map((r) => clip(String(r))).join(' | ')}} ${clip(x.text)}`)
  }
  console.log('')
}

console.log(`| metric | corpus / set | transform | n | ${names.join(' | ')} |`)
console.log(`|---|---|---|--:|${names.map(() => '--:').join('|')}|`)
for (const corpus of corpusNames) {
  for (const t of Object.keys(TRANSFORMS)) {
    const n = results[names[0]].recall[corpus][t].total
    console.log(`| recall | ${corpus} | ${t} | ${n} | ${names.map((d) => pct(results[d].recall[corpus][t].detected, results[d].recall[corpus][t].total)).join(' | ')} |`)
  }
}
for (const t of Object.keys(TRANSFORMS)) {
  const n = total(names[0], (_, tt) => tt === t)[1]
  console.log(`| recall | all attacks | ${t} | ${n} | ${names.map((d) => pct(...total(d, (_, tt) => tt === t))).join(' | ')} |`)
}
console.log(`| recall | all attacks | all | ${total(names[0], () => true)[1]} | ${names.map((d) => pct(...total(d, () => true))).join(' | ')} |`)
for (const set of benignNames) {
  console.log(`| false positives | ${set} | – | ${results[names[0]].fp[set].total} | ${names.map((d) => pct(results[d].fp[set].flagged, results[d].fp[set].total)).join(' | ')} |`)
}
console.log(`| false positives | all benign passages | – | ${fpTotal(names[0])[1]} | ${names.map((d) => pct(...fpTotal(d))).join(' | ')} |`)
console.log('')
for (const name of names) {
  const t = throughput[name]
  if (t) console.log(`throughput ${name}: ${t.mbPerS.toFixed(1)} MB/s (median of ${t.rounds.length} rounds of ${t.calls} calls on ${(proseBytes / 1e6).toFixed(2)} MB of README prose; rounds ${t.rounds.join(', ')})`)
  else console.log(`throughput ${name}: not measured`)
}
if (detectors.enhanced) {
  const [a, b] = total('enhanced', () => true)
  const [f, g] = fpTotal('enhanced')
  console.log(`detector-eval: enhanced recall ${pct(a, b)} (all attacks, all transforms), false positives ${pct(f, g)} (all benign passages)`)
}
if (problems.length) {
  console.log(`\n${problems.length} bad item(s), counted and skipped:`)
  for (const p of problems.slice(0, 20)) console.log(`  ${p}`)
  if (problems.length > 20) console.log(`  … ${problems.length - 20} more`)
}
const seconds = (performance.now() - t0) / 1000
console.log(`\ndetector-eval: ${seconds.toFixed(1)} s (loading and tool calls ${((tLoad - t0) / 1000).toFixed(1)} s)`)

if (jsonOut) {
  const out = {
    addon: resolve(opt('--addon', resolve(repo, 'index.js'))),
    binaries,
    corpus: corpusDir,
    detectors: names,
    notes,
    transforms: Object.keys(TRANSFORMS),
    attackCorpora: Object.fromEntries(corpusNames.map((c) => [c, attackCorpora.get(c).length])),
    benignSets: Object.fromEntries(benignNames.map((s) => [s, { passages: benign.get(s).length, ...setInfo[s] }])),
    results: Object.fromEntries(names.map((d) => [d, {
      ...results[d],
      recallAll: Object.fromEntries([...Object.keys(TRANSFORMS).map((t) => [t, total(d, (_, tt) => tt === t)]), ['all', total(d, () => true)]].map(([k, [a, b]]) => [k, { detected: a, total: b }])),
      fpAll: (([a, b]) => ({ flagged: a, total: b }))(fpTotal(d)),
      throughput: throughput[d] ?? null,
      missed: misses[d].missed.map((x) => x.id),
      evaded: misses[d].evaded.map((x) => `${x.id} ${x.transform}`),
      falsePositives: misses[d].fps.map((x) => ({ set: x.set, where: x.where, rules: x.rules })),
    }])),
    problems,
    seconds,
  }
  writeFileSync(resolve(jsonOut), `${JSON.stringify(out, null, 2)}\n`)
  console.log(`detector-eval: wrote ${jsonOut}`)
}
