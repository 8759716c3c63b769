//! Provider-safe, unique agent tool names (`assign_tool_names`), both schemes.

use std::collections::HashSet;

use openclaw_mcp_native::bridge::naming::{
    AssignedName, NameScheme, ServerTools, assign_tool_names, assign_tool_names_reserving,
    compat_tool_name, derived_name_message, is_provider_safe_name, sanitize_name, stable_hash8,
};

fn st<'a>(server: &'a str, prefix: Option<&'a str>, tools: &[&'a str]) -> ServerTools<'a> {
    ServerTools {
        server,
        prefix,
        tools: tools.to_vec(),
    }
}

fn names(servers: &[ServerTools<'_>], scheme: NameScheme) -> Vec<Vec<String>> {
    assign_tool_names(servers, scheme)
        .into_iter()
        .map(|v| v.into_iter().map(|a| a.name).collect())
        .collect()
}

fn one(server: &str, prefix: Option<&str>, tool: &str, scheme: NameScheme) -> AssignedName {
    assign_tool_names(&[st(server, prefix, &[tool])], scheme)
        .remove(0)
        .remove(0)
}

fn assert_all_safe_and_unique(result: &[Vec<AssignedName>], case_insensitive: bool) {
    let mut seen = HashSet::new();
    for a in result.iter().flatten() {
        assert!(
            is_provider_safe_name(&a.name),
            "not provider-safe: {:?}",
            a.name
        );
        let key = if case_insensitive {
            a.name.to_lowercase()
        } else {
            a.name.clone()
        };
        assert!(seen.insert(key), "duplicate name {:?}", a.name);
    }
}

#[test]
fn compat_names_untouched_when_valid() {
    let servers = [
        st("github", None, &["create_issue", "list-prs", "A_B-c9"]),
        st("fs", Some("files"), &["read"]),
        st("x", Some(""), &["t"]),
    ];
    let r = assign_tool_names(&servers, NameScheme::Compat);
    for (s, assigned) in servers.iter().zip(&r) {
        for (tool, a) in s.tools.iter().zip(assigned) {
            assert_eq!(a.name, compat_tool_name(s.server, s.prefix, tool));
            assert_eq!(a.derived, None);
            assert_eq!(derived_name_message(s.server, tool, a), None);
        }
    }
    assert_eq!(
        names(&servers, NameScheme::Compat),
        vec![
            vec![
                "mcp_github_create_issue",
                "mcp_github_list-prs",
                "mcp_github_A_B-c9"
            ],
            vec!["mcp_files_read"],
            vec!["mcp__t"],
        ]
    );
    // Exactly 64 characters is still the compat name.
    let tool = "t".repeat(64 - "mcp_s_".len());
    let a = one("s", None, &tool, NameScheme::Compat);
    assert_eq!(a.name.len(), 64);
    assert_eq!(a.name, format!("mcp_s_{tool}"));
    assert_eq!(a.derived, None);
}

#[test]
fn compat_derived_names() {
    let cases: Vec<(&str, &str, &str, &str)> = vec![
        (
            "fs",
            "files.read",
            "mcp_fs_files_read_ade85fc0",
            "invalid characters",
        ),
        (
            "fs",
            "read file",
            "mcp_fs_read_file_5d382a4d",
            "invalid characters",
        ),
        ("fs", "a/b", "mcp_fs_a_b_41acb304", "invalid characters"),
        (
            "fs",
            "résumé",
            "mcp_fs_resume_fd261311",
            "invalid characters",
        ),
        (
            "fs",
            "Straße",
            "mcp_fs_Strasse_c7981d7e",
            "invalid characters",
        ),
        (
            "fs",
            "emoji😀x",
            "mcp_fs_emojix_f528186e",
            "invalid characters",
        ),
        ("fs", "検索", "mcp_fs_cfb9a69a", "invalid characters"),
        (
            "my server",
            "t",
            "mcp_my_server_t_3b520975",
            "invalid characters",
        ),
    ];
    for (server, tool, expected, reason) in cases {
        let a = one(server, None, tool, NameScheme::Compat);
        assert_eq!(a.name, expected, "{server}/{tool}");
        assert_eq!(a.derived, Some(reason), "{server}/{tool}");
        assert!(a.name.ends_with(&stable_hash8(server, tool)));
    }
    // Different raw names that sanitise alike still get different names.
    let r = names(
        &[st("fs", None, &["a.b", "a/b", "a b", "a_b"])],
        NameScheme::Compat,
    );
    assert_eq!(r[0][3], "mcp_fs_a_b");
    let set: HashSet<&String> = r[0].iter().collect();
    assert_eq!(set.len(), 4);
}

#[test]
fn sanitizer_mapping() {
    assert_eq!(sanitize_name("a.b c/d"), "a_b_c_d");
    assert_eq!(
        sanitize_name("a . b"),
        "a_b",
        "one `_` per run of replaced characters"
    );
    assert_eq!(
        sanitize_name("a__b"),
        "a__b",
        "original underscores are kept"
    );
    assert_eq!(sanitize_name("Ça va: déjà vu!"), "Ca_va_deja_vu_");
    assert_eq!(sanitize_name("Łódź Æsir œuvre"), "Lodz_AEsir_oeuvre");
    assert_eq!(
        sanitize_name("e\u{301}"),
        "e",
        "combining marks are dropped"
    );
    assert_eq!(sanitize_name("日本語"), "");
    assert_eq!(sanitize_name("tab\there\nnl"), "tab_here_nl");
    assert_eq!(sanitize_name("a\u{3000}b"), "a_b", "Unicode whitespace");
}

#[test]
fn two_hundred_characters() {
    let long = "x".repeat(200);
    let a = one("fs", None, &long, NameScheme::Compat);
    assert_eq!(a.derived, Some("too long"));
    assert_eq!(a.name.len(), 64);
    assert_eq!(
        a.name,
        format!("mcp_fs_{}_{}", "x".repeat(48), stable_hash8("fs", &long))
    );
    // Long and invalid.
    let long_dotted = "a.".repeat(100);
    let a = one("fs", None, &long_dotted, NameScheme::Compat);
    assert_eq!(a.derived, Some("invalid characters, too long"));
    assert!(is_provider_safe_name(&a.name) && a.name.len() <= 64);
    // Two long names sharing their first 200 characters stay distinct.
    let b1 = format!("{long}1");
    let b2 = format!("{long}2");
    let r = names(&[st("fs", None, &[&b1, &b2])], NameScheme::Compat);
    assert_ne!(r[0][0], r[0][1]);
    // A 200-character server name too.
    let r = assign_tool_names(&[st(&long, None, &["t"])], NameScheme::Compat);
    assert_assigned_len(&r, 64);

    // OpenClaw: the server part stops at 30, the whole at 64.
    let a = one("memory", None, &long, NameScheme::OpenClaw);
    assert_eq!(a.name, format!("memory__{}", "x".repeat(56)));
    assert_eq!(a.derived, Some("too long"));
    let a = one(&long, None, &long, NameScheme::OpenClaw);
    assert_eq!(a.name, format!("{}__{}", "x".repeat(30), "x".repeat(32)));
}

fn assert_assigned_len(r: &[Vec<AssignedName>], len: usize) {
    for a in r.iter().flatten() {
        assert_eq!(a.name.len(), len, "{}", a.name);
    }
}

#[test]
fn same_tool_on_two_servers() {
    // Different prefixes: no collision at all.
    let servers = [st("a", None, &["read"]), st("b", None, &["read"])];
    assert_eq!(
        names(&servers, NameScheme::Compat),
        vec![vec!["mcp_a_read"], vec!["mcp_b_read"]]
    );
    // The same prefix on both: the later one is derived.
    let servers = [
        st("one", Some("gh"), &["read", "write"]),
        st("two", Some("gh"), &["read"]),
    ];
    let r = assign_tool_names(&servers, NameScheme::Compat);
    assert_eq!(r[0][0].name, "mcp_gh_read");
    assert_eq!(r[0][0].derived, None);
    assert_eq!(r[0][1].name, "mcp_gh_write");
    assert_eq!(
        r[1][0].name,
        format!("mcp_gh_read_{}", stable_hash8("two", "read"))
    );
    assert_eq!(r[1][0].derived, Some("collision"));
    assert_eq!(
        derived_name_message("two", "read", &r[1][0]).unwrap(),
        format!(
            "MCP server 'two' tool 'read' is exposed as 'mcp_gh_read_{}' (collision)",
            stable_hash8("two", "read")
        )
    );
    // One server listing a tool twice.
    let r = names(&[st("s", None, &["t", "t", "t"])], NameScheme::Compat);
    let h = stable_hash8("s", "t");
    assert_eq!(
        r,
        vec![vec![
            "mcp_s_t".to_owned(),
            format!("mcp_s_t_{h}"),
            format!("mcp_s_t_{h}_2")
        ]]
    );
    // OpenClaw scheme: identical server fragments are made unique first.
    let servers = [st("gh", None, &["read"]), st("GH", None, &["read"])];
    assert_eq!(
        names(&servers, NameScheme::OpenClaw),
        vec![vec!["gh__read"], vec!["GH-2__read"]]
    );
}

#[test]
fn prefix_collision() {
    // `a_b` + `c` and `a` + `b_c` both make `mcp_a_b_c`.
    assert_eq!(
        compat_tool_name("a_b", None, "c"),
        compat_tool_name("a", None, "b_c")
    );
    let servers = [st("a_b", None, &["c"]), st("a", None, &["b_c"])];
    let r = assign_tool_names(&servers, NameScheme::Compat);
    assert_eq!(r[0][0].name, "mcp_a_b_c");
    assert_eq!(r[0][0].derived, None);
    assert_eq!(r[1][0].name, "mcp_a_b_c_bb089267");
    assert_eq!(r[1][0].derived, Some("collision"));
    // In the other config order, the other one is derived.
    let servers = [st("a", None, &["b_c"]), st("a_b", None, &["c"])];
    let r = assign_tool_names(&servers, NameScheme::Compat);
    assert_eq!(r[0][0].name, "mcp_a_b_c");
    assert_eq!(r[1][0].derived, Some("collision"));
    // The OpenClaw scheme's `__` separator keeps them apart.
    let servers = [st("a_b", None, &["c"]), st("a", None, &["b_c"])];
    assert_eq!(
        names(&servers, NameScheme::OpenClaw),
        vec![vec!["a_b__c"], vec!["a__b_c"]]
    );
}

#[test]
fn valid_compat_names_are_never_displaced() {
    // `x.y` would derive to `mcp_s_x_y_<hash>`; a later server whose tool is
    // literally that name keeps it, and the derived one moves on.
    let h = stable_hash8("s", "x.y");
    let literal = format!("x_y_{h}");
    let servers = [st("s", None, &["x.y"]), st("s", None, &[&literal])];
    let r = assign_tool_names(&servers, NameScheme::Compat);
    assert_eq!(r[1][0].name, format!("mcp_s_x_y_{h}"));
    assert_eq!(r[1][0].derived, None);
    assert_eq!(r[0][0].name, format!("mcp_s_x_y_{h}_2"));
    assert_all_safe_and_unique(&r, false);
}

#[test]
fn stable_across_calls_and_readiness() {
    let config = [
        st("github", None, &["create_issue", "files.read"]),
        st("fs", None, &["read", "list dir"]),
        st("search", Some("s"), &["query"]),
    ];
    let first = assign_tool_names(&config, NameScheme::Compat);
    // The same input always gives the same names.
    for _ in 0..3 {
        assert_eq!(assign_tool_names(&config, NameScheme::Compat), first);
        assert_eq!(
            assign_tool_names(&config, NameScheme::OpenClaw),
            assign_tool_names(&config, NameScheme::OpenClaw)
        );
    }
    // The manager passes every configured server with its last-known tools,
    // ready or not, so readiness never changes the input. What does change is a
    // server's list (first discovery, list_changed): names of other tools stay.
    let before_discovery = [
        st("github", None, &["create_issue", "files.read"]),
        st("fs", None, &[]),
        st("search", Some("s"), &["query"]),
    ];
    let r = assign_tool_names(&before_discovery, NameScheme::Compat);
    assert_eq!(r[0], first[0]);
    assert_eq!(r[2], first[2]);
    let more_tools = [
        st("github", None, &["create_issue", "files.read", "new.tool"]),
        st("fs", None, &["read", "list dir", "write"]),
        st("search", Some("s"), &["query"]),
    ];
    let r = assign_tool_names(&more_tools, NameScheme::Compat);
    assert_eq!(r[0][..2], first[0][..]);
    assert_eq!(r[1][..2], first[1][..]);
    assert_eq!(r[2], first[2]);
    // A derived (hash) name does not depend on its position either.
    let moved = [
        st("fs", None, &["list dir"]),
        st("github", None, &["files.read"]),
    ];
    let r = assign_tool_names(&moved, NameScheme::Compat);
    assert_eq!(r[0][0], first[1][1]);
    assert_eq!(r[1][0], first[0][1]);
    // The hash itself is fixed forever.
    assert_eq!(stable_hash8("", ""), stable_hash8("", ""));
    assert_eq!(stable_hash8("a", "b_c"), "bb089267");
    assert_ne!(stable_hash8("ab", "c"), stable_hash8("a", "bc"));
}

#[test]
fn openclaw_scheme_rules() {
    type Case<'a> = (&'a str, Option<&'a str>, &'a str, &'a str, Option<&'a str>);
    let cases: Vec<Case<'_>> = vec![
        ("fs", None, "read", "fs__read", None),
        (
            "fs",
            None,
            "files.read",
            "fs__files-read",
            Some("invalid characters"),
        ),
        (
            "fs",
            None,
            "read file",
            "fs__read-file",
            Some("invalid characters"),
        ),
        ("fs", None, " read ", "fs__read", Some("invalid characters")),
        (
            "fs",
            None,
            "résumé",
            "fs__r-sum-",
            Some("invalid characters"),
        ),
        (
            "fs",
            None,
            "emoji😀x",
            "fs__emoji--x",
            Some("invalid characters"),
        ),
        (
            "fs",
            None,
            "検索",
            "fs__tool---",
            Some("invalid characters"),
        ),
        ("fs", None, "", "fs__tool", Some("invalid characters")),
        (
            "12306",
            None,
            "2024-query",
            "mcp-12306__tool-2024-query",
            Some("invalid characters"),
        ),
        (
            "memos",
            None,
            "1note",
            "memos__tool-1note",
            Some("invalid characters"),
        ),
        (
            "memos",
            None,
            "-note",
            "memos__tool--note",
            Some("invalid characters"),
        ),
        (
            "link",
            None,
            "spend-request_create",
            "link__spend-request_create",
            None,
        ),
        (
            "my server",
            None,
            "t",
            "my-server__t",
            Some("invalid characters"),
        ),
        ("srv", Some("p"), "t", "p__t", None),
        ("srv", Some(""), "t", "mcp__t", Some("invalid characters")),
    ];
    for (server, prefix, tool, expected, derived) in cases {
        let a = one(server, prefix, tool, NameScheme::OpenClaw);
        assert_eq!(a.name, expected, "{server}/{tool}");
        assert_eq!(a.derived, derived, "{server}/{tool}");
    }
    // Server fragments: unique (case-insensitively) with `-2`, `-3`, within 30.
    let servers = [
        st("vigil-harbor", None, &["t"]),
        st("vigil:harbor", None, &["t"]),
        st("vigil harbor", None, &["t"]),
        st("VIGIL-HARBOR", None, &[]),
    ];
    assert_eq!(
        names(&servers, NameScheme::OpenClaw),
        vec![
            vec!["vigil-harbor__t"],
            vec!["vigil-harbor-2__t"],
            vec!["vigil-harbor-3__t"],
            vec![]
        ]
    );
    let long_server = "s".repeat(40);
    let servers = [
        st(&long_server, None, &["t"]),
        st(&long_server, None, &["t"]),
    ];
    assert_eq!(
        names(&servers, NameScheme::OpenClaw),
        vec![
            vec![format!("{}__t", "s".repeat(30))],
            vec![format!("{}-2__t", "s".repeat(28))]
        ]
    );
    // Tool collisions: `-2`, `-3`, case-insensitive, inside the budget.
    let r = assign_tool_names(
        &[st(
            "fs",
            None,
            &["read", "READ", "read", "files.read", "files-read"],
        )],
        NameScheme::OpenClaw,
    );
    let got: Vec<(&str, Option<&str>)> =
        r[0].iter().map(|a| (a.name.as_str(), a.derived)).collect();
    assert_eq!(
        got,
        vec![
            ("fs__read", None),
            ("fs__READ-2", Some("collision")),
            ("fs__read-3", Some("collision")),
            ("fs__files-read", Some("invalid characters")),
            ("fs__files-read-2", Some("collision")),
        ]
    );
    let long_tool = "t".repeat(100);
    let r = names(
        &[st("memory", None, &[&long_tool, &long_tool])],
        NameScheme::OpenClaw,
    );
    assert_eq!(r[0][0], format!("memory__{}", "t".repeat(56)));
    assert_eq!(r[0][1], format!("memory__{}-2", "t".repeat(54)));
    // Reserved names (e.g. the gateway's own tools).
    let r = assign_tool_names_reserving(
        &[st("memory", None, &["status"])],
        NameScheme::OpenClaw,
        &["MEMORY__status"],
    );
    assert_eq!(r[0][0].name, "memory__status-2");
    assert_eq!(r[0][0].derived, Some("collision"));
    let r = assign_tool_names_reserving(
        &[st("s", None, &["exec"])],
        NameScheme::Compat,
        &["mcp_s_exec"],
    );
    assert_eq!(
        r[0][0].name,
        format!("mcp_s_exec_{}", stable_hash8("s", "exec"))
    );
    assert_eq!(r[0][0].derived, Some("collision"));
}

#[test]
fn scheme_names() {
    assert_eq!(NameScheme::parse("compat"), Some(NameScheme::Compat));
    assert_eq!(NameScheme::parse("openclaw"), Some(NameScheme::OpenClaw));
    assert_eq!(NameScheme::parse("OpenClaw"), None);
    assert_eq!(NameScheme::default(), NameScheme::Compat);
    assert_eq!(NameScheme::OpenClaw.as_str(), "openclaw");
}

#[test]
fn log_message_quotes_safely() {
    let long = "y".repeat(200);
    let a = one("s\nx", None, &long, NameScheme::Compat);
    let msg = derived_name_message("s\nx", &long, &a).unwrap();
    assert!(msg.starts_with("MCP server 's\\nx' tool 'yyyy"), "{msg}");
    assert!(msg.contains("…' is exposed as 'mcp_s_x_"), "{msg}");
    assert!(msg.ends_with("(invalid characters, too long)"), "{msg}");
    assert!(!msg.contains('\n'));
}

/// A small deterministic generator of awkward names.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn name(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a", "B", "_", "-", ".", " ", "/", "é", "ß", "検", "😀", "mcp", "read", "x", "0", "__",
            "\u{301}", "\t", "Ω", "ä",
        ];
        let len = self.next() % 12;
        let mut s = String::new();
        for _ in 0..len {
            s.push_str(PIECES[(self.next() % PIECES.len() as u64) as usize]);
        }
        if self.next().is_multiple_of(10) {
            s.push_str(&"z".repeat(70));
        }
        s
    }
}

#[test]
fn always_safe_and_unique() {
    let mut g = Gen(0x2545_F491_4F6C_DD1D);
    for _ in 0..300 {
        let owned: Vec<(String, Option<String>, Vec<String>)> = (0..1 + g.next() % 5)
            .map(|_| {
                let server = g.name();
                let prefix = match g.next() % 3 {
                    0 => Some(g.name()),
                    _ => None,
                };
                let tools = (0..g.next() % 8).map(|_| g.name()).collect();
                (server, prefix, tools)
            })
            .collect();
        let servers: Vec<ServerTools<'_>> = owned
            .iter()
            .map(|(s, p, t)| ServerTools {
                server: s,
                prefix: p.as_deref(),
                tools: t.iter().map(String::as_str).collect(),
            })
            .collect();
        for (scheme, ci) in [(NameScheme::Compat, false), (NameScheme::OpenClaw, true)] {
            let r = assign_tool_names(&servers, scheme);
            assert_eq!(r.len(), servers.len());
            for (s, a) in servers.iter().zip(&r) {
                assert_eq!(s.tools.len(), a.len());
            }
            assert_all_safe_and_unique(&r, ci);
            assert_eq!(assign_tool_names(&servers, scheme), r, "deterministic");
        }
    }
}
