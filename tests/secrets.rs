//! `secret://` parsing and resolution (real env vars, real files), the
//! plaintext-credential warning, and the redactor.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use openclaw_mcp_native::secrets::{
    BUILTIN_PROVIDERS, DEFAULT_RESOLVE_TIMEOUT, EnvProvider, ExposeSecret, FileProvider,
    MIN_REDACT_LEN, REDACTED, Redactor, SecretError, SecretFuture, SecretProvider, SecretRef,
    SecretResolver, SecretString, dotenv_lookup, is_secret_uri, looks_like_credential_key,
    parse_secret_uri, plaintext_credential_warnings,
};

// ---------------------------------------------------------------- helpers

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "confsec-secrets-{}-{}-{}",
            std::process::id(),
            tag,
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }

    fn write(&self, name: &str, content: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, content).unwrap();
        p.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A process-unique environment variable name.
fn var_name(tag: &str) -> String {
    format!("OPENCLAW_MCP_NATIVE_TEST_{}_{}", std::process::id(), tag)
}

fn set_var(name: &str, value: &str) {
    // SAFETY: test-only; names are unique per test, and std serialises its own
    // environment accesses.
    unsafe { std::env::set_var(name, value) }
}

fn s(v: &str) -> String {
    v.to_owned()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(k, v)| (s(k), s(v))).collect()
}

fn exposed(v: &[(String, SecretString)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(k, v)| (k.clone(), v.expose_secret().to_owned()))
        .collect()
}

async fn resolve(value: &str) -> Result<String, String> {
    SecretResolver::with_default_providers()
        .resolve(value)
        .await
        .map(|v| v.expose_secret().to_owned())
        .map_err(|e| e.to_string())
}

/// Counts calls; answers `value-of-<path>` after an optional delay.
struct CountingProvider {
    name: &'static str,
    calls: Arc<AtomicUsize>,
    delay: Duration,
}

impl SecretProvider for CountingProvider {
    fn name(&self) -> &str {
        self.name
    }

    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            if r.path == "fail" {
                return Err(SecretError::provider(
                    r,
                    format!("no such secret {}", r.uri()),
                ));
            }
            Ok(SecretString::from(format!("value-of-{}", r.path)))
        })
    }
}

/// Never resolves.
struct HangingProvider;

impl SecretProvider for HangingProvider {
    fn name(&self) -> &str {
        "hang"
    }

    fn resolve<'a>(&'a self, _r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(futures::future::pending())
    }
}

/// Completes only when `n` calls are in flight at once: proof of parallelism.
struct BarrierProvider(Arc<tokio::sync::Barrier>);

impl SecretProvider for BarrierProvider {
    fn name(&self) -> &str {
        "barrier"
    }

    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(async move {
            self.0.wait().await;
            Ok(SecretString::from(r.path.clone()))
        })
    }
}

// ---------------------------------------------------------------- parsing

/// `(provider, path, field)`.
type Parts<'a> = (&'a str, &'a str, Option<&'a str>);

#[test]
fn parse_table() {
    let ok: Vec<(&str, Option<Parts>)> = vec![
        ("plain", None),
        ("", None),
        ("SECRET://env/X", None),
        ("secret:/env/X", None),
        (" secret://env/X", None),
        ("${GITHUB_TOKEN}", None),
        (
            "secret://env/GITHUB_TOKEN",
            Some(("env", "GITHUB_TOKEN", None)),
        ),
        (
            "secret://file/~/.secrets/gh",
            Some(("file", "~/.secrets/gh", None)),
        ),
        (
            "secret://file//abs/path.env#TOKEN",
            Some(("file", "/abs/path.env", Some("TOKEN"))),
        ),
        ("secret://file/a#b#c", Some(("file", "a#b", Some("c")))),
        ("secret://file/a#", Some(("file", "a", Some("")))),
        (
            "secret://gcp/projects/p/secrets/s#3",
            Some(("gcp", "projects/p/secrets/s", Some("3"))),
        ),
        ("secret://aws/prod/db", Some(("aws", "prod/db", None))),
        (
            "secret://vault/secret/data/x#password",
            Some(("vault", "secret/data/x", Some("password"))),
        ),
        ("secret://env/a/b", Some(("env", "a/b", None))),
    ];
    for (input, expected) in ok {
        let got = parse_secret_uri(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        let want = expected.map(|(p, path, f)| SecretRef {
            provider: s(p),
            path: s(path),
            field: f.map(s),
        });
        assert_eq!(got, want, "{input}");
        assert_eq!(is_secret_uri(input), want.is_some());
        if let Some(r) = got {
            assert_eq!(r.uri(), input, "round trip");
            assert_eq!(r.to_string(), input);
        }
    }

    let errors: Vec<(&str, &str)> = vec![
        (
            "secret://env",
            "Invalid secret URI: secret://env (missing path)",
        ),
        ("secret://", "Invalid secret URI: secret:// (missing path)"),
        (
            "secret://env/",
            "Invalid secret URI: secret://env/ (missing path)",
        ),
        (
            "secret://file/#field",
            "Invalid secret URI: secret://file/#field (missing path)",
        ),
        (
            "secret://env#X",
            "Invalid secret URI: secret://env#X (missing path)",
        ),
        (
            "secret://nope/x",
            "Unsupported secret provider 'nope' in URI: secret://nope/x",
        ),
        (
            "secret:///x",
            "Unsupported secret provider '' in URI: secret:///x",
        ),
        (
            "secret://ENV/X",
            "Unsupported secret provider 'ENV' in URI: secret://ENV/X",
        ),
    ];
    for (input, expected) in errors {
        let e = parse_secret_uri(input).unwrap_err();
        assert_eq!(e.to_string(), expected);
        assert_eq!(e.uri(), input, "the error carries the reference");
    }
    assert_eq!(
        BUILTIN_PROVIDERS,
        ["env", "file", "gcp", "aws", "vault", "exec"]
    );
}

// ---------------------------------------------------------------- env

#[tokio::test]
async fn env_provider() {
    let name = var_name("ENV_OK");
    set_var(&name, "tok-123 with spaces ");
    assert_eq!(
        resolve(&format!("secret://env/{name}")).await.unwrap(),
        "tok-123 with spaces "
    );
    // A field is ignored for env, as in the original.
    assert_eq!(
        resolve(&format!("secret://env/{name}#x")).await.unwrap(),
        "tok-123 with spaces "
    );

    let empty = var_name("ENV_EMPTY");
    set_var(&empty, "");
    assert_eq!(
        resolve(&format!("secret://env/{empty}")).await.unwrap(),
        "",
        "empty accepted (compat)"
    );

    let missing = var_name("ENV_MISSING");
    let uri = format!("secret://env/{missing}");
    let e = SecretResolver::with_default_providers()
        .resolve(&uri)
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("Environment variable '{missing}' not set (from secret://env/{missing})")
    );
    assert_eq!(e.uri(), uri);
    assert!(matches!(e, SecretError::EnvNotSet { .. }));
}

#[tokio::test]
async fn plain_values_pass_through() {
    // `${VAR}` is substituted now (tests/secrets_backends.rs), so it is no plain value.
    for v in ["", "plain", "SECRET://env/X", "Bearer abc"] {
        assert_eq!(resolve(v).await.unwrap(), v);
    }
}

// ---------------------------------------------------------------- file

#[tokio::test]
async fn file_whole_content_trimmed_at_end_only() {
    let dir = TempDir::new("whole");
    let p = dir.write("token", "  ghp_abc123 \n\n\t \r\n");
    assert_eq!(
        resolve(&format!("secret://file/{p}")).await.unwrap(),
        "  ghp_abc123"
    );
    let p = dir.write("multi", "line1\nline2\n");
    assert_eq!(
        resolve(&format!("secret://file/{p}")).await.unwrap(),
        "line1\nline2"
    );
    let p = dir.write("empty", "");
    assert_eq!(resolve(&format!("secret://file/{p}")).await.unwrap(), "");
}

const DOTENV: &str = "\
# a comment
   # an indented comment

PLAIN=plain-value
DQ=\"double quoted\"
SQ='single quoted'
MIXED=\"not stripped'
ONE_QUOTE=\"
INNER=a\"b\"c
EMPTY=
EQUALS=a=b=c
HASH=abc#def # not a comment
  SPACED  =   spaced value   
export EXPORTED=yes
DUP=first
DUP=second
DUP=\"third\"
noequalsline
=orphan
UNICODE=päss✓wörd
WIN=crlf\r
QUOTED_SPACES=\"  keep inner  \"
";

#[test]
fn dotenv_table() {
    let cases: Vec<(&str, Option<&str>)> = vec![
        ("PLAIN", Some("plain-value")),
        ("DQ", Some("double quoted")),
        ("SQ", Some("single quoted")),
        ("MIXED", Some("\"not stripped'")),
        ("ONE_QUOTE", Some("\"")),
        ("INNER", Some("a\"b\"c")),
        ("EMPTY", Some("")),
        ("EQUALS", Some("a=b=c")),
        ("HASH", Some("abc#def # not a comment")),
        ("SPACED", Some("spaced value")),
        ("EXPORTED", Some("yes")),
        ("DUP", Some("third")),
        ("UNICODE", Some("päss✓wörd")),
        ("WIN", Some("crlf")),
        ("QUOTED_SPACES", Some("  keep inner  ")),
        ("noequalsline", None),
        ("", None),
        ("# a comment", None),
        ("plain", None),
        ("MISSING", None),
    ];
    for (field, expected) in cases {
        assert_eq!(dotenv_lookup(DOTENV, field), expected, "field '{field}'");
    }
}

#[tokio::test]
async fn file_fields_through_the_resolver() {
    let dir = TempDir::new("fields");
    let p = dir.write("app.env", DOTENV);
    let r = SecretResolver::with_default_providers();
    let got = r
        .resolve_all(&pairs(&[
            ("A", &format!("secret://file/{p}#DQ")),
            ("B", &format!("secret://file/{p}#SQ")),
            ("C", &format!("secret://file/{p}#DUP")),
            ("D", &format!("secret://file/{p}#EXPORTED")),
        ]))
        .await
        .unwrap();
    assert_eq!(
        exposed(&got),
        pairs(&[
            ("A", "double quoted"),
            ("B", "single quoted"),
            ("C", "third"),
            ("D", "yes")
        ])
    );

    // Field split at the LAST '#': a directory name containing '#'.
    let sub = dir.0.join("we#ird");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("x.env"), "K=v#1\n").unwrap();
    let uri = format!("secret://file/{}/x.env#K", sub.display());
    assert_eq!(resolve(&uri).await.unwrap(), "v#1");

    let e = r
        .resolve(&format!("secret://file/{p}#NOPE"))
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), format!("Field 'NOPE' not found in {p}"));
    let e = r.resolve(&format!("secret://file/{p}#")).await.unwrap_err();
    assert_eq!(e.to_string(), format!("Field '' not found in {p}"));
}

#[tokio::test]
async fn file_errors() {
    let dir = TempDir::new("errors");
    let missing = dir.0.join("missing").display().to_string();
    let uri = format!("secret://file/{missing}");
    let e = SecretResolver::with_default_providers()
        .resolve(&uri)
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), format!("File not found: {missing}"));
    assert_eq!(e.uri(), uri);
    let e = resolve(&format!("secret://file/{missing}#F"))
        .await
        .unwrap_err();
    assert_eq!(e, format!("File not found: {missing}"));

    // A directory and a non-UTF-8 file: clear errors, no content.
    let d = dir.0.display().to_string();
    let e = resolve(&format!("secret://file/{d}")).await.unwrap_err();
    assert!(e.starts_with(&format!("Cannot read {d}: ")), "{e}");
    let bin = dir.0.join("bin");
    std::fs::write(&bin, b"S3CRET\xff\xfe").unwrap();
    let e = resolve(&format!("secret://file/{}", bin.display()))
        .await
        .unwrap_err();
    assert_eq!(e, format!("Cannot read {}: not valid UTF-8", bin.display()));
}

#[tokio::test]
async fn file_tilde_expansion() {
    let home = TempDir::new("home");
    std::fs::create_dir_all(home.0.join(".secrets")).unwrap();
    std::fs::write(home.0.join(".secrets/gh"), "from-home\n").unwrap();
    std::fs::write(home.0.join(".secrets/app.env"), "TOKEN='quoted-home'\n").unwrap();

    let old = std::env::var_os("HOME");
    set_var("HOME", &home.0.display().to_string());
    let r = SecretResolver::with_default_providers();
    let a = r
        .resolve("secret://file/~/.secrets/gh")
        .await
        .map(|v| v.expose_secret().to_owned());
    let b = r
        .resolve("secret://file/~/.secrets/app.env#TOKEN")
        .await
        .map(|v| v.expose_secret().to_owned());
    let c = r
        .resolve("secret://file/~/nope")
        .await
        .map_err(|e| e.to_string());
    match old {
        // SAFETY: see set_var.
        Some(v) => unsafe { std::env::set_var("HOME", v) },
        None => unsafe { std::env::remove_var("HOME") },
    }
    assert_eq!(a.unwrap(), "from-home");
    assert_eq!(b.unwrap(), "quoted-home");
    assert_eq!(
        c.unwrap_err(),
        format!("File not found: {}", home.0.join("nope").display()),
        "the message shows the expanded path"
    );

    // An explicit home, independent of $HOME; `~user` is not expanded.
    let mut r = SecretResolver::empty();
    r.register(FileProvider::with_home(&home.0));
    assert_eq!(
        r.resolve("secret://file/~/.secrets/gh")
            .await
            .unwrap()
            .expose_secret(),
        "from-home"
    );
    assert_eq!(
        r.resolve("secret://file/~other/x")
            .await
            .unwrap_err()
            .to_string(),
        "File not found: ~other/x"
    );
}

// ---------------------------------------------------------------- providers

#[tokio::test]
async fn known_but_unimplemented_providers() {
    // Every built-in provider is registered by default now; a resolver without them still
    // knows their names and says they are not available.
    let r = SecretResolver::empty();
    for p in ["gcp", "aws", "vault"] {
        let uri = format!("secret://{p}/some/name#v");
        assert!(parse_secret_uri(&uri).unwrap().is_some());
        let e = r.resolve(&uri).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("Secret provider '{p}' is not available in this build yet (secret://{p}/...)")
        );
        assert_eq!(e.uri(), uri);
    }
    let r = SecretResolver::with_default_providers();
    let e = r.resolve("secret://nope/x").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Unsupported secret provider 'nope' in URI: secret://nope/x"
    );
    let e = r.resolve("secret://env").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid secret URI: secret://env (missing path)"
    );
}

#[tokio::test]
async fn custom_provider_through_the_trait() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut r = SecretResolver::with_default_providers();
    r.register(CountingProvider {
        name: "test",
        calls: calls.clone(),
        delay: Duration::ZERO,
    });
    assert_eq!(
        r.provider_names(),
        ["aws", "env", "exec", "file", "gcp", "test", "vault"]
    );
    assert!(
        parse_secret_uri("secret://test/x").is_err(),
        "the free function knows only built-in names"
    );
    assert!(
        r.parse("secret://test/x").unwrap().is_some(),
        "the resolver knows registered names"
    );
    assert_eq!(
        r.resolve("secret://test/abc")
            .await
            .unwrap()
            .expose_secret(),
        "value-of-abc"
    );
    let e = r.resolve("secret://test/fail").await.unwrap_err();
    assert_eq!(e.to_string(), "no such secret secret://test/fail");
    assert_eq!(e.uri(), "secret://test/fail");

    // A registered provider plugs a known-but-unimplemented name.
    r.register(CountingProvider {
        name: "vault",
        calls: calls.clone(),
        delay: Duration::ZERO,
    });
    assert_eq!(
        r.resolve("secret://vault/kv/x")
            .await
            .unwrap()
            .expose_secret(),
        "value-of-kv/x"
    );

    // A provider can replace a built-in one; `Arc<dyn SecretProvider>` works too.
    let shared: Arc<dyn SecretProvider> = Arc::new(CountingProvider {
        name: "env",
        calls: calls.clone(),
        delay: Duration::ZERO,
    });
    r.register_arc(shared);
    assert_eq!(
        r.resolve("secret://env/NOT_A_REAL_VAR")
            .await
            .unwrap()
            .expose_secret(),
        "value-of-NOT_A_REAL_VAR"
    );

    // An empty resolver: built-in names are "not available", others unsupported.
    let empty = SecretResolver::empty();
    assert_eq!(
        empty
            .resolve("secret://env/X")
            .await
            .unwrap_err()
            .to_string(),
        "Secret provider 'env' is not available in this build yet (secret://env/...)"
    );
    assert!(format!("{empty:?}").contains("providers: []"));
    let _ = EnvProvider;
}

// ---------------------------------------------------------------- resolve_all

#[tokio::test]
async fn resolve_all_mixed_in_order() {
    let dir = TempDir::new("all");
    let file = dir.write("k.env", "API_KEY=\"k-1\"\n");
    let var = var_name("ALL");
    set_var(&var, "env-value");
    let entries = pairs(&[
        ("Z_PLAIN", "plain"),
        ("A_ENV", &format!("secret://env/{var}")),
        ("M_FILE", &format!("secret://file/{file}#API_KEY")),
        ("B_EMPTY", ""),
        ("C_ENV_AGAIN", &format!("secret://env/{var}")),
    ]);
    let got = SecretResolver::with_default_providers()
        .resolve_all(&entries)
        .await
        .unwrap();
    assert_eq!(
        exposed(&got),
        pairs(&[
            ("Z_PLAIN", "plain"),
            ("A_ENV", "env-value"),
            ("M_FILE", "k-1"),
            ("B_EMPTY", ""),
            ("C_ENV_AGAIN", "env-value")
        ])
    );
    assert!(
        SecretResolver::with_default_providers()
            .resolve_all(&[])
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn resolve_all_any_failure_fails_the_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut r = SecretResolver::with_default_providers();
    r.register(CountingProvider {
        name: "test",
        calls: calls.clone(),
        delay: Duration::from_millis(10),
    });
    let missing = var_name("ALL_MISSING");
    let e = r
        .resolve_all(&pairs(&[
            ("A", "secret://test/a"),
            ("B", &format!("secret://env/{missing}")),
            ("C", "plain"),
        ]))
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("Environment variable '{missing}' not set (from secret://env/{missing})")
    );

    // Parse errors are found before anything is fetched; the first in entry order wins.
    calls.store(0, Ordering::SeqCst);
    let e = r
        .resolve_all(&pairs(&[
            ("A", "secret://test/a"),
            ("B", "secret://bogus/x"),
            ("C", "secret://env"),
        ]))
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Unsupported secret provider 'bogus' in URI: secret://bogus/x"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing fetched");
}

#[tokio::test]
async fn resolve_all_dedupes_identical_uris() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut r = SecretResolver::with_default_providers();
    r.register(CountingProvider {
        name: "test",
        calls: calls.clone(),
        delay: Duration::from_millis(5),
    });
    let got = r
        .resolve_all(&pairs(&[
            ("A", "secret://test/one"),
            ("B", "secret://test/two"),
            ("C", "secret://test/one"),
            ("D", "secret://test/one"),
            ("E", "secret://test/one#f"),
        ]))
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3, "one, two, one#f");
    assert_eq!(
        exposed(&got),
        pairs(&[
            ("A", "value-of-one"),
            ("B", "value-of-two"),
            ("C", "value-of-one"),
            ("D", "value-of-one"),
            ("E", "value-of-one")
        ])
    );
}

#[tokio::test]
async fn resolve_all_runs_in_parallel() {
    // Each call waits until all 8 are in flight: a sequential resolver would hang
    // (and hit the 5 s deadline).
    let n = 8;
    let mut r = SecretResolver::empty().with_timeout(Duration::from_secs(5));
    r.register(BarrierProvider(Arc::new(tokio::sync::Barrier::new(n))));
    let entries: Vec<(String, String)> = (0..n)
        .map(|i| (format!("K{i}"), format!("secret://barrier/v{i}")))
        .collect();
    let got = r.resolve_all(&entries).await.unwrap();
    assert_eq!(got.len(), n);
    assert_eq!(got[7].1.expose_secret(), "v7");

    // And wall-clock: 10 slow lookups of 200 ms take about 200 ms, not 2 s.
    let calls = Arc::new(AtomicUsize::new(0));
    let mut r = SecretResolver::empty();
    r.register(CountingProvider {
        name: "test",
        calls: calls.clone(),
        delay: Duration::from_millis(200),
    });
    let entries: Vec<(String, String)> = (0..10)
        .map(|i| (format!("K{i}"), format!("secret://test/v{i}")))
        .collect();
    let t = Instant::now();
    r.resolve_all(&entries).await.unwrap();
    assert!(
        t.elapsed() < Duration::from_millis(1000),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 10);
}

#[tokio::test]
async fn timeouts_are_bounded() {
    let mut r = SecretResolver::with_default_providers();
    r.register(HangingProvider);
    assert_eq!(r.timeout(), DEFAULT_RESOLVE_TIMEOUT);
    assert_eq!(DEFAULT_RESOLVE_TIMEOUT, Duration::from_secs(10));

    let t = Instant::now();
    let e = r
        .resolve_all_with_timeout(
            &pairs(&[("A", "plain"), ("B", "secret://hang/x")]),
            Duration::from_millis(100),
        )
        .await
        .unwrap_err();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(
        e.to_string(),
        "Timed out resolving secret://hang/x after 100 ms"
    );
    assert_eq!(e.uri(), "secret://hang/x");

    // The resolver's own deadline applies to resolve() and resolve_all().
    let r = r.with_timeout(Duration::from_millis(50));
    let e = r.resolve("secret://hang/y#f").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Timed out resolving secret://hang/y#f after 50 ms"
    );
    let e = r
        .resolve_all(&pairs(&[("A", "secret://hang/z")]))
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Timed out resolving secret://hang/z after 50 ms"
    );

    // A fast failure is reported without waiting for the deadline.
    let t = Instant::now();
    let e = r
        .resolve_all_with_timeout(
            &pairs(&[
                ("A", "secret://hang/x"),
                ("B", "secret://file//definitely/not/here"),
            ]),
            Duration::from_secs(30),
        )
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), "File not found: /definitely/not/here");
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resolver_is_shareable_across_tasks() {
    let var = var_name("SHARED");
    set_var(&var, "shared-value");
    let r = Arc::new(SecretResolver::with_default_providers());
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let r = r.clone();
            let uri = format!("secret://env/{var}");
            tokio::spawn(async move { r.resolve(&uri).await.unwrap().expose_secret().to_owned() })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap(), "shared-value");
    }
}

// ---------------------------------------------------------------- no leaks

#[tokio::test]
async fn values_never_appear_in_errors_or_debug() {
    const VALUE: &str = "sk-live-TOPSECRET-0123456789";
    let dir = TempDir::new("leak");
    let p = dir.write("s.env", &format!("TOKEN={VALUE}\nOTHER=\"{VALUE}\"\n"));
    let bin = dir.0.join("bin");
    std::fs::write(&bin, [VALUE.as_bytes(), b"\xff"].concat()).unwrap();
    let var = var_name("LEAK");
    set_var(&var, VALUE);

    let r = SecretResolver::with_default_providers();
    let got = r
        .resolve_all(&pairs(&[
            ("A", &format!("secret://env/{var}")),
            ("B", &format!("secret://file/{p}#TOKEN")),
        ]))
        .await
        .unwrap();
    assert_eq!(got[0].1.expose_secret(), VALUE);
    assert_eq!(got[1].1.expose_secret(), VALUE);
    let dbg = format!("{got:?}");
    assert!(!dbg.contains(VALUE) && dbg.contains("REDACTED"), "{dbg}");

    let errors = vec![
        r.resolve(&format!("secret://file/{p}#MISSING"))
            .await
            .unwrap_err(),
        r.resolve(&format!("secret://file/{}", bin.display()))
            .await
            .unwrap_err(),
        r.resolve(&format!("secret://file/{}#TOKEN", bin.display()))
            .await
            .unwrap_err(),
    ];
    for e in &errors {
        let text = format!("{e} {e:?} {}", e.uri());
        assert!(!text.contains(VALUE), "{text}");
    }
    let sref = parse_secret_uri(&format!("secret://file/{p}#TOKEN"))
        .unwrap()
        .unwrap();
    assert!(!format!("{sref:?} {sref}").contains(VALUE));
    assert!(!format!("{r:?}").contains(VALUE));

    let red = Redactor::new();
    red.register(&got[0].1);
    assert!(!format!("{red:?}").contains(VALUE));
}

// ---------------------------------------------------------------- plaintext warning

#[test]
fn plaintext_warnings() {
    let env = pairs(&[
        ("GITHUB_TOKEN", "ghp_plaintext"),
        ("DB_PASSWORD", "secret://env/DB_PASSWORD"),
        ("API_KEY", "${API_KEY}"),
        ("MY_SECRET", ""),
        ("PATH", "/usr/bin"),
        ("aws_access_key_id", "AKIA123"),
        ("CLIENT_CREDENTIALS", "abc"),
        ("OAUTH_STATE", "x"),
        ("NODE_ENV", "production"),
        ("PREFIXED", "Bearer ${TOKEN}"),
    ]);
    let headers = pairs(&[
        ("Authorization", "Bearer abc.def"),
        ("X-Api-Key", "secret://file/~/.k#K"),
        ("Content-Type", "application/json"),
        ("proxy-authorization", "Basic Zm9v"),
    ]);
    let w = plaintext_credential_warnings("gh", &env, &headers);
    let expect = |kind: &str, key: &str| {
        format!(
            "MCP server 'gh': {kind} '{key}' looks like a credential but holds a plaintext value; use a secret:// reference"
        )
    };
    assert_eq!(
        w,
        vec![
            expect("env", "GITHUB_TOKEN"),
            expect("env", "aws_access_key_id"),
            expect("env", "CLIENT_CREDENTIALS"),
            expect("env", "OAUTH_STATE"),
            expect("header", "Authorization"),
            expect("header", "proxy-authorization"),
        ]
    );
    for line in &w {
        for (_, v) in env.iter().chain(&headers) {
            if v.len() > 3 {
                assert!(!line.contains(v.as_str()), "value leaked into {line}");
            }
        }
    }
    assert!(plaintext_credential_warnings("x", &[], &[]).is_empty());
    for (k, expected) in [
        ("Authorization", true),
        ("PASSWD", false),
        ("Password", true),
        ("apikey", true),
        ("HOME", false),
        ("SessionToken", true),
    ] {
        assert_eq!(looks_like_credential_key(k), expected, "{k}");
    }
}

// ---------------------------------------------------------------- redactor

fn secret(v: &str) -> SecretString {
    SecretString::from(v)
}

/// `encodeURIComponent`.
fn encode_uri_component(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
fn redactor_plain_and_fast_path() {
    let r = Redactor::new();
    assert!(r.is_empty());
    assert!(matches!(
        r.redact("anything at all"),
        Cow::Borrowed("anything at all")
    ));

    r.register(&secret("ghp_0123456789abcdef"));
    assert!(!r.is_empty());
    assert_eq!(r.len(), 1);
    assert_eq!(
        r.redact("token=ghp_0123456789abcdef; again ghp_0123456789abcdef."),
        "token=[REDACTED]; again [REDACTED]."
    );
    assert_eq!(r.redact("ghp_0123456789abcdef"), REDACTED);
    let text = "nothing to see here, ghp_0123456789abcde (one short)";
    let out = r.redact(text);
    assert!(matches!(out, Cow::Borrowed(_)), "no match returns Borrowed");
    assert_eq!(out, text);
    assert!(matches!(r.redact(""), Cow::Borrowed("")));

    // Registering again changes nothing; an empty value is ignored.
    r.register(&secret("ghp_0123456789abcdef"));
    r.register(&secret(""));
    assert_eq!(r.len(), 1);
}

#[test]
fn redactor_json_escaped_forms() {
    let r = Redactor::new();
    let v = "p@ss\"word\\with/ctrl\n\tand ünïcødé ✓ 😀 <&>";
    r.register(&secret(v));

    // As serde_json / JSON.stringify write it.
    let body = serde_json::to_string(&serde_json::json!({"password": v, "n": 1})).unwrap();
    assert!(!body.contains(v));
    assert_eq!(r.redact(&body), r#"{"password":"[REDACTED]","n":1}"#);

    // As Python's json.dumps writes it (ensure_ascii): lowercase \uXXXX, surrogate pairs.
    let py = r#"{"password": "p@ss\"word\\with/ctrl\n\tand \u00fcn\u00efc\u00f8d\u00e9 \u2713 \ud83d\ude00 <&>"}"#;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(py).unwrap()["password"],
        v,
        "the fixture is right"
    );
    assert_eq!(r.redact(py), r#"{"password": "[REDACTED]"}"#);

    // As Go's encoding/json writes it (HTML-safe escapes).
    let go = r#"{"password":"p@ss\"word\\with/ctrl\n\tand ünïcødé ✓ 😀 \u003c\u0026\u003e"}"#;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(go).unwrap()["password"],
        v
    );
    assert_eq!(r.redact(go), r#"{"password":"[REDACTED]"}"#);

    // JSON text inside a JSON string (double escaping).
    let nested = serde_json::to_string(&serde_json::json!({"text": body})).unwrap();
    assert_eq!(
        r.redact(&nested),
        r#"{"text":"{\"password\":\"[REDACTED]\",\"n\":1}"}"#
    );
}

#[test]
fn redactor_percent_encoded_forms() {
    let r = Redactor::new();
    let v = "a b+c/d?e=f&g%h'(ü)";
    r.register(&secret(v));
    let upper = encode_uri_component(v);
    assert_eq!(upper, "a%20b%2Bc%2Fd%3Fe%3Df%26g%25h'(%C3%BC)");
    assert_eq!(
        r.redact(&format!("https://x/cb?token={upper}&x=1")),
        "https://x/cb?token=[REDACTED]&x=1"
    );
    assert_eq!(
        r.redact("?t=a%20b%2bc%2fd%3fe%3df%26g%25h'(%c3%bc)"),
        "?t=[REDACTED]",
        "lower-case hex"
    );
    // RFC 3986 style (quote(safe='')) and form style (quote_plus).
    assert_eq!(
        r.redact("t=a%20b%2Bc%2Fd%3Fe%3Df%26g%25h%27%28%C3%BC%29"),
        "t=[REDACTED]"
    );
    assert_eq!(
        r.redact("t=a+b%2Bc%2Fd%3Fe%3Df%26g%25h%27%28%C3%BC%29"),
        "t=[REDACTED]"
    );
    // The raw form still works, and an unrelated URL is left alone.
    assert_eq!(r.redact(&format!("raw {v} end")), "raw [REDACTED] end");
    assert!(matches!(
        r.redact("https://x/cb?token=abc"),
        Cow::Borrowed(_)
    ));
}

#[test]
fn redactor_short_values_and_overlaps() {
    let r = Redactor::new();
    r.register(&secret("abc12"));
    assert_eq!(MIN_REDACT_LEN, 6);
    assert_eq!(r.len(), 1);
    assert!(!r.is_empty());
    assert_eq!(
        r.redact("xx abc12 yy"),
        "xx abc12 yy",
        "short values are not masked inside text"
    );
    assert_eq!(
        r.redact("abc12"),
        REDACTED,
        "but a text that is exactly the value is"
    );

    // One secret contains another; overlapping occurrences are masked as one (no part of
    // either is left: "ij" of "cdefghij" stayed visible before).
    r.register(&secret("abcdefgh"));
    r.register(&secret("abcdef"));
    r.register(&secret("cdefghij"));
    assert_eq!(r.redact("1abcdefgh2 3abcdef4"), "1[REDACTED]2 3[REDACTED]4");
    assert_eq!(r.redact("abcdefghij"), "[REDACTED]");
    assert_eq!(r.redact("zzcdefghijzz"), "zz[REDACTED]zz");
    // Adjacent and multibyte neighbours.
    assert_eq!(r.redact("äabcdefabcdefä"), "ä[REDACTED][REDACTED]ä");
}

#[test]
fn redactor_clones_share_and_threads() {
    let r = Redactor::new();
    let clone = r.clone();
    clone.register(&secret("shared-secret-1"));
    assert_eq!(r.redact("x shared-secret-1"), "x [REDACTED]");

    let handles: Vec<_> = (0..8)
        .map(|i| {
            let r = r.clone();
            std::thread::spawn(move || {
                for j in 0..50 {
                    r.register(&secret(&format!("thread-{i}-secret-{j}")));
                    let _ = r.redact("some text thread-0-secret-0 here");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(r.len(), 1 + 8 * 50);
    assert_eq!(
        r.redact("a thread-7-secret-49 b thread-3-secret-0"),
        "a [REDACTED] b [REDACTED]"
    );
    assert_eq!(r.redact("thread-8-secret-4"), "thread-8-secret-4");
    assert_eq!(
        r.redact("hread-7-secret-49"),
        "hread-7-secret-49",
        "a part of a value is not a value"
    );
}
