// The call path under load (issue 18): 100,000 tool calls, 64 in flight, and 20,000 one at a
// time, against a real stdio server, with result sizes from empty to several megabytes of mixed
// ASCII, JSON escapes, non-ASCII and astral characters, random aborts, and a server crash
// midway. Every result is checked against the text the server sent for that call's arguments,
// so a response delivered to the wrong call, a truncated or mis-decoded text, or a call that
// never settles fails the test. Not timed: speed is measured in bench/. STRESS_CALLS=N and
// STRESS_SEQUENTIAL_CALLS=N run other counts.

import { afterEach, describe, expect, it } from 'vitest'
// @ts-expect-error: a plain ES module shared with the fault server, no types
import { blobText } from './fixtures/blob.mjs'
import { cleanup, createManager, faultServer, toolByName, wrappedBody, type ManagerConfig, type ToolResult } from './helpers'

afterEach(cleanup)

const CALLS = Number(process.env.STRESS_CALLS ?? 100_000)
const IN_FLIGHT = 64
const SEQUENTIAL_CALLS = Number(process.env.STRESS_SEQUENTIAL_CALLS ?? 20_000)

/** A deterministic xorshift32, so a failure repeats with the same calls. */
function random(seed: number): () => number {
  let x = seed >>> 0
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x / 0x1_0000_0000
  }
}

/** `calls` tool calls, `inFlight` at a time, against one fault server (see the top). */
const stress = (calls: number, inFlight: number) => async () => {
    const crashAt = Math.floor(calls / 2)
    const manager = createManager({ servers: { s: faultServer(['--blob'], { restartOnCrash: true, maxRestarts: 3 }) } } as ManagerConfig, {
      toolTimeout: 60_000,
    } as never)
    await manager.start()
    const blob = toolByName(manager, 'mcp_s_blob')
    const exit = toolByName(manager, 'mcp_s_exit')

    // The crash window: from the moment the exit call is made until the server is ready again.
    let crashFrom = Infinity
    let readyAgain = Infinity
    let ready: Promise<void> = Promise.resolve()
    manager.on('status', (e: { server: string; status: string }) => {
      if (e.status === 'ready' && crashFrom !== Infinity && readyAgain === Infinity) readyAgain = performance.now()
    })
    const readyPromise = () =>
      new Promise<void>((resolve) => {
        const check = (e: { status: string }) => {
          if (e.status === 'ready') {
            manager.off('status', check as never)
            resolve()
          }
        }
        manager.on('status', check as never)
      })

    const next = random(0x5eed)
    const counts = { ok: 0, aborted: 0, crashWindow: 0, bytes: 0, largest: 0 }
    const wrong: string[] = []
    let issued = 0

    const check = (i: number, seed: number, size: number, r: ToolResult, started: number, how: string) => {
      const text = r.content?.[0]?.type === 'text' ? r.content[0].text : ''
      if ((r.details as { error?: boolean } | undefined)?.error) {
        if (how !== 'none' && /aborted/i.test(text)) counts.aborted++
        else if (performance.now() >= crashFrom && started <= readyAgain) counts.crashWindow++
        else wrong.push(`call ${i} (seed ${seed}, size ${size}, abort ${how}): error outside the crash window: ${text.slice(0, 200)}`)
        return
      }
      const expected: string = blobText(seed, size)
      let body: string
      try {
        body = wrappedBody(r)
      } catch (error) {
        wrong.push(`call ${i}: not a wrapped result: ${(error as Error).message.slice(0, 200)}`)
        return
      }
      if (body !== expected) {
        let at = 0
        while (at < body.length && body[at] === expected[at]) at++
        wrong.push(`call ${i} (seed ${seed}, size ${size}): body differs at ${at} (lengths ${body.length} / ${expected.length})`)
        return
      }
      counts.ok++
      counts.bytes += Buffer.byteLength(body)
      counts.largest = Math.max(counts.largest, Buffer.byteLength(body))
    }

    const worker = async () => {
      for (;;) {
        const i = issued++
        if (i >= calls) return
        if (i === crashAt) {
          crashFrom = performance.now()
          ready = readyPromise()
          const r = await exit.execute(`exit-${i}`, { code: 1 })
          expect((r.details as { error?: boolean }).error).toBe(true)
          await ready
          continue
        }
        const seed = Math.floor(next() * 0xffff_ffff)
        const pick = next()
        // Every 5,000th call is a multi-megabyte result; 0.5 % are 10-100 K pieces; the rest up to 2,000.
        const size =
          i % 5_000 === 1
            ? 1_000_000 + Math.floor(next() * 2_000_000)
            : pick < 0.005
              ? 10_000 + Math.floor(next() * 90_000)
              : Math.floor(next() * 2_000)
        const abortPick = next()
        let how = 'none'
        let signal: AbortSignal | undefined
        if (abortPick < 0.02) {
          const controller = new AbortController()
          signal = controller.signal
          const mode = Math.floor(next() * 3)
          if (mode === 0) {
            how = 'before'
            controller.abort()
          } else if (mode === 1) {
            how = 'next turn'
            setImmediate(() => controller.abort())
          } else {
            how = 'within 2 ms'
            setTimeout(() => controller.abort(), next() * 2)
          }
        }
        const started = performance.now()
        const r = await blob.execute(`c${i}`, { seed, size }, signal)
        check(i, seed, size, r, started, how)
        // A call refused while the server restarts: wait for it rather than spin.
        if (crashFrom !== Infinity && readyAgain === Infinity) await ready
      }
    }

    const t0 = performance.now()
    await Promise.all(Array.from({ length: inFlight }, worker))
    await manager.shutdown()
    console.log(
      `stress: ${calls} calls (${inFlight} in flight) in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${counts.ok} whole, ${counts.aborted} aborted, ` +
        `${counts.crashWindow} refused during the crash; ${(counts.bytes / 1e6).toFixed(0)} MB checked, largest ${(counts.largest / 1e6).toFixed(1)} MB`,
    )

    expect(wrong.slice(0, 10)).toEqual([])
    expect(counts.ok + counts.aborted + counts.crashWindow).toBe(calls - 1)
    // The crash happened and the server came back; aborts happened; multi-megabyte results
    // came through whole. Most calls succeed.
    expect(readyAgain).toBeLessThan(Infinity)
    expect(counts.aborted).toBeGreaterThan(calls * 0.002)
    expect(counts.largest).toBeGreaterThan(1_000_000)
    expect(counts.ok).toBeGreaterThan(calls * 0.95)
}


describe('stress', () => {
  it(`${CALLS.toLocaleString('en')} calls, ${IN_FLIGHT} in flight, random sizes, aborts and a crash: every result is what the server sent`, stress(CALLS, IN_FLIGHT), 600_000)
  // One at a time, the JS thread reads each answer itself (src/napi/output_poll.rs), and hands a
  // message over 64 KiB back to a worker: both paths, and the switches between them.
  it(`${SEQUENTIAL_CALLS.toLocaleString('en')} calls one at a time, random sizes, aborts and a crash: every result is what the server sent`, stress(SEQUENTIAL_CALLS, 1), 600_000)
})
