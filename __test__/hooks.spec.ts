// hooks.beforeToolCall / afterToolCall (issue 13, part 7) against the fault server: block,
// replace arguments, replace results, sync and async, fail closed, bounded by toolTimeout.

import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  expectErrorResult,
  expectWrappedResult,
  faultServer,
  fileLines,
  RecordingLogger,
  tempDir,
  toolByName,
  waitUntil,
  wrappedBody,
  type ManagerConfig,
  type ManagerOptions,
} from './helpers'

afterEach(cleanup)

async function start(options: ManagerOptions, flags: Array<string | number> = [], toolTimeout = 5_000) {
  const requests = path.join(tempDir(), 'requests.log')
  const log = new RecordingLogger()
  const manager = createManager(
    { servers: { f: faultServer(['--request-log', requests, ...flags], { toolTimeout }) } } as ManagerConfig,
    { logger: log.logger, ...options },
  )
  await manager.start()
  const calls = () => fileLines(requests).filter((l) => l.startsWith('tools/call')).length
  return { manager, calls }
}

describe('beforeToolCall', () => {
  it('{ block } refuses the call before the server sees it, and the audit says denied', async () => {
    const seen: unknown[] = []
    const { manager, calls } = await start({
      hooks: { beforeToolCall: (ctx) => (ctx.tool === 'echo' ? { block: 'not today' } : undefined) },
    })
    manager.on('toolCall', (p) => seen.push(p))
    const result = await toolByName(manager, 'mcp_f_echo').execute('c1', { text: 'x' })
    expectErrorResult(result, 'f', 'echo', 'blocked by beforeToolCall: not today')
    expect(calls()).toBe(0)
    expectWrappedResult(await toolByName(manager, 'mcp_f_add').execute('c2', { a: 1, b: 2 }), 'f', 'add', '3')
    await waitUntil(() => seen.length === 2)
    expect(seen[0]).toMatchObject({ toolCallId: 'c1', outcome: 'denied' })
  })

  it('gets the call context and may replace the arguments (async)', async () => {
    const contexts: unknown[] = []
    const { manager } = await start({
      hooks: {
        beforeToolCall: async (ctx) => {
          contexts.push(ctx)
          return { params: { text: `${String((ctx.params as { text: string }).text)} (checked)` } }
        },
      },
    })
    expectWrappedResult(await toolByName(manager, 'mcp_f_echo').execute('id-7', { text: 'hi' }), 'f', 'echo', 'hi (checked)')
    expect(contexts).toEqual([{ server: 'f', tool: 'echo', agentTool: 'mcp_f_echo', toolCallId: 'id-7', params: { text: 'hi' } }])
  })

  it('fails closed: a hook that throws, rejects, answers nonsense or takes too long blocks', async () => {
    const cases: Array<[NonNullable<ManagerOptions['hooks']>['beforeToolCall'], RegExp]> = [
      [() => { throw new Error('boom') }, /blocked by beforeToolCall: beforeToolCall hook failed: .*boom/],
      [async () => Promise.reject(new Error('nope')), /blocked by beforeToolCall: beforeToolCall hook failed: .*nope/],
      [() => 42 as never, /blocked by beforeToolCall: beforeToolCall returned neither \{ block \} nor \{ params \}/],
      [() => new Promise(() => {}), /blocked by beforeToolCall: beforeToolCall hook did not answer within 300 ms/],
    ]
    for (const [hook, message] of cases) {
      const { manager, calls } = await start({ hooks: { beforeToolCall: hook } }, [], 300)
      expectErrorResult(await toolByName(manager, 'mcp_f_echo').execute('c', { text: 'x' }), 'f', 'echo', message)
      expect(calls()).toBe(0)
      await manager.shutdown()
    }
  })
})

describe('afterToolCall', () => {
  it('may replace the result; the replacement is wrapped again as untrusted content', async () => {
    const { manager } = await start({
      hooks: {
        afterToolCall: (ctx, result) => {
          expect(ctx.tool).toBe('echo')
          expect(result.content[0].text).toMatch(/^SECURITY NOTICE/)
          return { content: [{ type: 'text', text: 'replaced by the gateway' }], details: result.details }
        },
      },
    })
    const result = await toolByName(manager, 'mcp_f_echo').execute('c', { text: 'x' })
    expect(wrappedBody(result)).toBe('replaced by the gateway')
    expect(result.details).toMatchObject({ externalContent: { server: 'f', tool: 'echo' } })
  })

  it('returning nothing or the result itself keeps it; details.error makes an error result', async () => {
    const keep = await start({ hooks: { afterToolCall: (_ctx, result) => result } })
    expectWrappedResult(await toolByName(keep.manager, 'mcp_f_echo').execute('c', { text: 'same' }), 'f', 'echo', 'same')
    const nothing = await start({ hooks: { afterToolCall: () => undefined } })
    expectWrappedResult(await toolByName(nothing.manager, 'mcp_f_echo').execute('c', { text: 'same' }), 'f', 'echo', 'same')
    const failing = await start({
      hooks: { afterToolCall: () => ({ content: [{ type: 'text', text: 'MCP tool error (f/echo): redacted by policy' }], details: { error: true } }) },
    })
    expectErrorResult(await toolByName(failing.manager, 'mcp_f_echo').execute('c', { text: 'x' }), 'f', 'echo', 'redacted by policy')
  })

  it('a throwing afterToolCall gives an error result', async () => {
    const { manager } = await start({ hooks: { afterToolCall: () => { throw new Error('audit store down') } } })
    expectErrorResult(await toolByName(manager, 'mcp_f_echo').execute('c', { text: 'x' }), 'f', 'echo', /afterToolCall hook failed: .*audit store down/)
  })

  it('a hooks option that is not functions is a constructor error naming it', () => {
    expect(() => createManager({ servers: {} }, { hooks: { beforeToolCall: 5 as never } })).toThrow(
      'Invalid hooks.beforeToolCall: expected a function, got a number',
    )
    expect(() => createManager({ servers: {} }, { hooks: 'x' as never })).toThrow('Invalid hooks: expected an object')
  })
})
