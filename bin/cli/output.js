'use strict'
// How results are laid out on a terminal: tables, lines cut to its width, durations.

/** The width to cut lines to: the terminal's, else $COLUMNS, else 120. */
function terminalWidth(stream = process.stdout) {
  if (stream.isTTY && stream.columns) return stream.columns
  const env = Number(process.env.COLUMNS)
  return Number.isInteger(env) && env >= 20 ? env : 120
}

/** Control characters (terminal escapes included) out of text a server wrote; newlines and tabs kept. */
function safe(text) {
  return String(text ?? '').replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
}

/** Whitespace (newlines included) collapsed to one space, cut to `max` characters with '…'. */
function oneLine(text, max) {
  const flat = safe(text).replace(/\s+/g, ' ').trim()
  if (max === undefined || flat.length <= max) return flat
  if (max <= 1) return flat.slice(0, Math.max(0, max))
  return flat.slice(0, max - 1) + '…'
}

/** `line` cut to `max` characters with '…' (spacing kept). */
function cut(line, max) {
  return line.length <= max ? line : line.slice(0, Math.max(0, max - 1)) + '…'
}

/** A table's text, each line cut to the terminal's width when stdout is one (whole otherwise). */
function fitted(text, stream = process.stdout) {
  if (!stream.isTTY) return text
  const width = terminalWidth(stream)
  return text.split('\n').map((l) => cut(l, width)).join('\n')
}

/** The first paragraph line of a description, for a one-line listing. */
function firstLine(text) {
  const lines = String(text ?? '').split('\n').map((l) => l.trim())
  return lines.find((l) => l.length > 0) || ''
}

/** Rows (arrays of cells) padded into columns; the last column is not padded. */
function table(rows) {
  if (rows.length === 0) return ''
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c] ?? '').length)))
  return rows.map((r) => r.map((cell, c) => String(cell ?? '').padEnd(c === r.length - 1 ? 0 : widths[c])).join('  ').trimEnd()).join('\n')
}

/** 0.4 ms, 12 ms, 3.2 s, 4m 05s, 2h 10m. */
function duration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-'
  if (ms < 10) return `${ms.toFixed(1)} ms`
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`
  const s = Math.floor(ms / 1000)
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}

function printJson(value) {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

module.exports = { terminalWidth, safe, oneLine, cut, fitted, firstLine, table, duration, printJson }
