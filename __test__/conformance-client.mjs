#!/usr/bin/env node
// A client for the official MCP conformance runner (@modelcontextprotocol/conformance), built on
// the native addon: `conformance client --command <this file> --scenario <name>`.
//
// The runner passes the scenario server's URL as the last argument and the scenario's name in
// MCP_CONFORMANCE_SCENARIO (MCP_CONFORMANCE_CONTEXT holds extra data: the calls to make, or an
// OAuth scenario's pre-registered client). The client connects the way OpenClaw would (an `http` server in an
// McpManager), lists the tools, calls each one with arguments made from its schema, then shuts
// down and exits by itself (a hard deadline makes sure of that).
//
// MCP_NATIVE_ADDON: path of the `.node` file to load (scripts/conformance.sh builds its own copy
// under target/); without it the package entry (index.js) is used.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'

const require = createRequire(import.meta.url)
const started = Date.now()
const say = (level, message) =>
  process.stderr.write(`[conformance-client +${Date.now() - started}ms] ${level}: ${message}\n`)

// Never outlive the runner's patience, whatever happens below.
const deadline = setTimeout(() => {
  say('error', 'deadline reached, exiting')
  process.exit(3)
}, Number(process.env.MCP_CONFORMANCE_CLIENT_DEADLINE_MS ?? 25000))
deadline.unref()

const addon = process.env.MCP_NATIVE_ADDON
  ? require(path.resolve(process.env.MCP_NATIVE_ADDON))
  : require('../index.js')

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '(none)'
// Some scenarios name the calls to make, with their exact arguments (http-custom-headers: a
// value of every kind a header mirrors, null included, and one that needs Base64).
let context = {}
try {
  context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') ?? {}
} catch {
  context = {}
}
const target = process.argv[process.argv.length - 1]
if (!target || !/^https?:\/\//.test(target)) {
  say('error', `usage: conformance-client.mjs <server-url> (got ${JSON.stringify(target)})`)
  process.exit(2)
}
// The runner announces `localhost`; its servers listen on every interface. Stay on IPv4
// loopback. Not in OAuth scenarios: there the URL is the protected resource's identity, which
// its metadata must match.
const url = new URL(target)
if (url.hostname === 'localhost' && !(process.env.MCP_CONFORMANCE_SCENARIO ?? '').startsWith('auth/')) {
  url.hostname = '127.0.0.1'
}

/** Arguments for a tool, from its (converted) JSON schema. */
function argumentsFor(schema) {
  const out = {}
  const properties = (schema && schema.properties) || {}
  for (const [name, prop] of Object.entries(properties)) {
    out[name] = valueFor(prop, name)
  }
  return out
}

function valueFor(prop, name) {
  if (prop && 'default' in prop) return prop.default
  if (prop && Array.isArray(prop.enum) && prop.enum.length) return prop.enum[0]
  const type = Array.isArray(prop?.type) ? prop.type[0] : prop?.type
  switch (type) {
    case 'number':
      return name === 'b' ? 3 : 5
    case 'integer':
      return name === 'b' ? 3 : 5
    case 'boolean':
      return true
    case 'array':
      return []
    case 'object':
      return argumentsFor(prop)
    default:
      return 'conformance'
  }
}

const logger = {
  debug: (m) => say('debug', m),
  info: (m) => say('info', m),
  warn: (m) => say('warn', m),
  error: (m) => say('error', m),
}

// OAuth scenarios (auth/*): the server's `auth` from the scenario's context, and an
// `authorize` step that plays the user. The runner's authorization server approves at once by
// redirecting to the redirect URI; the callback URL it redirects to is what a browser would
// reach, so that is the answer.
const oauthScenario = scenario.startsWith('auth/')
let keyDir
function authFor() {
  const auth = {
    type: 'oauth',
    // Offered as the client id where the authorization server supports SEP-991 documents.
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  }
  if (context.client_id) auth.clientId = context.client_id
  if (context.client_secret) auth.clientSecret = context.client_secret
  if (scenario.startsWith('auth/client-credentials')) auth.grant = 'client_credentials'
  if (context.private_key_pem || context.valid_jwt) {
    keyDir = mkdtempSync(path.join(tmpdir(), 'conformance-key-'))
  }
  // Workload identity federation: the workload's token, as a platform would mount it.
  if (context.valid_jwt) {
    const file = path.join(keyDir, 'workload-token')
    writeFileSync(file, context.valid_jwt, { mode: 0o600 })
    auth.grant = 'jwt_bearer'
    auth.assertionFile = file
  }
  // Enterprise-managed authorization: the identity token an enterprise sign-in gave the host.
  if (context.idp_id_token) {
    auth.grant = 'enterprise'
    auth.idp = {
      issuer: context.idp_issuer,
      tokenEndpoint: context.idp_token_endpoint,
      clientId: context.idp_client_id,
      idToken: context.idp_id_token,
    }
  }
  if (context.private_key_pem) {
    const file = path.join(keyDir, 'key.pem')
    writeFileSync(file, context.private_key_pem, { mode: 0o600 })
    auth.privateKeyFile = file
  }
  return auth
}
async function authorize(authorizationUrl, { server }) {
  say('info', `authorize (${server}): ${authorizationUrl.slice(0, 300)}`)
  const response = await fetch(authorizationUrl, { redirect: 'manual' })
  const location = response.headers.get('location')
  if (!location) throw new Error(`the authorization endpoint answered ${response.status} without a redirect`)
  return new URL(location, authorizationUrl).href
}

let failed = false
const manager = new addon.McpManager(
  {
    servers: {
      conformance: {
        transport: 'http',
        url: url.href,
        timeout: 10000,
        toolTimeout: 10000,
        restartOnCrash: false,
        ...(oauthScenario ? { auth: authFor() } : {}),
      },
    },
  },
  // json-schema-2020-12-preservation checks the schema the client gives the model: the
  // faithful conversion is what keeps it.
  {
    logger,
    shutdownGraceMs: 500,
    ...(oauthScenario ? { oauth: { authorize } } : {}),
    ...(scenario === 'json-schema-2020-12-preservation' ? { schemas: 'faithful' } : {}),
    // A host with no user at hand accepts a form with the defaults the server gave its fields
    // (elicitation-sep1034-client-defaults checks that every default arrives).
    elicitation: (request) => {
      say('info', `elicitation: ${JSON.stringify(request).slice(0, 400)}`)
      if (request.mode === 'url') return { action: 'decline' }
      const content = {}
      for (const [name, prop] of Object.entries(request.requestedSchema?.properties ?? {})) {
        if (prop && 'default' in prop) content[name] = prop.default
      }
      return { action: 'accept', content }
    },
  },
)
try {
  say('info', `scenario ${scenario}: connecting to ${url.origin}${url.pathname}`)
  await manager.start()
  const [status] = manager.getStatus()
  say('info', `status: ${JSON.stringify(status)}`)
  if (status.status !== 'ready') {
    failed = true
  } else {
    const tools = manager.getAgentTools()
    say('info', `tools: ${tools.map((t) => t.name).join(', ') || '(none)'}`)
    let n = 0
    if (Array.isArray(context.toolCalls)) {
      for (const { name, arguments: args } of context.toolCalls) {
        const tool = tools.find((t) => t.name.endsWith(`_${name}`))
        if (!tool) {
          say('error', `the scenario names tool ${name}, which the client does not offer`)
          failed = true
          continue
        }
        const result = await tool.execute(`conformance-${++n}`, args)
        say('info', `${tool.name}(${JSON.stringify(args)}) -> ${result.details?.error ? 'error' : 'ok'}`)
      }
    }
    // A scenario's echo tool gets back the schema the client holds for the scenario's focal
    // tool (json-schema-2020-12-preservation), as the conformance suite asks.
    const echoed = tools.find((t) => !t.name.endsWith('json_schema_echo'))
    for (const tool of Array.isArray(context.toolCalls) ? [] : tools) {
      const args = tool.name.endsWith('json_schema_echo') && echoed
        ? { schema: echoed.parameters }
        : argumentsFor(tool.parameters)
      const result = await tool.execute(`conformance-${++n}`, args)
      const text = result.content.map((c) => c.text).join('\n')
      say('info', `${tool.name}(${JSON.stringify(args)}) -> ${result.details?.error ? 'error' : 'ok'}: ${text.slice(0, 400)}`)
    }
    // What a server offers besides tools, as a gateway reads it (only servers that declare
    // resources or prompts are asked): the first resource and the first prompt.
    const { resources } = await manager.listResources()
    say('info', `resources: ${resources.map((r) => r.uri).join(', ') || '(none)'}`)
    if (resources.length) {
      const read = await manager.readResource('conformance', resources[0].uri).catch((e) => `error: ${e.message}`)
      say('info', `read ${resources[0].uri}: ${String(read).slice(0, 200)}`)
    }
    const prompts = await manager.listPrompts()
    say('info', `prompts: ${prompts.map((p) => p.name).join(', ') || '(none)'}`)
    if (prompts.length) {
      const args = Object.fromEntries(prompts[0].arguments.map((a) => [a.name, 'conformance']))
      const got = await manager.getPrompt('conformance', prompts[0].name, args).catch((e) => ({ error: e.message }))
      say('info', `prompt ${prompts[0].name}: ${JSON.stringify(got).slice(0, 200)}`)
    }
  }
} catch (error) {
  failed = true
  say('error', error?.stack ?? String(error))
} finally {
  await manager.shutdown()
  if (keyDir) rmSync(keyDir, { recursive: true, force: true })
}
say('info', failed ? 'done (failed)' : 'done')
process.exit(failed ? 1 : 0)
