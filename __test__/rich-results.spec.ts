// `results: 'rich'` (issue 13, part 1): images as image parts, the other content types as lines
// in the wrapped block, structuredContent checked and passed on, caps. Against the reference
// server-everything (stdio and Streamable HTTP) and the fault server for the caps and the
// mislabelled images. Compat stays what the other suites check.

import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanup,
  createManager,
  expectErrorResult,
  faultServer,
  NODE,
  RecordingLogger,
  startEverythingHttp,
  ROOT,
  statusOf,
  toolByName,
  type ManagerConfig,
  type ManagerOptions,
  type ServerConfig,
  type ToolResult,
  waitUntil,
  wrappedBody,
} from './helpers'

afterEach(cleanup)

const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
const PNG_MAGIC = 'iVBORw0KGgo'

async function start(servers: Record<string, ServerConfig>, options: ManagerOptions = {}) {
  const log = new RecordingLogger()
  const manager = createManager({ servers } as ManagerConfig, { logger: log.logger, ...options })
  await manager.start()
  for (const name of Object.keys(servers)) expect(statusOf(manager, name)?.status, log.dump()).toBe('ready')
  return { manager, log }
}

const call = (manager: ReturnType<typeof createManager>, name: string, args: Record<string, unknown> = {}) =>
  toolByName(manager, name).execute('c', args) as Promise<ToolResult>

/** The wrapped text of a rich result (which may have image parts after it). */
function body(result: ToolResult): string {
  return wrappedBody({ ...result, content: [result.content[0]] } as ToolResult)
}

function images(result: ToolResult) {
  return (result.content as Array<{ type: string; data?: string; mimeType?: string }>).filter((p) => p.type === 'image')
}

describe('rich results from server-everything', () => {
  const stdio: ServerConfig = { command: NODE, args: [EVERYTHING, 'stdio'] }

  it('compat is the default: one text part, images as [Image: <mime>]', async () => {
    const { manager } = await start({ e: stdio })
    const result = await call(manager, 'mcp_e_get-tiny-image')
    expect(result.content).toHaveLength(1)
    expect(wrappedBody(result)).toContain('[Image: image/png]')
  })

  it('an image is an image part after the wrapped text; links and embedded resources are lines', async () => {
    const { manager } = await start({ e: stdio }, { results: 'rich' })
    const image = await call(manager, 'mcp_e_get-tiny-image')
    expect(image.content[0].type).toBe('text')
    expect(body(image)).not.toContain('[Image:')
    const parts = images(image)
    expect(parts).toHaveLength(1)
    expect(parts[0].mimeType).toBe('image/png')
    expect(parts[0].data!.startsWith(PNG_MAGIC)).toBe(true)
    expect('error' in image.details).toBe(false)

    const links = wrappedBody(await call(manager, 'mcp_e_get-resource-links', { count: 2 }))
    expect(links).toMatch(/\[Resource link: [^,\]]+, demo:\/\/resource\/[^\]]+\]/)
    const reference = wrappedBody(await call(manager, 'mcp_e_get-resource-reference', { resourceType: 'Text', resourceId: 1 }))
    expect(reference).toMatch(/\n\[Resource: demo:\/\/resource\/dynamic\/text\/1\]\nResource 1: This is a plaintext resource/)
  })

  it('structuredContent reaches details and, when no text carries it, the wrapped text', async () => {
    const { manager } = await start({ e: stdio }, { results: 'rich' })
    const result = await call(manager, 'mcp_e_get-structured-content', { location: 'New York' })
    const details = result.details as { structuredContent?: Record<string, unknown> }
    expect(details.structuredContent).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) })
    expect(wrappedBody(result)).toContain('"temperature"')
  })

  it('rich results are plain data in to_json order, untouched by setters user code puts on Object.prototype', async () => {
    const { manager } = await start({ e: stdio }, { results: 'rich' })
    const hits: string[] = []
    const keys = ['0', '1', 'type', 'text', 'data', 'mimeType', 'structuredContent', 'error', 'externalContent', 'temperature']
    for (const key of keys) {
      Object.defineProperty(Object.prototype, key, { configurable: true, set() { hits.push(key) } })
    }
    let image, structured
    try {
      image = await call(manager, 'mcp_e_get-tiny-image')
      structured = await call(manager, 'mcp_e_get-structured-content', { location: 'New York' })
    } finally {
      for (const key of keys) delete (Object.prototype as Record<string, unknown>)[key]
    }
    expect(hits).toEqual([])
    expect(image.content.map((p) => Object.keys(p))).toEqual([['type', 'text'], ['type', 'data', 'mimeType']])
    expect(images(image)[0].data!.startsWith(PNG_MAGIC)).toBe(true)
    expect(Object.keys(structured.details)).toEqual(['externalContent', 'structuredContent'])
    expect((structured.details as { structuredContent: Record<string, unknown> }).structuredContent).toMatchObject({ temperature: expect.any(Number) })
  })

  it('an annotated message with an image, and a long-running call with progress', async () => {
    const { manager } = await start({ e: stdio }, { results: 'rich' })
    const annotated = await call(manager, 'mcp_e_get-annotated-message', { messageType: 'success', includeImage: true })
    expect(body(annotated).length).toBeGreaterThan(0)
    expect(images(annotated).map((p) => p.mimeType)).toEqual(['image/png'])
    const updates: unknown[] = []
    const long = await toolByName(manager, 'mcp_e_trigger-long-running-operation').execute('c', { duration: 1, steps: 3 }, undefined, (u) => updates.push(u))
    expect('error' in long.details).toBe(false)
    expect(updates.length).toBeGreaterThanOrEqual(1)
  })

  it('a server may opt in on its own, over Streamable HTTP too', async () => {
    const { url } = await startEverythingHttp()
    const { manager } = await start({
      plain: stdio,
      remote: { transport: 'http', url, results: 'rich' } as ServerConfig,
    })
    expect(images(await call(manager, 'mcp_remote_get-tiny-image'))).toHaveLength(1)
    expect(images(await call(manager, 'mcp_plain_get-tiny-image'))).toHaveLength(0)
  })
})

describe('rich results: checks and caps (fault server)', () => {
  const fault = (extra: Partial<ServerConfig> = {}) => faultServer(['--rich'], extra)

  it('an image whose type is not allowed or whose bytes are another type is a line, never an image', async () => {
    const { manager } = await start({ f: fault() }, { results: 'rich' })
    const svg = await call(manager, 'mcp_f_images', { count: 1, kind: 'svg' })
    expect(images(svg)).toHaveLength(0)
    expect(wrappedBody(svg)).toMatch(/\[Image: image\/svg\+xml, \d+ bytes, not shown: type image\/svg\+xml is not allowed\]/)
    const jpeg = await call(manager, 'mcp_f_images', { count: 1, kind: 'jpeg-as-png' })
    expect(images(jpeg)).toHaveLength(0)
    expect(wrappedBody(jpeg)).toMatch(/not shown: the data is image\/jpeg, not image\/png\]/)
  })

  it('100 images: maxImages pass, the rest are named', async () => {
    const { manager } = await start({ f: fault() }, { results: 'rich', maxImages: 5 })
    const result = await call(manager, 'mcp_f_images', { count: 100 })
    expect(images(result)).toHaveLength(5)
    expect(body(result).match(/more than 5 images \(maxImages\)/g)).toHaveLength(95)
  })

  it('a 50 MB text is cut to maxResultChars, head and tail kept', async () => {
    const { manager } = await start({ f: fault({ toolTimeout: 60_000 }) }, { results: 'rich', maxResultChars: 1000 })
    const body = wrappedBody(await call(manager, 'mcp_f_big', { bytes: 50_000_000 }))
    expect(body).toBe(`${'x'.repeat(500)}\n[… 49999000 characters cut (maxResultChars 1000) …]\n${'x'.repeat(500)}`)
  })

  it('structuredContent is checked against the outputSchema; a mismatch is an error naming the path', async () => {
    const { manager } = await start({ f: fault() }, { results: 'rich' })
    const ok = await call(manager, 'mcp_f_structured')
    expect((ok.details as { structuredContent?: unknown }).structuredContent).toEqual({ n: 1 })
    expect(wrappedBody(ok)).toBe('{"n":1}')
    expectErrorResult(await call(manager, 'mcp_f_structured', { valid: false }), 'f', 'structured', /^structuredContent does not match the tool's outputSchema: at \/n: /)
  })

  it('isError gives details.error beside the wrapped text; audio and links are lines', async () => {
    const { manager } = await start({ f: fault() }, { results: 'rich' })
    const flagged = await call(manager, 'mcp_f_is_error')
    expect(flagged.details).toMatchObject({ error: true, externalContent: { server: 'f', tool: 'is_error' } })
    expect(wrappedBody(flagged)).toBe('tool reported an error')
    expect(wrappedBody(await call(manager, 'mcp_f_mixed'))).toBe(
      'first\n[Audio: audio/wav, 3 bytes]\n[Resource link: alpha, fault://text/alpha]\nlast',
    )
  })

  it('bad result options are constructor errors naming them', () => {
    expect(() => createManager({ servers: {} }, { results: 'fancy' as 'rich' })).toThrow("Invalid results 'fancy': expected 'compat' or 'rich'")
    expect(() => createManager({ servers: {} }, { maxImages: -1 })).toThrow('Invalid maxImages: expected an integer from 0 to 4294967296')
    expect(() => createManager({ servers: { f: fault({ results: 'x' as 'rich' }) } })).toThrow(/servers\.f\.results: Invalid results 'x'/)
  })
})

describe('rich results from a Python server (the official mcp SDK)', () => {
  const python = process.env.PYTHON ?? 'python3'
  const py: ServerConfig = { command: python, args: [path.join(ROOT, 'tests', 'peers', 'py_rich.py')] }

  it('every content type, structured content from a Pydantic model, and a raised error', async () => {
    const { manager } = await start({ py }, { results: 'rich' })
    const every = await call(manager, 'mcp_py_every_kind')
    expect(body(every)).toBe(
      'hello from python\n[Audio: audio/wav, 8 bytes]\n[Resource: file:///notes.txt]\na note\n' +
        '[Resource link: big, file:///big.bin, application/octet-stream]',
    )
    expect(images(every).map((p) => p.mimeType)).toEqual(['image/png'])
    const weather = await call(manager, 'mcp_py_weather', { city: 'Oslo' })
    expect((weather.details as { structuredContent?: unknown }).structuredContent).toEqual({ temperature: 21.5, conditions: 'sunny in Oslo' })
    expect(JSON.parse(body(weather))).toEqual({ temperature: 21.5, conditions: 'sunny in Oslo' })
    const broken = await call(manager, 'mcp_py_broken')
    expect(broken.details).toMatchObject({ error: true, externalContent: { server: 'py', tool: 'broken' } })
    expect(body(broken)).toContain('Error executing tool broken')
  })

  it('compat mode gives the same server the original text block', async () => {
    const { manager } = await start({ py })
    const every = await call(manager, 'mcp_py_every_kind')
    expect(every.content).toHaveLength(1)
    expect(wrappedBody(every)).toBe('hello from python\n[Image: image/png]')
  })
})

describe("schemas: 'faithful'", () => {
  it('keeps the schema the server sent; compat stays the lossy conversion', async () => {
    const { manager } = await start({ f: faultServer(), g: faultServer([], { schemas: 'faithful' } as Partial<ServerConfig>) })
    const compat = toolByName(manager, 'mcp_f_schema').parameters as Record<string, any>
    expect(compat.properties.count).toEqual({ type: 'number', description: 'How many' })
    const faithful = toolByName(manager, 'mcp_g_schema').parameters as Record<string, any>
    expect(faithful.title).toBe('dropped')
    expect(faithful.properties.count).toEqual({ type: 'integer', minimum: 1, default: 1, description: 'How many' })
    expect(faithful.properties.either).toEqual({ anyOf: [{ type: 'string' }, { type: 'number' }], description: 'Either' })
    expect(faithful.properties.email).toEqual({ type: 'string', format: 'email', pattern: '.+@.+' })
    expect(faithful.properties.opts.additionalProperties).toBe(false)
  })

  it('is a manager option too, and a bad value is a constructor error', async () => {
    const { manager } = await start({ f: faultServer() }, { schemas: 'faithful' } as ManagerOptions)
    expect((toolByName(manager, 'mcp_f_schema').parameters as Record<string, any>).properties.count.type).toBe('integer')
    expect(() => createManager({ servers: {} }, { schemas: 'exact' } as never)).toThrow("Invalid schemas 'exact': expected 'compat' or 'faithful'")
  })
})
