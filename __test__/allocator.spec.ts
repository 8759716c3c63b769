// The addon's allocator asks for no transparent huge pages (mimalloc's `no_thp` in Cargo.toml):
// madvised MADV_HUGEPAGE, mimalloc's 1 GiB arena became resident 2 MiB at a time for a few KiB
// in use, ~9 MB of host RSS at start and 2 MB more now and then (issue 18, host RSS per idle
// server). Linux only (smaps' `hg` flag); on a kernel without THP it cannot tell the two apart.

import fs from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, createManager, echoServer, type ManagerConfig } from './helpers'

afterEach(cleanup)

/** The mappings of this process that are madvised for transparent huge pages. */
function hugePageAdvised(): string[] {
  const found: string[] = []
  let mapping = ''
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) mapping = line
    else if (line.startsWith('VmFlags:') && line.split(/\s+/).includes('hg')) found.push(mapping)
  }
  return found
}

describe('allocator', () => {
  it.runIf(process.platform === 'linux')('no memory of the host is madvised for huge pages once a server is connected', async () => {
    const manager = createManager({ servers: { echo: echoServer() } } as ManagerConfig)
    await manager.start()
    expect(manager.getStatus().map((s) => s.status)).toEqual(['ready'])
    expect(hugePageAdvised()).toEqual([])
  })
})
