//! The fuzz targets' bodies: each turns libFuzzer's bytes into the input of one parser and
//! runs the invariants of [`oracles`] (shared with `tests/fuzz_props.rs`) on it.

pub mod oracles;

use oracles::redact::{Cut, ENCODINGS, Piece};

/// Reads a fuzz input as a sequence of small decisions; past the end every read is 0.
pub struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    pub fn byte(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().map_or((0, &[][..]), |(f, r)| (*f, r));
        self.0 = rest;
        first
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let v = usize::from(self.byte()) << 8 | usize::from(self.byte());
        v % n
    }

    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }

    /// Up to the next `sep` (dropped) or the end.
    pub fn until(&mut self, sep: u8) -> &'a [u8] {
        match memchr::memchr(sep, self.0) {
            Some(i) => {
                let part = &self.0[..i];
                self.0 = &self.0[i + 1..];
                part
            }
            None => self.rest(),
        }
    }

    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `max`, pipe read sizes (0 = one `Pending`), output buffer size, then the server's output.
pub fn stdio_lines(data: &[u8]) {
    let mut b = Bytes(data);
    let max = [16, 100, 300, 1000, 4096, 1 << 16][usize::from(b.byte()) % 6];
    let steps: Vec<usize> = (0..b.byte() % 16).map(|_| usize::from(b.byte())).collect();
    let out_buf = 1 + usize::from(b.byte());
    oracles::stdio::check(b.rest(), max, &steps, out_buf);
}

/// Limit, chunk sizes, then the event stream.
pub fn sse(data: &[u8]) {
    let mut b = Bytes(data);
    let limit = [1, 4, 16, 64, 1 << 16][usize::from(b.byte()) % 5];
    let cuts: Vec<usize> = (0..b.byte() % 12).map(|_| usize::from(b.byte())).collect();
    oracles::sse::check(b.rest(), limit, &cuts);
}

/// One line from a server.
pub fn jsonrpc(data: &[u8]) {
    oracles::jsonrpc::check(data);
}

/// Flags, then content, sender, subject and task name separated by NUL bytes (an absent
/// field is `None`, an empty one `Some("")`).
pub fn wrap(data: &[u8]) {
    let mut b = Bytes(data);
    let flags = b.byte();
    let content = text(b.until(0));
    let mut field = || (!b.is_empty()).then(|| text(b.until(0)));
    let (sender, subject, task) = (field(), field(), field());
    let source = ["mcp_server", "email", "web_fetch", "", "other"][usize::from(flags >> 4) % 5];
    oracles::wrap::check(&oracles::wrap::Input {
        content: &content,
        source,
        sender: sender.as_deref(),
        subject: subject.as_deref(),
        task_name: task.as_deref(),
        include_warning: flags & 1 != 0,
        legacy: flags & 2 != 0,
        mcp_server_label: flags & 4 != 0,
        id: "0123456789abcdef",
    });
}

/// A JSON schema (text); anything that is not JSON converts as a missing schema.
pub fn schema(data: &[u8]) {
    match serde_json::from_slice::<serde_json::Value>(data) {
        Ok(v) => oracles::schema::check(Some(&v)),
        Err(_) => oracles::schema::check(None),
    }
}

/// Lines: `#server` or `#server|prefix` starts a server, `!name` reserves a name, any other
/// line is a tool of the current server.
pub fn naming(data: &[u8]) {
    let all = text(data);
    let mut servers: Vec<oracles::naming::Server> = Vec::new();
    let mut reserved = Vec::new();
    for line in all.split('\n') {
        if let Some(s) = line.strip_prefix('#') {
            let (name, prefix) = match s.split_once('|') {
                Some((n, p)) => (n.to_owned(), Some(p.to_owned())),
                None => (s.to_owned(), None),
            };
            servers.push(oracles::naming::Server {
                name,
                prefix,
                tools: Vec::new(),
            });
        } else if let Some(r) = line.strip_prefix('!') {
            reserved.push(r.to_owned());
        } else {
            if servers.is_empty() {
                servers.push(oracles::naming::Server {
                    name: "s".into(),
                    prefix: None,
                    tools: Vec::new(),
                });
            }
            servers.last_mut().expect("one").tools.push(line.to_owned());
        }
    }
    oracles::naming::check(&servers, &reserved);
}

/// Which agent, then a config document (JSON text).
pub fn config(data: &[u8]) {
    let mut b = Bytes(data);
    let agent = [None, Some("main"), Some("work")][usize::from(b.byte()) % 3];
    oracles::config::check_text(b.rest(), agent);
}

/// A value that may be a `secret://` reference; as JSON, a SecretRef object.
pub fn secret_uri(data: &[u8]) {
    oracles::secret_uri::check(&text(data));
    if let Ok(serde_json::Value::Object(obj)) = serde_json::from_slice(data) {
        oracles::secret_uri::check_ref_object(&obj);
    }
}

/// Characters a secret is drawn from (no `[` or `]`: see the oracle).
const SECRET_CHARS: &[char] = &[
    'a', 'b', 'c', 'x', 'y', 'z', 'A', 'Z', '0', '1', '9', '/', '+', '=', '?', '&', '<', '>', '"',
    '\\', ' ', '%', ':', '!', '*', '\'', '(', ')', '~', '-', '_', '.', '\t', '\n', 'é', '😀',
    '\u{2028}', '中', '\u{1}',
];

/// Secrets (count, then per secret a length and its characters), pieces of text (a tag,
/// then the piece), and an optional cut at the end.
pub fn redact(data: &[u8]) {
    let mut b = Bytes(data);
    let count = 1 + usize::from(b.byte()) % 4;
    let secrets: Vec<String> = (0..count)
        .map(|_| {
            let len = 6 + usize::from(b.byte()) % 30;
            (0..len)
                .map(|_| SECRET_CHARS[usize::from(b.byte()) % SECRET_CHARS.len()])
                .collect()
        })
        .collect();
    let enc = |b: &mut Bytes<'_>| ENCODINGS[usize::from(b.byte()) % ENCODINGS.len()];
    let mut pieces = Vec::new();
    let mut cut = None;
    while !b.is_empty() && pieces.len() < 16 {
        let tag = b.byte();
        let secret = usize::from(tag >> 3) % count;
        match tag % 6 {
            0 | 1 => {
                let n = usize::from(b.byte()) % 24;
                pieces.push(Piece::Filler(text(b.take(n))));
            }
            2 | 3 => pieces.push(Piece::Secret(secret, enc(&mut b))),
            4 => {
                let n = usize::from(b.byte()) % 7;
                let before = b.take(n).to_vec();
                let n = usize::from(b.byte()) % 4;
                let after = b.take(n).to_vec();
                let url_safe = b.byte() & 1 == 1;
                pieces.push(Piece::InBase64 {
                    secret,
                    before,
                    after,
                    url_safe,
                });
            }
            _ => {
                // A run of a spelling as filler (to make overlaps), or the cut at the end.
                let e = enc(&mut b);
                let form = oracles::redact::encode(&secrets[secret], e);
                let (at, len) = (b.below(form.len() + 1), usize::from(b.byte()) % 24);
                if b.byte() & 1 == 0 {
                    let mut s = at.min(form.len());
                    while !form.is_char_boundary(s) {
                        s -= 1;
                    }
                    let mut end = (s + len).min(form.len());
                    while !form.is_char_boundary(end) {
                        end -= 1;
                    }
                    pieces.push(Piece::Filler(form[s..end].to_owned()));
                } else {
                    cut = Some(Cut {
                        secret,
                        enc: e,
                        keep: 8 + len * 2,
                        ellipsis: b.byte(),
                    });
                    break;
                }
            }
        }
    }
    oracles::redact::check(&secrets, &pieces, cut.as_ref());
}
