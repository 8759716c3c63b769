// What every bench script reads first: the repo's root and its command-line options.

import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root directory. */
export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The script's arguments (after `node script.mjs`). */
export const argv = process.argv.slice(2)

/** The value after `--name`, or `dflt`. */
export const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : dflt
}
