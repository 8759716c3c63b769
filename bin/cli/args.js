'use strict'
// The command line, read into { command, positional, flags }. Every error names the flag or the
// argument it is about; nothing is read from the environment here.

const COMMANDS = ['run', 'status', 'tools', 'call', 'resources', 'prompts', 'probe', 'doctor', 'import', 'serve', 'login', 'logout', 'openclaw']

/** Flags every command takes: name → whether it takes a value. */
const GLOBAL = {
  '--config': true,
  '--shape': true,
  '--agent': true,
  '--timeout': true,
  '--tool-names': true,
  '--oauth-dir': true,
  '--verbose': false,
  '--quiet': false,
  '--json': false,
  '--help': false,
}

/** Each command's own flags and how many positional arguments it takes ([min, max]). */
const COMMAND_FLAGS = {
  run: { flags: { '--call': true, '--args': true, '--args-file': true, '--no-call': false }, positional: [0, 0] },
  status: { flags: {}, positional: [0, 0] },
  tools: { flags: { '--full': false }, positional: [0, 1] },
  call: { flags: { '--args': true, '--args-file': true }, positional: [1, 1] },
  resources: { flags: {}, positional: [0, 0] },
  prompts: { flags: {}, positional: [0, 0] },
  probe: { flags: {}, positional: [1, 1] },
  doctor: { flags: { '--offline': false }, positional: [0, 0] },
  import: { flags: { '--to': true }, positional: [1, 1] },
  serve: {
    flags: {
      '--http': true,
      '--host': true,
      '--stateless': false,
      '--names': true,
      '--no-wrap': false,
      '--results': true,
      '--schemas': true,
      '--servers': true,
      '--allow': true,
      '--deny': true,
      '--limits': true,
    },
    positional: [0, 0],
  },
  login: { flags: { '--code': false }, positional: [1, 1] },
  logout: { flags: {}, positional: [1, 1] },
  openclaw: { flags: { '--plugin-dir': true, '--cached': false }, positional: [1, 1] },
}

const POSITIONAL_NAMES = { tools: 'SERVER', call: 'TOOL', probe: 'SERVER', import: 'FILE', login: 'SERVER', logout: 'SERVER', openclaw: 'a subcommand (sync)' }

class UsageError extends Error {
  constructor(message, command) {
    super(message)
    this.command = command
  }
}

function parseArgs(argv) {
  let command = 'run'
  let rest = argv
  if (argv.length > 0 && !argv[0].startsWith('-')) {
    if (!COMMANDS.includes(argv[0])) throw new UsageError(`unknown command '${argv[0]}' (commands: ${COMMANDS.join(', ')})`)
    command = argv[0]
    rest = argv.slice(1)
  }
  const own = COMMAND_FLAGS[command]
  const flags = {}
  const positional = []
  for (let i = 0; i < rest.length; i++) {
    let arg = rest[i]
    if (arg === '-h') arg = '--help'
    if (!arg.startsWith('--') || arg === '--') {
      if (arg === '--') {
        positional.push(...rest.slice(i + 1))
        break
      }
      positional.push(arg)
      continue
    }
    let name = arg
    let inline
    const eq = arg.indexOf('=')
    if (eq > 0) {
      name = arg.slice(0, eq)
      inline = arg.slice(eq + 1)
    }
    const takesValue = name in GLOBAL ? GLOBAL[name] : own.flags[name]
    if (takesValue === undefined) {
      const elsewhere = Object.keys(COMMAND_FLAGS).filter((c) => name in COMMAND_FLAGS[c].flags)
      const hint = elsewhere.length ? ` (it belongs to: ${elsewhere.join(', ')})` : ''
      throw new UsageError(`unknown flag '${name}' for ${command}${hint}`, command)
    }
    if (name in flags) throw new UsageError(`${name} is given twice`, command)
    if (takesValue) {
      if (inline !== undefined) flags[name] = inline
      else if (i + 1 < rest.length) flags[name] = rest[++i]
      else throw new UsageError(`${name} needs a value`, command)
    } else {
      if (inline !== undefined) throw new UsageError(`${name} takes no value`, command)
      flags[name] = true
    }
  }
  const [min, max] = own.positional
  if (!flags['--help']) {
    if (positional.length < min) throw new UsageError(`${command} needs ${POSITIONAL_NAMES[command]}`, command)
    if (positional.length > max) throw new UsageError(`unexpected argument '${positional[max]}' for ${command}`, command)
  }
  if (flags['--quiet'] && flags['--verbose']) throw new UsageError('--quiet and --verbose cannot be used together', command)
  if (flags['--args'] !== undefined && flags['--args-file'] !== undefined) {
    throw new UsageError('--args and --args-file cannot be used together', command)
  }
  if (flags['--timeout'] !== undefined) flags['--timeout'] = parseDuration(flags['--timeout'])
  return { command, positional, flags }
}

/** `30`, `30s`, `500ms`, `2m` → milliseconds. A bare number is seconds. */
function parseDuration(text) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(String(text).trim())
  const ms = m ? Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 'm' ? 60000 : 1000) : NaN
  if (!Number.isFinite(ms) || ms < 1 || ms > 86400000) {
    throw new UsageError(`--timeout: expected a duration such as 30s, 500ms or 2m (a bare number is seconds), got '${text}'`)
  }
  return Math.round(ms)
}

module.exports = { parseArgs, parseDuration, UsageError, COMMANDS }
