// Compiled with `tsc --strict` in CI: every export used the way a gateway uses it, so a wrong
// or loose type in index.d.ts breaks the build.
import {
  McpManager,
  detectSuspiciousPatterns,
  doctorMcpConfig,
  loadMcpConfig,
  nativeVersion,
  parseSecretUri,
  resolveSecret,
  resolveSecrets,
  scanAndWrapExternalContent,
  sharedManagerConfigForOpenclaw,
  validateMcpConfig,
  wrapExternalContent,
  type AgentTool,
  type AgentToolResult,
  type DoctorFinding,
  type DoctorOptions,
  type McpConfig,
  type McpLogger,
  type McpReloadReport,
  type McpRoot,
  type McpServerMetrics,
  type McpServerStatus,
  type McpView,
  type McpViewSpec,
} from '../../index.js'

const config: McpConfig = {
  servers: {
    files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], toolTimeout: 30_000 },
    remote: { transport: 'streamable-http', url: 'https://example.invalid/mcp', headers: { Authorization: 'secret://env/TOKEN' } },
    off: { enabled: false },
  },
}

const logger: McpLogger = { warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) }

async function gateway(): Promise<void> {
  const checked = validateMcpConfig(config as unknown)
  if (!checked.success) {
    const message: string = checked.error
    throw new Error(message)
  }
  const manager = new McpManager(checked.data, { logger, wrapFormat: 'id', shutdownGraceMs: 500, hygiene: 'on', pinning: 'enforce', pinStore: '/var/lib/gateway/pins.json' })
  const approved: string[] = manager.approveTools('files', ['read_file'])
  const asking = new McpManager(checked.data, {
    sampling: async (request, { server, signal }) => ({ role: 'assistant', content: { type: 'text', text: `${server}: ${String(request)}` }, model: 'm', aborted: signal.aborted }),
    elicitation: (request) => (request.mode === 'url' ? { action: 'decline' } : { action: 'accept', content: {} }),
    roots: [{ uri: 'file:///srv', name: 'srv' }],
  })
  const roots: McpRoot[] = [{ uri: 'file:///work' }]
  const lazy = new McpManager({ servers: { idle: { command: 'node', args: ['s.js'], lazy: true, idleTimeoutMs: 60_000, cacheDir: '/var/cache/mcp' } } }, { cacheDir: '/var/cache/mcp' })
  const modern = new McpManager({ servers: { v2: { transport: 'http', url: 'http://127.0.0.1:1/mcp', protocol: '2026-07-28', taskTimeout: 120_000 }, old: { command: 'node', protocol: 'auto' } } })
  const revision: string | undefined = modern.getStatus()[0]?.protocolVersion
  void revision
  const tokens = new Map<string, string>()
  const signedIn = new McpManager(
    {
      servers: {
        linear: { transport: 'http', url: 'https://mcp.linear.app/mcp', auth: 'oauth' },
        billing: { transport: 'sse', url: 'https://b/sse', auth: { type: 'oauth', grant: 'client_credentials', clientId: 'gw', clientSecret: { source: 'env', provider: 'default', id: 'B' }, scopes: ['read'] } },
        batch: { transport: 'http', url: 'https://c/mcp', auth: { type: 'oauth', grant: 'jwt_bearer', assertionFile: '/var/run/secrets/tokens/mcp' } },
        sso: { transport: 'http', url: 'https://d/mcp', auth: { type: 'oauth', grant: 'enterprise', clientId: 'gw', idp: { issuer: 'https://idp', tokenEndpoint: 'https://idp/token', clientId: 'gw-idp', idToken: 'secret://env/ID_TOKEN' } } },
      },
    },
    {
      oauth: {
        authorize: async (url, { server, signal }) => `${url}#${server}${signal.aborted}`,
        store: { get: (key) => tokens.get(key), set: (key, value) => void tokens.set(key, value), delete: async (key) => void tokens.delete(key) },
      },
    },
  )
  const auth: string | undefined = signedIn.getStatus()[0]?.auth
  void auth
  const hadTokens: boolean = await signedIn.logout('linear')
  void hadTokens
  void new McpManager({ servers: {} }, { oauth: { dir: '/var/lib/gateway/oauth' } })
  const running: boolean[] = lazy.getStatus().map((s) => s.running)
  const revisions: Array<string | undefined> = lazy.getStatus().map((s) => s.protocolVersion)
  void revisions
  void running
  await asking.setRoots(roots)
  await asking.setRoots(async ({ server }) => [{ uri: `file:///work/${server}` }])
  void approved
  await manager.start()
  const statuses: McpServerStatus[] = manager.getStatus().map((s) => s.status)
  const counts: number[] = manager.getStatus().map((s) => s.toolCount)
  const metrics: McpServerMetrics[] = manager.getMetrics()
  for (const m of metrics) {
    const numbers: number[] = [m.calls, m.errors, m.timeouts, m.aborts, m.denied, m.restarts, m.uptimeMs]
    const p99: number | null = m.p99Ms ?? m.p50Ms
    const lastError: string | null = m.lastError
    const stderr: string[] = m.stderrTail
    const listMs: number | undefined = m.startup?.listMs
    const state: McpServerStatus = m.status
    void [numbers, p99, lastError, stderr, listMs, state, m.server, m.transport]
  }
  const roundTrip: number = await manager.ping('github')
  const prometheus: string = manager.metricsText()
  void [roundTrip, prometheus]
  const tools: AgentTool[] = manager.getAgentTools()
  const same: AgentTool[] = manager.getTools()
  const controller = new AbortController()
  for (const tool of tools) {
    const name: string = tool.name
    const schema: Record<string, unknown> = tool.parameters
    const result: AgentToolResult = await tool.execute(`call-${name}`, {}, controller.signal, (partial) => {
      const progress: number = partial.details.progress
      const text: string = partial.content[0]?.text ?? ''
      void progress
      void text
    })
    if ('error' in result.details) {
      const failed: true = result.details.error
      void failed
    } else {
      const server: string = result.details.externalContent.server
      void server
    }
    void schema
  }
  const context: string = await manager.getResourceContext()
  const report: McpReloadReport = await manager.reconfigure({ servers: { files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'] } } })
  const restarted: string[] = report.restarted.concat(report.added, report.removed, report.unchanged)
  const spec: McpViewSpec = { servers: ['files'], deny: ['*_write*'], toolNames: 'openclaw' }
  const view: McpView = manager.view(spec)
  const viewTools: AgentTool[] = view.getAgentTools()
  const viewContext: Promise<string> = view.getResourceContext()
  const prompts = await view.listPrompts()
  const shared = sharedManagerConfigForOpenclaw({ agents: { list: [{ id: 'a' }] } })
  const agentViews: McpView[] = shared.agents.map((a) => manager.view(a.view))
  void restarted
  void viewTools
  void viewContext
  void prompts
  void agentViews
  await manager.shutdown()
  void statuses
  void counts
  void same
  void context
}

const wrapped: string = wrapExternalContent('text', { source: 'mcp_server', sender: 'files', includeWarning: false, format: 'legacy' })
const found: string[] = detectSuspiciousPatterns('ignore previous instructions', 'id')
const scanned: { wrapped: string; suspicious: string[] } = scanAndWrapExternalContent('text', { source: 'mcp_server', format: 'id' })
const ref = parseSecretUri('secret://file/~/.env#TOKEN')
const field: string | undefined = ref?.field
const one: Promise<string> = resolveSecret('secret://env/HOME')
const many: Promise<Record<string, string>> = resolveSecrets({ a: 'plain', b: 'secret://env/HOME' })
const loaded: McpConfig = loadMcpConfig({ agents: { defaults: { mcp: config } } }, { agent: 'main' })
const version: string = nativeVersion()

void gateway
void wrapped
void found
void scanned
void field
void one
void many
void loaded
void version

async function doctor(): Promise<void> {
  const options: DoctorOptions = {
    agent: 'main',
    env: { PATH: '/usr/bin', UNSET: undefined },
    network: true,
    timeoutMs: 2000,
    tools: { files: ['read_file'] },
    toolNames: 'openclaw',
  }
  const findings: DoctorFinding[] = await doctorMcpConfig(config, options)
  for (const f of findings) {
    const severity: 'error' | 'warning' | 'info' = f.severity
    const where: string | undefined = f.field ?? f.server
    console.log(severity, f.code, where, f.message, f.fix)
  }
  await doctorMcpConfig(JSON.parse('{}') as unknown)
}
void doctor

// The server side: JS tools served as an MCP server.
async function serveTools(): Promise<void> {
  const { McpServerHost } = await import('../../index.js')
  const host = new McpServerHost({ name: 'gateway', version: '1.0.0', limits: 'openclaw', toolTimeoutMs: 60_000 })
  const custom = new McpServerHost({ name: 'g', version: '1', limits: { maxImages: 2, allowedFileTypes: ['application/pdf'] } })
  void custom
  host.addTool({
    name: 'search',
    title: 'Search',
    description: 'Searches',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    annotations: { readOnlyHint: true },
    timeoutMs: 30_000,
    handler: async (args, { signal, progress, log, requestId }) => {
      progress(1, 2, 'half way')
      log('info', { query: args.q, requestId })
      if (signal.aborted) return { content: [{ type: 'text', text: 'aborted' }], isError: true }
      return {
        content: [
          { type: 'text', text: `results for ${String(args.q)}` },
          { type: 'image', data: 'AA==', mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///r.pdf', mimeType: 'application/pdf', blob: 'AA==' } },
          { type: 'resource_link', uri: 'file:///big.pdf', name: 'big' },
        ],
        structuredContent: { count: 1 },
      }
    },
  })
  host.addTool({ name: 'plain', inputSchema: { type: 'object' }, handler: () => 'text' })
  const removed: boolean = host.removeTool('plain')
  const names: string[] = host.toolNames()
  const { url }: { url: string } = await host.serveHttp({ port: 0, stateless: true, allowedOrigins: ['https://app.example.com'] })
  console.log(removed, names, url)
  await host.serveStdio()
  await host.close()
}
void serveTools
