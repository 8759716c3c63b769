//! A large `tools/list` answer cut down to what the client keeps, before rmcp parses it.
//!
//! rmcp parses an answer whole: every tool with its schema, first buffered as serde's
//! untagged `Content` (its message enums are untagged), then as `Tool`s. A listing of 100,000
//! tools (19 MB) took 417 MB to read, to keep the 10,000 `maxTools` allows. So the stdio
//! transport notes which of rmcp's requests are `tools/list` ([`ListingBound::sent`]), and an
//! answer to one of them of at least [`TRIM_FROM`] bytes is read here first
//! ([`ListingBound::answered`]): each element of `result.tools` as borrowed raw JSON, only its
//! `name` looked at (for the filter), the first `keep` that pass kept as they are written, and
//! the answer rewritten without the others. How many of those passed the filter is kept for the
//! listing's warning ([`ListingBound::take_beyond`]).
//!
//! The answer reaches rmcp unchanged whenever nothing is left out, or whenever it is not a
//! listing this reading understands (not JSON, no `result.tools` array, a tool without a string
//! `name`, or a tool left out that rmcp could not read as a `Tool`): then rmcp reads it, and
//! fails, exactly as without this. Each tool left out is checked on its own and dropped at
//! once, so the peak is one tool, not the listing.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::json_peek::{same_id, scan};

/// An answer shorter than this reaches rmcp as it is: parsing it costs little.
pub const TRIM_FROM: usize = 256 * 1024;

/// `tools/list` requests whose answers are still awaited, at most (the oldest is forgotten:
/// a listing that timed out is not answered any more, or its answer no longer matters).
const PENDING: usize = 8;

/// Whether a tool of this name is wanted (the server's `toolFilter`).
pub type NameFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// One session's bound on its `tools/list` answers.
pub struct ListingBound {
    keep: usize,
    wanted: NameFilter,
    /// `asked.pending.len()`, read without the lock: with none, no line is looked at.
    awaited: AtomicUsize,
    asked: Mutex<Asked>,
}

#[derive(Default)]
struct Asked {
    /// The raw ids of `tools/list` requests sent and not answered yet, oldest first.
    pending: Vec<Box<[u8]>>,
    /// The id of the last one sent, and how many wanted tools its answer had past `keep`.
    latest: Option<Box<[u8]>>,
    beyond: usize,
}

impl ListingBound {
    /// At most `keep` tools of a listing's answer, of those `wanted` lets through.
    pub fn new(keep: usize, wanted: NameFilter) -> Arc<Self> {
        Arc::new(Self {
            keep,
            wanted,
            awaited: AtomicUsize::new(0),
            asked: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Asked> {
        self.asked.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whole lines the client is about to send: the `tools/list` requests among them are noted.
    pub fn sent(&self, lines: &[u8]) {
        use memchr::memmem::Finder;
        use std::sync::LazyLock;
        static LIST: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"tools/list\""));
        if LIST.find(lines).is_none() {
            return;
        }
        for line in lines.split(|&b| b == b'\n') {
            if LIST.find(line).is_none() {
                continue;
            }
            let Some(id) = listing_request_id(line) else {
                continue;
            };
            let mut asked = self.lock();
            // The same request sent again (an HTTP session re-initialised under it) is awaited
            // once.
            if !asked.pending.iter().any(|p| same_id(p, &id)) {
                if asked.pending.len() == PENDING {
                    asked.pending.remove(0);
                }
                asked.pending.push(id.clone());
            }
            asked.latest = Some(id);
            asked.beyond = 0;
            self.awaited.store(asked.pending.len(), Ordering::Release);
        }
    }

    /// A line from the server: `Some` with what rmcp is to read in its place when it answers a
    /// `tools/list` request with more than this bound keeps (see the module docs).
    pub fn answered(&self, line: &[u8]) -> Option<Vec<u8>> {
        if self.awaited.load(Ordering::Acquire) == 0 {
            return None;
        }
        let shape = scan(line);
        let id = shape.id.filter(|_| !shape.has_method)?;
        let id = &line[id];
        let latest = {
            let mut asked = self.lock();
            let at = asked.pending.iter().position(|p| same_id(p, id))?;
            asked.pending.remove(at);
            self.awaited.store(asked.pending.len(), Ordering::Release);
            asked.latest.as_deref().is_some_and(|l| same_id(l, id))
        };
        if line.len() < TRIM_FROM {
            return None;
        }
        let trimmed = trim(line, self.keep, &*self.wanted)?;
        if latest {
            self.lock().beyond = trimmed.beyond;
        }
        Some(trimmed.answer)
    }

    /// How many wanted tools the answer to the last `tools/list` request sent had past the
    /// bound (0 when it was not cut); taken once.
    pub fn take_beyond(&self) -> usize {
        std::mem::take(&mut self.lock().beyond)
    }
}

/// The raw id of `line` when it is a `tools/list` request.
fn listing_request_id(line: &[u8]) -> Option<Box<[u8]>> {
    #[derive(Deserialize)]
    struct Request<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    let request: Request = serde_json::from_slice(line).ok()?;
    if request.method.as_deref() != Some("tools/list") {
        return None;
    }
    Some(request.id?.get().as_bytes().into())
}

/// A listing's answer without the tools past the bound.
#[derive(Debug)]
struct Trimmed {
    answer: Vec<u8>,
    /// Wanted tools left out (past `keep`).
    beyond: usize,
}

/// `answer` with only the first `keep` tools `wanted` lets through, or `None` when it is left
/// as it is (nothing to leave out, or not a listing read here: see the module docs).
fn trim(answer: &[u8], keep: usize, wanted: &dyn Fn(&str) -> bool) -> Option<Trimmed> {
    #[derive(Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        result: Option<Listing<'a>>,
    }
    #[derive(Deserialize)]
    struct Listing<'a> {
        #[serde(borrow)]
        tools: &'a RawValue,
    }
    #[derive(Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
    }
    let text = std::str::from_utf8(answer).ok()?;
    let tools = serde_json::from_str::<Answer>(text).ok()?.result?.tools;
    let items: Vec<&RawValue> = serde_json::from_str(tools.get()).ok()?;
    let mut kept: Vec<&str> = Vec::with_capacity(items.len().min(keep));
    let mut beyond = 0usize;
    let mut left_out = 0usize;
    for item in &items {
        let named: Named = serde_json::from_str(item.get()).ok()?;
        let wanted = wanted(&named.name);
        if wanted && kept.len() < keep {
            kept.push(item.get());
            continue;
        }
        // What rmcp would have failed on still fails there: the answer goes to it unchanged.
        serde_json::from_str::<rmcp::model::Tool>(item.get()).ok()?;
        left_out += 1;
        if wanted {
            beyond += 1;
        }
    }
    if left_out == 0 {
        return None;
    }
    let start = tools.get().as_ptr() as usize - text.as_ptr() as usize;
    let end = start + tools.get().len();
    let mut out = Vec::with_capacity(
        start + answer.len() - end + 2 + kept.iter().map(|t| t.len() + 1).sum::<usize>(),
    );
    out.extend_from_slice(&answer[..start]);
    out.push(b'[');
    for (i, tool) in kept.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(tool.as_bytes());
    }
    out.push(b']');
    out.extend_from_slice(&answer[end..]);
    Some(Trimmed {
        answer: out,
        beyond,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every(_: &str) -> bool {
        true
    }

    fn listing(id: &str, names: &[&str], tail: &str) -> String {
        let tools: Vec<String> = names
            .iter()
            .map(|n| format!(r#"{{"name":"{n}","inputSchema":{{"type":"object"}}}}"#))
            .collect();
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools": [ {} ]{tail}}}}}"#,
            tools.join(" , ")
        )
    }

    #[test]
    fn keeps_the_first_wanted_tools_as_written_and_the_rest_of_the_answer() {
        let answer = listing("3", &["a", "skip_b", "c", "d", "e"], r#","nextCursor":"x""#);
        let wanted = |n: &str| !n.starts_with("skip_");
        let trimmed = trim(answer.as_bytes(), 2, &wanted).unwrap();
        assert_eq!(
            String::from_utf8(trimmed.answer).unwrap(),
            r#"{"jsonrpc":"2.0","id":3,"result":{"tools": [{"name":"a","inputSchema":{"type":"object"}},{"name":"c","inputSchema":{"type":"object"}}],"nextCursor":"x"}}"#
        );
        // d and e were wanted; skip_b was not.
        assert_eq!(trimmed.beyond, 2);
    }

    #[test]
    fn leaves_alone_what_fits_and_what_it_does_not_understand() {
        let fits = listing("1", &["a", "b"], "");
        assert!(trim(fits.as_bytes(), 2, &every).is_none());
        // Not JSON, no tools array, a tool without a name, a tool left out that rmcp could not
        // read (its inputSchema is not an object): rmcp gets these as they are, and fails.
        for bad in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{}},"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":{}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"no"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"title":"a"},{"name":"b","inputSchema":{}}]}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"b","inputSchema":7}]}}"#.to_owned(),
        ] {
            assert!(trim(bad.as_bytes(), 1, &every).is_none(), "{bad}");
        }
    }

    #[test]
    fn only_large_answers_to_listing_requests_are_cut_and_their_count_kept() {
        let bound = ListingBound::new(1, Arc::new(every));
        let many: Vec<String> = (0..20_000).map(|i| format!("tool_{i}")).collect();
        let names: Vec<&str> = many.iter().map(String::as_str).collect();
        let large = listing("7", &names, "");
        assert!(large.len() >= TRIM_FROM);
        // Not asked for: left alone.
        assert!(bound.answered(large.as_bytes()).is_none());
        bound.sent(
            b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"tools/list\"}}\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{}}\n",
        );
        // An answer to the call is not a listing.
        assert!(
            bound
                .answered(listing("6", &names, "").as_bytes())
                .is_none()
        );
        let cut = bound.answered(large.as_bytes()).unwrap();
        assert!(cut.len() < 100, "{}", String::from_utf8_lossy(&cut));
        assert_eq!(bound.take_beyond(), 19_999);
        assert_eq!(bound.take_beyond(), 0);
        // Answered once: a duplicate is not cut.
        assert!(bound.answered(large.as_bytes()).is_none());
        // A small answer to a listing goes through as it is.
        bound.sent(br#"{"jsonrpc":"2.0","id":"8","method":"tools/list"}"#);
        bound.sent(br#"{"jsonrpc":"2.0","id":"8","method":"tools/list"}"#);
        assert!(
            bound
                .answered(listing("8", &["a", "b"], "").as_bytes())
                .is_none()
        );
        assert_eq!(bound.awaited.load(Ordering::Relaxed), 0);
    }
}
