'use strict'
// `resources` and `prompts`: what every ready server offers besides tools.

const { loadConfig } = require('../config')
const { fitted, oneLine, printJson, table } = require('../output')
const { startServers } = require('../session')

async function withServers(ctx, body) {
  const loaded = loadConfig(ctx.flags)
  for (const w of loaded.warnings) ctx.logger.warn(w)
  const { manager } = await startServers(ctx, loaded.config)
  try {
    const code = await body(manager)
    return manager.getStatus().some((s) => s.status !== 'ready') ? Math.max(1, code) : code
  } finally {
    await manager.shutdown()
  }
}

function print(rows) {
  console.log(fitted(table(rows)))
}

async function resources(ctx) {
  return withServers(ctx, async (manager) => {
    const { resources: list, templates } = await manager.listResources()
    if (ctx.flags['--json']) {
      printJson({ resources: list, templates })
      return 0
    }
    if (list.length) print([['server', 'uri', 'name', 'type', 'description'], ...list.map((r) => [r.server, r.uri, r.name, r.mimeType || '-', oneLine(r.description || r.title || '')])])
    if (templates.length) {
      if (list.length) console.log('')
      print([['server', 'template', 'name', 'type', 'description'], ...templates.map((t) => [t.server, t.uriTemplate, t.name, t.mimeType || '-', oneLine(t.description || t.title || '')])])
    }
    if (!ctx.flags['--quiet']) process.stderr.write(`${list.length} resource${list.length === 1 ? '' : 's'}, ${templates.length} template${templates.length === 1 ? '' : 's'}\n`)
    return 0
  })
}

async function prompts(ctx) {
  return withServers(ctx, async (manager) => {
    const list = await manager.listPrompts()
    if (ctx.flags['--json']) {
      printJson(list)
      return 0
    }
    const args = (p) => p.arguments.map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ') || '-'
    if (list.length) print([['server', 'prompt', 'arguments', 'description'], ...list.map((p) => [p.server, p.name, args(p), oneLine(p.description || p.title || '')])])
    if (!ctx.flags['--quiet']) process.stderr.write(`${list.length} prompt${list.length === 1 ? '' : 's'}\n`)
    return 0
  })
}

module.exports = { resources, prompts }
