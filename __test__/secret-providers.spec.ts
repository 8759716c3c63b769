// OpenClaw SecretRef objects through the JS API: an `exec` provider given in the manager's
// `secretProviders` option resolves a server's env value, which reaches the server but never a
// log line or the model.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { cleanup, createManager, faultServer, NODE, RecordingLogger, tempDir, toolByName } from './helpers'

afterEach(cleanup)

it('an exec SecretRef resolves through secretProviders; the value is masked everywhere', async () => {
  const value = `s3cr3t-${crypto.randomUUID()}`
  const dir = tempDir()
  const helper = path.join(dir, 'secret-helper.mjs')
  // OpenClaw's exec protocol: a JSON request on stdin, a JSON answer on stdout.
  fs.writeFileSync(
    helper,
    `let input = ''
process.stdin.on('data', (d) => (input += d))
process.stdin.on('end', () => {
  const req = JSON.parse(input)
  const values = Object.fromEntries(req.ids.map((id) => [id, id === 'API_TOKEN' ? ${JSON.stringify(value)} : '']))
  process.stdout.write(JSON.stringify({ protocolVersion: 1, values }))
})
`,
  )
  const log = new RecordingLogger()
  const manager = createManager(
    {
      servers: {
        f: faultServer([], { env: { API_TOKEN: { source: 'exec', provider: 'vault_helper', id: 'API_TOKEN' } } }),
      },
    },
    { logger: log.logger, secretProviders: { vault_helper: { source: 'exec', command: NODE, args: [helper], timeoutMs: 5000 } } },
  )
  await manager.start()
  expect(manager.getStatus()[0].status).toBe('ready')
  // It reached the server...
  const hash = await toolByName(manager, 'mcp_f_env_hash').execute('1', { name: 'API_TOKEN' })
  expect(hash.content[0].text).toContain(crypto.createHash('sha256').update(value).digest('hex'))
  // ...and an echo of it is masked before the model sees it.
  const echoed = await toolByName(manager, 'mcp_f_env').execute('2', { name: 'API_TOKEN' })
  expect(echoed.content[0].text).toContain('[REDACTED]')
  expect(echoed.content[0].text).not.toContain(value)
  // The logger did receive lines (so this check can fail), none with the value.
  await log.waitFor('debug', (m) => m.startsWith('MCP tool call f/env took'))
  expect(log.all().length).toBeGreaterThan(0)
  expect(JSON.stringify(log.all())).not.toContain(value)
})

it('an exec SecretRef without a matching provider keeps that server from starting, naming the reference', async () => {
  const log = new RecordingLogger()
  const manager = createManager(
    { servers: { f: faultServer([], { env: { T: { source: 'exec', provider: 'missing', id: 'T' } } }) } },
    { logger: log.logger },
  )
  await manager.start()
  expect(manager.getStatus()[0].status).toBe('disconnected')
  // Log lines reach JS asynchronously (a threadsafe function), so wait for it.
  await log.waitFor('error', (m) => m.startsWith("MCP server 'f' failed to start: Cannot resolve secret://exec/missing#T"))
})
