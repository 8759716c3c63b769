#!/usr/bin/env node
// Host process for the kill tests in lifecycle.spec.ts.
//
//   node __test__/host-process.mjs '<McpConfig JSON>' ['<McpManagerOptions JSON>']
//
// Builds an McpManager from the config, starts it, prints ONE JSON line
//   {"ready":true,"pid":<pid>,"status":[{name,status,toolCount},...]}
// to stdout, then idles forever. The test then kills this process and checks
// that every server it started dies too. Log lines go to stderr.

import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { McpManager } = require('../index.js')

const config = JSON.parse(process.argv[2] ?? '{}')
const options = JSON.parse(process.argv[3] ?? '{}')
const log = (level) => (msg) => process.stderr.write(`[${level}] ${msg}\n`)
process.stderr.on('error', () => {})

const manager = new McpManager(config, {
  ...options,
  logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
})
await manager.start()
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, status: manager.getStatus() })}\n`)
setInterval(() => {}, 1 << 30)
