/*
 * The smallest MCP server over stdio this bench can think of, for measuring MCP *clients*.
 *
 * One thread, no JSON library: it reads request lines from fd 0 with read(2) and answers each
 * one, as soon as it has the whole line, with a single write(2) to fd 1. It looks only at the
 * request's "id" and "method" (and, for tools/call, the tool's name and one number), so the
 * time it spends is a few microseconds and the rows measure the client and the pipe.
 *
 *   initialize            -> the version asked for if it knows it, else 2025-06-18; tools only
 *   tools/list            -> echo, text
 *   tools/call echo       -> the fixed text "hi" (the bench calls it with {"text":"hi"})
 *   tools/call text       -> {"bytes": N} bytes of 'x' (N up to 16 MiB)
 *   ping, logging/setLevel -> {}
 *   anything else with an id -> -32601; notifications and answers -> nothing
 *
 * It exits when stdin ends or its parent goes away (the parent's pid is checked between reads
 * with a 1 s poll timeout), so an interrupted bench leaves nothing behind.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *out;
static size_t out_cap;

static void reserve(size_t need) {
  if (need <= out_cap) return;
  while (need > out_cap) out_cap = out_cap ? out_cap * 2 : 65536;
  out = realloc(out, out_cap);
  if (!out) exit(2);
}

static void put(size_t *len, const char *s, size_t n) {
  reserve(*len + n);
  memcpy(out + *len, s, n);
  *len += n;
}
#define PUTS(len, s) put(len, s, strlen(s))

static void write_all(const char *p, size_t n) {
  while (n) {
    ssize_t w = write(1, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      exit(0); /* the client went away */
    }
    p += w;
    n -= (size_t)w;
  }
}

/* The raw JSON value after "key": in line (a number or a string with its quotes), or NULL. */
static const char *value_of(const char *line, const char *key, size_t *n) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *p = strstr(line, pat);
  if (!p) return NULL;
  p += strlen(pat);
  while (*p == ' ' || *p == ':') p++;
  const char *e = p;
  if (*e == '"') {
    e++;
    while (*e && *e != '"') e += (*e == '\\' && e[1]) ? 2 : 1;
    if (*e) e++;
  } else {
    while (*e && *e != ',' && *e != '}' && *e != ' ') e++;
  }
  *n = (size_t)(e - p);
  return *n ? p : NULL;
}

static int is(const char *v, size_t n, const char *quoted) {
  return v && n == strlen(quoted) && memcmp(v, quoted, n) == 0;
}

static void answer(const char *line) {
  size_t mn, idn;
  const char *method = value_of(line, "method", &mn);
  const char *id = value_of(line, "id", &idn);
  if (!method || !id || is(id, idn, "null")) return; /* a notification or an answer */
  size_t len = 0;
  PUTS(&len, "{\"jsonrpc\":\"2.0\",\"id\":");
  put(&len, id, idn);
  if (is(method, mn, "\"initialize\"")) {
    size_t vn;
    const char *v = value_of(line, "protocolVersion", &vn);
    const char *known[] = {"\"2025-11-25\"", "\"2025-06-18\"", "\"2025-03-26\"", "\"2024-11-05\""};
    const char *version = known[1];
    for (size_t i = 0; i < 4; i++)
      if (is(v, vn, known[i])) version = known[i];
    PUTS(&len, ",\"result\":{\"protocolVersion\":");
    PUTS(&len, version);
    PUTS(&len, ",\"capabilities\":{\"tools\":{\"listChanged\":false}},"
               "\"serverInfo\":{\"name\":\"mcp-bench-c-server\",\"version\":\"0.0.0\"}}}\n");
  } else if (is(method, mn, "\"tools/list\"")) {
    PUTS(&len, ",\"result\":{\"tools\":["
               "{\"name\":\"echo\",\"description\":\"Echo back the given text\",\"inputSchema\":"
               "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
               "\"description\":\"Text to echo back\"}},\"required\":[\"text\"]}},"
               "{\"name\":\"text\",\"description\":\"Return `bytes` bytes of generated text\","
               "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"bytes\":{\"type\":\"integer\","
               "\"minimum\":0,\"description\":\"How many bytes of text\"}},\"required\":[\"bytes\"]}}"
               "]}}\n");
  } else if (is(method, mn, "\"tools/call\"")) {
    size_t nn;
    const char *name = value_of(line, "name", &nn);
    if (is(name, nn, "\"echo\"")) {
      PUTS(&len, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n");
    } else if (is(name, nn, "\"text\"")) {
      size_t bn;
      const char *b = value_of(line, "bytes", &bn);
      long bytes = b ? strtol(b, NULL, 10) : 0;
      if (bytes < 0) bytes = 0;
      if (bytes > (16L << 20)) bytes = 16L << 20;
      PUTS(&len, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
      reserve(len + (size_t)bytes);
      memset(out + len, 'x', (size_t)bytes);
      len += (size_t)bytes;
      PUTS(&len, "\"}]}}\n");
    } else {
      PUTS(&len, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Unknown tool\"}],\"isError\":true}}\n");
    }
  } else if (is(method, mn, "\"ping\"") || is(method, mn, "\"logging/setLevel\"")) {
    PUTS(&len, ",\"result\":{}}\n");
  } else {
    PUTS(&len, ",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n");
  }
  write_all(out, len);
}

int main(void) {
  pid_t parent = getppid();
  size_t cap = 1 << 20, have = 0;
  char *buf = malloc(cap + 1);
  if (!buf) return 2;
  for (;;) {
    struct pollfd in = {.fd = 0, .events = POLLIN};
    int r = poll(&in, 1, 1000);
    if (r == 0) {
      if (getppid() != parent) return 0;
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (have == cap) {
      cap *= 2;
      buf = realloc(buf, cap + 1);
      if (!buf) return 2;
    }
    ssize_t n = read(0, buf + have, cap - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    have += (size_t)n;
    size_t from = 0;
    for (;;) {
      char *nl = memchr(buf + from, '\n', have - from);
      if (!nl) break;
      *nl = 0;
      answer(buf + from);
      from = (size_t)(nl - buf) + 1;
    }
    memmove(buf, buf + from, have - from);
    have -= from;
  }
}
