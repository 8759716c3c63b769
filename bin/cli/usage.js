'use strict'
// `--help` of the tool and of each command.

const GLOBAL = `Options for every command:
  --config FILE     any MCP config, its shape detected: an McpConfig ({"servers": {...}}), an
                    openclaw.json (agents.defaults.mcp merged with agents.list[].mcp of --agent, or
                    current OpenClaw's top-level mcp.servers), a Claude Desktop / Cursor / VS Code
                    mcpServers file, or an ACP session/new mcpServers array. Without it: the
                    built-in example server (examples/echo-server.mjs)
  --shape SHAPE     skip detection: mcp, openclaw, openclaw-mcp, mcpServers or acp
  --agent ID        the agent whose servers to use, with an openclaw.json
  --timeout D       how long starting the servers (and a call) may take: 30s, 500ms, 2m; a bare
                    number is seconds. Default: each server's own timeout
  --tool-names S    compat (mcp_<server>_<tool>, the default) or openclaw (<server>__<tool>)
  --oauth-dir DIR   where OAuth tokens are kept (default ~/.openclaw/mcp-native/oauth)
  --json            print the result as JSON on stdout (nothing else goes to stdout)
  --verbose         print every log line and every server's stderr to stderr
  --quiet           print only the result and errors (no start display, no warnings)
  -h, --help        this text; after a command, that command's help`

const COMMANDS = `Commands:
  (none)            start the servers, print their status and tools; --call TOOL calls one
  status            start the servers and print a table of their state
  tools [SERVER]    list the agent tools (of one server), one line each; --full for the whole text
  call TOOL         call an agent tool and print its wrapped result
  resources         list every server's resources and resource templates
  prompts           list every server's prompts
  probe SERVER      connect, initialize, list and ping one server, timing each step
  doctor            check the config and every server; print each problem with its fix
  import FILE       convert any config this package reads to an McpConfig or openclaw.json
  serve             serve every server's tools as one MCP server (stdio, or --http PORT)
  login SERVER      sign in to an OAuth server
  logout SERVER     delete an OAuth server's stored tokens
  openclaw sync     declare the OpenClaw plugin's tools (contracts.tools) from openclaw.json`

const MAIN = `usage: openclaw-mcp-native [COMMAND] [OPTIONS]

${COMMANDS}

${GLOBAL}

Without a command: starts the servers, prints their status and agent tools, and with
  --call TOOL [--args JSON | --args-file FILE]  calls one tool and prints the wrapped result
  --no-call   with the built-in example: only list (by default it calls its echo tool)

Exit status: 0 when everything worked; 1 when a server failed, a call failed or returned an error
result, or doctor found a warning; 2 for a usage or config error, or a doctor error.
Run 'openclaw-mcp-native COMMAND --help' for a command's own options.`

const PER_COMMAND = {
  run: MAIN,
  status: `usage: openclaw-mcp-native status [OPTIONS]

Starts every enabled server and prints one line per server: transport, protocol revision, status,
tools, restarts, uptime, last error and (for OAuth servers) auth state. Exit 1 when a server is not
ready.

${GLOBAL}`,
  tools: `usage: openclaw-mcp-native tools [SERVER] [--full] [OPTIONS]

Lists the agent tools of every ready server (or of SERVER), one line each: the agent tool name and
the first line of its description, cut to the terminal's width.
  --full   print each tool's whole description and its input schema

${GLOBAL}`,
  call: `usage: openclaw-mcp-native call TOOL [--args JSON | --args-file FILE] [OPTIONS]

Calls the agent tool TOOL (as 'tools' names it, e.g. mcp_example_echo) and prints its result,
wrapped as untrusted content, as the model would see it. Progress the server reports is shown on
stderr while the call runs. Exit 1 when the call fails, times out or the server returns an error
result (isError).
  --args JSON        the arguments, a JSON object (default {})
  --args-file FILE   read the arguments from FILE ('-' for stdin)

${GLOBAL}`,
  resources: `usage: openclaw-mcp-native resources [OPTIONS]

Lists the resources and resource templates of every ready server that offers them.

${GLOBAL}`,
  prompts: `usage: openclaw-mcp-native prompts [OPTIONS]

Lists the prompts of every ready server that offers them, with their arguments.

${GLOBAL}`,
  probe: `usage: openclaw-mcp-native probe SERVER [OPTIONS]

Starts SERVER alone (no restarts) and times each step: connect (process spawned or connection
made), initialize, tools/list and one ping. Exit 1 when a step fails.

${GLOBAL}`,
  doctor: `usage: openclaw-mcp-native doctor [--offline] [OPTIONS]

Checks the config and every server, and prints each problem found with its fix: credentials
written in plain text, npx/uvx servers without a pinned version, commands not on PATH,
unreachable URLs and TLS failures, loader-hijack variables in this environment, secrets that do
not resolve (never printing a value), servers that fail to start or answer, and tool names a
model provider would refuse or that collide.
  --offline   do not contact URLs or start servers (config checks only)

Exit status: 0 when nothing worse than a note was found, 1 for warnings, 2 for errors.

${GLOBAL}`,
  import: `usage: openclaw-mcp-native import FILE [--to mcp|openclaw] [OPTIONS]

Reads FILE in any config shape this package reads (see --config) and prints it on stdout as
  --to mcp        an McpConfig {"servers": {...}} (the default)
  --to openclaw   an openclaw.json fragment {"agents": {"defaults": {"mcp": {...}}}}
                  (with --agent: {"agents": {"list": [{"id": ..., "mcp": {...}}]}})
Values equal to the defaults are left out; what was ignored on the way is listed on stderr.

${GLOBAL}`,
  serve: `usage: openclaw-mcp-native serve [--http PORT [--host H] [--stateless]] [GATEWAY OPTIONS] [OPTIONS]

Starts the servers and serves their agent tools as one MCP server (a gateway): the names the
manager gives them, every result redacted and wrapped as untrusted content, progress and
cancellation passed both ways, tools/list_changed when the tools change. Without --http it
speaks MCP on stdin/stdout (point Claude Desktop, Cursor or any MCP client at this command);
logs and the start display go to stderr. Without --config it serves the built-in example.
  --http PORT    serve Streamable HTTP on PORT (0: a free one) instead; prints the URL on stdout
  --host H       the address to listen on (default 127.0.0.1; only loopback clients are
                 accepted on a loopback address)
  --stateless    no HTTP sessions: each request served on its own

Gateway options (manager.serve() and the manager's own):
  --names N      manager (default: the agent names, mcp_<server>_<tool>) or upstream (each
                 server's own tool and prompt names; a name two servers share keeps the
                 manager's name)
  --no-wrap      serve each result as the server sent it (content blocks, structuredContent,
                 isError), redacted, not wrapped as untrusted content
  --results R    compat (default: one wrapped text block per result) or rich (images, resource
                 lines, structuredContent, isError kept)
  --schemas S    compat (default: the original's lossy conversion) or faithful (each
                 inputSchema as the server wrote it)
  --servers A,B  serve only these servers' tools, resources and prompts
  --allow P,Q    serve only tools whose agent name matches a pattern (* matches any run)
  --deny P,Q     never serve tools whose agent name matches a pattern (deny wins)
  --limits L     response rules for every result: openclaw, a JSON object
                 {"maxImages":10,"maxFiles":5,"maxItemBytes":…,"maxResponseBytes":…,
                 "allowedImageTypes":[…],"allowedFileTypes":[…]} or @FILE holding one

Runs until the client closes stdin (stdio) or the process gets SIGINT/SIGTERM.

${GLOBAL}`,
  login: `usage: openclaw-mcp-native login SERVER --config FILE [--code] [OPTIONS]

Signs in to an OAuth server (auth in its config): prints the authorization URL, waits for the
browser on the loopback redirect URI (auth.redirectUri, default http://127.0.0.1:8976/callback)
and stores the tokens.
  --code   read the callback URL or the code from stdin instead of listening

${GLOBAL}`,
  logout: `usage: openclaw-mcp-native logout SERVER --config FILE [OPTIONS]

Deletes the stored OAuth tokens of SERVER.

${GLOBAL}`,
  openclaw: `usage: openclaw-mcp-native openclaw sync [--config OPENCLAW_JSON] [--plugin-dir DIR] [--cached]

For the OpenClaw plugin (openclaw plugins install @openclaw/mcp-native). OpenClaw offers a
plugin's tool only when its name is declared in the plugin's openclaw.plugin.json
(contracts.tools), which it reads when the gateway starts. sync starts the servers the plugin
runs for the openclaw.json (OpenClaw's mcp.servers, or the plugin's own config), writes every
agent's tool names there and their definitions to openclaw.tools.json (offered while the servers
start), and prints per server its tools and what changed since the last sync. A server that does
not start keeps the tools of the last sync. Restart the gateway afterwards.

  --config FILE     the openclaw.json (default $OPENCLAW_CONFIG_PATH, else
                    $OPENCLAW_STATE_DIR/openclaw.json, else ~/.openclaw/openclaw.json)
  --plugin-dir DIR  where OpenClaw loads the plugin from. Default: the linked checkout named in
                    plugins.load.paths ('openclaw plugins install -l'), else the copy under
                    $OPENCLAW_STATE_DIR/extensions/mcp-native ('openclaw plugins install'),
                    else this package's own directory
  --cached          take a server's tools from the tool cache (~/.openclaw/mcp-native/tools)
                    when it has them, without starting the server
  --timeout D       how long each server's start may take
  --json            the result as JSON: { names, servers: [{ server, status, tools, change }], ... }

Exit status: 0 when every server started; 1 when one did not (its last synced tools are kept);
2 for a usage or config error.`,
}

function usage(command) {
  return PER_COMMAND[command] || MAIN
}

module.exports = { usage }
