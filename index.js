'use strict'
// The package entry. `binding.js` is the loader napi-rs generates: it finds this platform's
// binary (a local build, or the `@openclaw/mcp-native-<platform>` package npm installs as an
// optional dependency). When there is none, say which package is missing instead of napi's
// generic "Cannot find native binding".
try {
  module.exports = require('./binding.js')
} catch (error) {
  throw missingBinary(error)
}

function missingBinary(cause) {
  const { platform, arch } = process
  let id
  if (platform === 'linux') {
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null
    const glibc = report && report.header && report.header.glibcVersionRuntime
    id = `linux-${arch}-${glibc ? 'gnu' : 'musl'}`
  } else if (platform === 'win32') {
    id = `win32-${arch}-msvc`
  } else {
    id = `${platform}-${arch}`
  }
  const name = `@openclaw/mcp-native-${id}`
  const supported = [
    'linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl',
    'darwin-x64', 'darwin-arm64', 'win32-x64-msvc',
  ]
  const why = supported.includes(id)
    ? `its binary comes in the optional dependency '${name}', which is not installed ` +
      `(installing with --omit=optional, or with a lockfile made on another platform, leaves it ` +
      `out). Install it: npm install ${name}`
    : `there is no prebuilt binary for ${id} (no package '${name}'); ` +
      `supported: ${supported.join(', ')}. Build from source with a Rust toolchain: npx napi build --platform --release`
  const error = new Error(`@openclaw/mcp-native cannot load its native addon on ${id}: ${why}`)
  error.code = 'ERR_MCP_NATIVE_BINARY_MISSING'
  error.cause = cause
  return error
}
