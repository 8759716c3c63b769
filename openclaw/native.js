'use strict'
// The package's API for the plugin's modules, loaded once per JavaScript realm. OpenClaw loads a
// plugin several times in one gateway, each time as a fresh copy of its modules; every copy that
// required the package would load the native addon again (a few tens of MB each, and before issue
// 35 a load that failed outright). The first copy's package is kept on globalThis, keyed by the
// package version, and the others use it: same realm, same Node environment, same code.

const fs = require('node:fs')
const path = require('node:path')

let version = 'unknown'
try {
  version = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version
} catch {}
const SLOT = Symbol.for(`@openclaw/mcp-native@${version}/package`)

function nativePackage() {
  return (globalThis[SLOT] ??= require('..'))
}

module.exports = { nativePackage }
