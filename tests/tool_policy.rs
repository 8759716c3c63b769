//! `toolFilter` (per server, its own tool names, case-sensitive) and the
//! manager's `allow` / `deny` (agent names, case-insensitive, deny wins).

use openclaw_mcp_native::config::validate_mcp_config;
use openclaw_mcp_native::policy::{
    ToolFilter, ToolPolicy, matches_policy_pattern, matches_tool_filter_pattern,
};
use serde_json::json;

const TOOLS: &[&str] = &[
    "read_file",
    "read_dir",
    "write_file",
    "Read_File",
    "delete",
    "search",
    "search.advanced",
    "a*b",
    "",
];

fn kept(filter: &ToolFilter) -> Vec<&'static str> {
    TOOLS.iter().copied().filter(|t| filter.allows(t)).collect()
}

#[test]
fn tool_filter_combinations() {
    type Case = (
        &'static str,
        Vec<&'static str>,
        Vec<&'static str>,
        Vec<&'static str>,
    );
    let cases: Vec<Case> = vec![
        ("empty keeps all", vec![], vec![], TOOLS.to_vec()),
        (
            "include exact",
            vec!["read_file"],
            vec![],
            vec!["read_file"],
        ),
        (
            "include glob suffix",
            vec!["read_*"],
            vec![],
            vec!["read_file", "read_dir"],
        ),
        (
            "include glob prefix",
            vec!["*_file"],
            vec![],
            vec!["read_file", "write_file"],
        ),
        (
            "include glob middle",
            vec!["*a*"],
            vec![],
            vec![
                "read_file",
                "read_dir",
                "Read_File",
                "search",
                "search.advanced",
                "a*b",
            ],
        ),
        ("include star keeps all", vec!["*"], vec![], TOOLS.to_vec()),
        (
            "include several",
            vec!["delete", "search"],
            vec![],
            vec!["delete", "search"],
        ),
        (
            "exclude only",
            vec![],
            vec!["delete", "write_*"],
            vec![
                "read_file",
                "read_dir",
                "Read_File",
                "search",
                "search.advanced",
                "a*b",
                "",
            ],
        ),
        (
            "include then exclude",
            vec!["read_*", "write_*"],
            vec!["*_dir"],
            vec!["read_file", "write_file"],
        ),
        (
            "exclude wins over include",
            vec!["delete"],
            vec!["delete"],
            vec![],
        ),
        ("exclude star removes all", vec![], vec!["*"], vec![]),
        ("case-sensitive include", vec!["READ_FILE"], vec![], vec![]),
        (
            "case-sensitive exclude",
            vec![],
            vec!["read_file"],
            vec![
                "read_dir",
                "write_file",
                "Read_File",
                "delete",
                "search",
                "search.advanced",
                "a*b",
                "",
            ],
        ),
        (
            "dot is literal",
            vec!["search.*"],
            vec![],
            vec!["search.advanced"],
        ),
        (
            "patterns are trimmed",
            vec!["  delete \t"],
            vec![],
            vec!["delete"],
        ),
        (
            "a blank include matches nothing (and still restricts)",
            vec!["   "],
            vec![],
            vec![],
        ),
        (
            "a blank exclude removes nothing",
            vec![],
            vec![""],
            TOOLS.to_vec(),
        ),
        (
            "star in a tool name is matched by a star",
            vec!["a*b"],
            vec![],
            vec!["a*b"],
        ),
        ("question mark is literal", vec!["delet?"], vec![], vec![]),
    ];
    for (label, include, exclude, expected) in cases {
        let f = ToolFilter::new(include, exclude);
        assert_eq!(kept(&f), expected, "{label}");
    }
    assert!(ToolFilter::default().is_empty());
    assert!(!ToolFilter::new(["x"], Vec::<String>::new()).is_empty());
}

#[test]
fn tool_filter_pattern_rules() {
    let m = matches_tool_filter_pattern;
    assert!(m("read_*", "read_"));
    assert!(m("*", ""));
    assert!(!m("", ""), "blank pattern matches nothing");
    assert!(!m("Read", "read"));
    assert!(m("résumé*", "résumé_v2"));
    assert!(m("*ツール", "検索ツール"));
    assert!(m("a**b", "ab"));
    assert!(m("*a*a*a*b", &("a".repeat(500) + "b")));
    assert!(!m("*a*a*a*b", &"a".repeat(500)));
    assert!(m("[x]", "[x]"), "brackets are literal");
    assert!(!m("[x]", "x"));
}

#[test]
fn policy_combinations() {
    let names = [
        "mcp_github_create_issue",
        "mcp_github_delete_repo",
        "MCP_GitHub_List",
        "mcp_fs_read",
        "fs__read",
        "exec",
    ];
    type Case = (
        &'static str,
        Vec<&'static str>,
        Vec<&'static str>,
        Vec<&'static str>,
    );
    let cases: Vec<Case> = vec![
        ("empty allows all", vec![], vec![], names.to_vec()),
        (
            "allow exact, case-insensitive",
            vec!["MCP_FS_READ"],
            vec![],
            vec!["mcp_fs_read"],
        ),
        (
            "allow glob, case-insensitive",
            vec!["mcp_github_*"],
            vec![],
            vec![
                "mcp_github_create_issue",
                "mcp_github_delete_repo",
                "MCP_GitHub_List",
            ],
        ),
        (
            "deny only",
            vec![],
            vec!["*delete*"],
            vec![
                "mcp_github_create_issue",
                "MCP_GitHub_List",
                "mcp_fs_read",
                "fs__read",
                "exec",
            ],
        ),
        (
            "deny wins over allow",
            vec!["mcp_github_*"],
            vec!["mcp_github_delete_*"],
            vec!["mcp_github_create_issue", "MCP_GitHub_List"],
        ),
        (
            "deny wins over an identical allow",
            vec!["exec"],
            vec!["EXEC"],
            vec![],
        ),
        ("deny star denies all", vec!["*"], vec!["*"], vec![]),
        ("allow star allows all", vec!["*"], vec![], names.to_vec()),
        (
            "blank allow entries are dropped: empty allow allows all",
            vec!["", "  "],
            vec![],
            names.to_vec(),
        ),
        (
            "blank deny entries are dropped",
            vec![],
            vec![" "],
            names.to_vec(),
        ),
        (
            "allow patterns trimmed",
            vec![" exec "],
            vec![],
            vec!["exec"],
        ),
        (
            "both schemes",
            vec!["mcp_fs_*", "fs__*"],
            vec![],
            vec!["mcp_fs_read", "fs__read"],
        ),
        (
            "only * is special",
            vec!["mcp_fs_rea?", "mcp.fs.read"],
            vec![],
            vec![],
        ),
    ];
    for (label, allow, deny, expected) in cases {
        let p = ToolPolicy::new(allow, deny);
        let got: Vec<&str> = names.iter().copied().filter(|n| p.allows(n)).collect();
        assert_eq!(got, expected, "{label}");
    }
    assert!(ToolPolicy::allow_all().allows("anything"));
    assert!(ToolPolicy::allow_all().is_allow_all());
    assert!(ToolPolicy::new([" "], [""]).is_allow_all());
    assert!(!ToolPolicy::new(["x"], Vec::<&str>::new()).is_allow_all());
}

#[test]
fn policy_pattern_rules() {
    let m = matches_policy_pattern;
    assert!(m("MCP_*", "mcp_x"));
    assert!(m("mcp_*", "MCP_X"));
    assert!(m("ÉCRIRE", "écrire"), "Unicode case folding");
    assert!(!m("", "x"));
    assert!(m("*", ""));
    assert!(!m("a", "ab"));
}

#[test]
fn tool_filter_in_the_config() {
    let v = validate_mcp_config(&json!({"servers": {"a": {
        "command": "x",
        "toolFilter": {"include": ["read_*"], "exclude": ["read_secret"]}
    }}}))
    .unwrap();
    let f = &v.config.servers[0].tool_filter;
    assert_eq!(f, &ToolFilter::new(["read_*"], ["read_secret"]));
    assert!(f.allows("read_file"));
    assert!(!f.allows("read_secret"));
    assert!(!f.allows("write_file"));
    // Absent: keeps all.
    let v = validate_mcp_config(&json!({"servers": {"a": {"command": "x"}}})).unwrap();
    assert!(v.config.servers[0].tool_filter.is_empty());
    // `data` keeps the filter as given and adds no default for it.
    let v = validate_mcp_config(&json!({"servers": {"a": {"command": "x", "toolFilter": {}}}}))
        .unwrap();
    assert_eq!(v.data["servers"]["a"]["toolFilter"], json!({}));
}
