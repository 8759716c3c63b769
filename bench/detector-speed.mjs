#!/usr/bin/env node
// The enhanced detector's throughput on one text, alone: `detectInjection(text, { detection:
// 'enhanced' })`, one call per pass over the text, the median of --rounds rounds of --calls
// calls. For comparing builds one after another on the same text (a noisy machine moves
// between runs more than a change does), e.g. on the 1 MB clean text of the eval:
//
//   node bench/detector-eval.mjs --save-text /tmp/clean-1mb.txt
//   node bench/detector-speed.mjs /tmp/clean-1mb.txt [--addon PATH] [--no-model] [--rounds 7] [--calls 10]
//
// --no-model: the rules alone (OPENCLAW_MCP_DETECTOR_MODEL=0, read at the first detection).
// Prints the findings on the text (a clean text has none, or the model's: a rule that fires
// means the model was not read) and one line of MB/s.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { argv, opt, repo } from './lib/cli.mjs'

const file = argv[0]
if (!file || file.startsWith('--')) {
  console.error('usage: node bench/detector-speed.mjs FILE [--addon PATH] [--no-model] [--rounds N] [--calls N]')
  process.exit(2)
}
const rounds = Number(opt('--rounds', '7'))
const calls = Number(opt('--calls', '10'))
for (const [name, n] of [['--rounds', rounds], ['--calls', calls]]) {
  if (!Number.isInteger(n) || n < 1) {
    console.error(`detector-speed: ${name} must be a positive integer`)
    process.exit(2)
  }
}
const withModel = !argv.includes('--no-model')
process.env.OPENCLAW_MCP_DETECTOR_MODEL = withModel ? '1' : '0'
const addon = resolve(opt('--addon', resolve(repo, 'index.js')))
const native = createRequire(import.meta.url)(addon)
const text = readFileSync(file, 'utf8')
const bytes = Buffer.byteLength(text)
const detect = () => native.detectInjection(text, { detection: 'enhanced' })
const found = detect()
const rates = []
for (let r = 0; r < rounds; r++) {
  const start = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) detect()
  rates.push((calls * bytes) / 1e6 / (Number(process.hrtime.bigint() - start) / 1e9))
}
rates.sort((a, b) => a - b)
console.log(`detector-speed: ${addon}, ${withModel ? 'rules + model' : 'rules alone'}, ${(bytes / 1e6).toFixed(2)} MB; findings ${JSON.stringify(found)}`)
console.log(`detector-speed: ${rates[Math.floor(rates.length / 2)].toFixed(1)} MB/s median (rounds ${rates.map((x) => x.toFixed(1)).join(', ')})`)
