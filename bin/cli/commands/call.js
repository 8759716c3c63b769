'use strict'
// `call TOOL`: one call, its progress and its wrapped result.

const { callAndPrint, callArguments } = require('../call')
const { loadConfig } = require('../config')
const { startServers } = require('../session')

async function call(ctx) {
  const { flags, positional } = ctx
  const loaded = loadConfig(flags)
  const args = callArguments(flags)
  for (const w of loaded.warnings) ctx.logger.warn(w)
  const { manager } = await startServers(ctx, loaded.config, { results: 'rich' })
  try {
    return await callAndPrint(ctx, manager, positional[0], args)
  } finally {
    await manager.shutdown()
  }
}

module.exports = { call }
