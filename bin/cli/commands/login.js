'use strict'
// `login SERVER` and `logout SERVER`: an OAuth server's sign-in from a shell, and its tokens gone.

const http = require('node:http')
const readline = require('node:readline')
const { McpManager } = require('../../..')
const { loadConfig } = require('../config')
const { defaultOAuthDir } = require('../session')

/** `authorize` for `login`: the loopback listener on the redirect URI, or a pasted answer. */
function loginAuthorizer(redirectUri, pasted) {
  return async (url, { server }) => {
    console.error(`Open this URL in a browser to sign in to '${server}':\n\n  ${url}\n`)
    if (pasted) return readAnswer()
    const redirect = new URL(redirectUri)
    if (redirect.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(redirect.hostname)) {
      throw new Error(`the redirect URI ${redirectUri} is not a loopback http:// address; use --code`)
    }
    return listenForCallback(redirect)
  }
}

function readAnswer() {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
  return new Promise((resolve, reject) => {
    let answered = false
    rl.question('Paste the URL the browser was sent to (or the code): ', (answer) => {
      answered = true
      rl.close()
      // Nothing more is read; an open stdin pipe would keep the process alive.
      process.stdin.destroy()
      answer.trim() ? resolve(answer.trim()) : reject(new Error('no answer given'))
    })
    rl.on('close', () => answered || reject(new Error('stdin closed before an answer')))
  })
}

function listenForCallback(redirect) {
  return new Promise((resolve, reject) => {
    const server = http.createServer((req, res) => {
      const got = new URL(req.url, redirect)
      if (got.pathname !== redirect.pathname) {
        res.writeHead(404).end()
        return
      }
      const failed = got.searchParams.get('error')
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
      res.end(failed ? `Sign-in failed: ${failed}. You can close this window.\n` : 'Signed in. You can close this window.\n')
      server.close()
      failed ? reject(new Error(`the authorization server answered ${failed}`)) : resolve(got.href)
    })
    server.on('error', (e) => reject(new Error(`cannot listen on ${redirect.host}: ${e.message}`)))
    server.listen(Number(redirect.port || 80), redirect.hostname.replace(/^\[|\]$/g, ''))
  })
}

async function loginOrLogout(ctx) {
  const { flags, positional, logger } = ctx
  const opts = { command: ctx.command, server: positional[0], config: flags['--config'], code: Boolean(flags['--code']), oauthDir: flags['--oauth-dir'] }
  if (!opts.config) throw new ctx.UsageError(`${opts.command} needs --config`)
  const { config } = loadConfig(flags)
  const entry = config.servers && config.servers[opts.server]
  if (!entry) {
    console.error(`openclaw-mcp-native: ${opts.config} has no server named '${opts.server}'`)
    return 2
  }
  if (!entry.auth) {
    console.error(`openclaw-mcp-native: server '${opts.server}' has no auth (OAuth) in ${opts.config}`)
    return 2
  }
  const dir = opts.oauthDir || defaultOAuthDir()
  const redirectUri = (typeof entry.auth === 'object' && entry.auth.redirectUri) || 'http://127.0.0.1:8976/callback'
  // A person signs in within this start: ten minutes instead of the connect timeout.
  const single = { servers: { [opts.server]: { ...entry, enabled: true, timeout: 600000, restartOnCrash: false } } }
  const oauth = opts.command === 'login' ? { dir, authorize: loginAuthorizer(redirectUri, opts.code) } : { dir }
  const manager = new McpManager(single, { logger, oauth })
  try {
    if (opts.command === 'logout') {
      const had = await manager.logout(opts.server)
      console.log(had ? `Signed out of '${opts.server}': its tokens were deleted from ${dir}` : `No stored tokens for '${opts.server}' in ${dir}`)
      return 0
    }
    await manager.start()
    const [status] = manager.getStatus()
    if (status.status === 'ready') {
      console.log(`Signed in to '${opts.server}' (${status.toolCount} tools); tokens stored in ${dir}`)
      return 0
    }
    console.error(`openclaw-mcp-native: signing in to '${opts.server}' failed (see the error above)`)
    return 1
  } finally {
    await manager.shutdown()
  }
}

module.exports = { loginOrLogout }
