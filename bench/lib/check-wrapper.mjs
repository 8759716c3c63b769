// Checks the benchmark's JavaScript wrapper (openclaw-wrap.mjs) against the golden vectors that
// were produced by running OpenClaw's real JavaScript, so the comparator is known to do the same
// work as the original. Run by bench/run.mjs before any timing (and on its own:
// `node bench/lib/check-wrapper.mjs`).

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { detectSuspiciousPatterns, wrapExternalContent } from './openclaw-wrap.mjs'

const VECTORS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'fixtures', 'vectors')

export function normaliseIds(text) {
  return text.replace(
    /(<<<EXTERNAL_UNTRUSTED_CONTENT id=")[0-9a-f]{16}(">>>)/,
    '$1{{ID}}$2',
  ).replace(/(<<<END_EXTERNAL_UNTRUSTED_CONTENT id=")[0-9a-f]{16}(">>>)$/, '$1{{ID}}$2')
}

export function checkWrapper() {
  const wrap = JSON.parse(readFileSync(join(VECTORS, 'external-content.v2026.9.6.json'), 'utf8'))
  const detect = JSON.parse(readFileSync(join(VECTORS, 'suspicious-patterns.v2026.9.6.json'), 'utf8'))
  const failures = []
  let cases = 0
  for (const c of [...wrap.cases, ...(wrap.jsOnlyQuirks ?? [])]) {
    cases++
    const labels = c.labelPatch ? wrap.sourceLabelsWithLabelPatch : wrap.sourceLabels
    const { content, ...opts } = c.input
    const got = normaliseIds(wrapExternalContent(content, opts, labels))
    if (got !== c.output) failures.push(`wrap:${c.name}`)
  }
  for (const c of detect.cases) {
    cases++
    const got = detectSuspiciousPatterns(c.input)
    if (JSON.stringify(got) !== JSON.stringify(c.output)) failures.push(`detect:${c.name}`)
  }
  return { cases, failures }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { cases, failures } = checkWrapper()
  console.log(`JS wrapper vs golden vectors: ${cases - failures.length}/${cases} cases equal`)
  for (const f of failures.slice(0, 20)) console.log(`  differs: ${f}`)
  process.exit(failures.length ? 1 : 0)
}
