#!/usr/bin/env node
// The package from a shell: start the servers of any MCP config and look at them (status, tools,
// resources, prompts), call a tool, probe one server, check a config with doctor, convert a config
// with import, sign in to OAuth servers. With no --config it runs the built-in example server.
'use strict'

const { parseArgs, UsageError } = require('./cli/args')
const { ArgsError } = require('./cli/call')
const { ConfigError } = require('./cli/config')
const { CliLogger } = require('./cli/logger')
const { usage } = require('./cli/usage')

const COMMANDS = {
  run: () => require('./cli/commands/run').run,
  status: () => require('./cli/commands/status').status,
  tools: () => require('./cli/commands/tools').tools,
  call: () => require('./cli/commands/call').call,
  resources: () => require('./cli/commands/resources').resources,
  prompts: () => require('./cli/commands/resources').prompts,
  probe: () => require('./cli/commands/probe').probe,
  doctor: () => require('./cli/commands/doctor').doctor,
  import: () => require('./cli/commands/import').importConfig,
  serve: () => require('./cli/commands/serve').serve,
  login: () => require('./cli/commands/login').loginOrLogout,
  logout: () => require('./cli/commands/login').loginOrLogout,
  openclaw: () => require('./cli/commands/openclaw').openclaw,
}

async function main(argv) {
  let parsed
  try {
    parsed = parseArgs(argv)
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    process.stderr.write(`openclaw-mcp-native: ${e.message}\nRun 'openclaw-mcp-native ${e.command && e.command !== 'run' ? `${e.command} ` : ''}--help' for usage.\n`)
    return 2
  }
  const { command, positional, flags } = parsed
  if (flags['--help']) {
    process.stdout.write(usage(command) + '\n')
    return 0
  }
  const logger = new CliLogger({ verbose: Boolean(flags['--verbose']), quiet: Boolean(flags['--quiet']) })
  const ctx = { command, positional, flags, logger, UsageError, ConfigError }
  try {
    return await COMMANDS[command]()(ctx)
  } catch (e) {
    if (e instanceof UsageError || e instanceof ConfigError || e instanceof ArgsError) {
      process.stderr.write(`openclaw-mcp-native: ${e.message}\n`)
      return 2
    }
    throw e
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (e) => {
    process.stderr.write(`openclaw-mcp-native: ${e && e.message ? e.message : e}\n`)
    process.exitCode = 1
  },
)
