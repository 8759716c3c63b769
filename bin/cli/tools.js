'use strict'
// Which server each agent tool belongs to, and the tool's name on that server.

/** `[{ server, tools: [{ tool, own }] }]` for every server in config order; `own` is the server's name. */
function toolsByServer(manager) {
  const all = manager.getAgentTools()
  const out = []
  for (const s of manager.getStatus()) {
    if (s.status !== 'ready') {
      out.push({ server: s.name, tools: [] })
      continue
    }
    const prefix = `MCP: ${s.name}/`
    const labels = new Set(manager.view({ servers: [s.name] }).getAgentTools().map((t) => t.label))
    const tools = all.filter((t) => labels.has(t.label)).map((tool) => ({ tool, own: tool.label.slice(prefix.length) }))
    out.push({ server: s.name, tools })
  }
  return out
}

/** Agent tool names close to `name`, for "did you mean". */
function similarNames(names, name) {
  const want = name.toLowerCase()
  const tail = want.replace(/^mcp_/, '').split(/__|_/).pop()
  return names.filter((n) => {
    const have = n.toLowerCase()
    return have.includes(want) || want.includes(have) || (tail.length > 2 && have.endsWith(tail))
  }).slice(0, 5)
}

module.exports = { toolsByServer, similarNames }
