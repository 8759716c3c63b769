//! What a stdio server inherits from the host environment: everything (the original's
//! behaviour) or a small allowlist, and under both never the variables that make a program
//! load code it was not asked to run (`LD_PRELOAD`, `NODE_OPTIONS`, …) unless the config
//! names them. A pure function over variable names: the spawn removes what it returns.

/// Variables that make a dynamic loader or an interpreter run extra code at start.
const LOADER_HIJACK: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "BASH_ENV",
    "ENV",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "GCONV_PATH",
];

/// Prefixes of such variables (macOS's dynamic loader).
const LOADER_HIJACK_PREFIXES: &[&str] = &["DYLD_"];

/// What `minimal` passes: enough to find programs, a home, a locale, a terminal, temp dirs.
const MINIMAL: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    // Windows.
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "USERNAME",
    "USERDOMAIN",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "COMMONPROGRAMFILES",
    "HOMEDRIVE",
    "HOMEPATH",
    "SYSTEMDRIVE",
    "COMPUTERNAME",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
];

/// Whether `name` is a loader-hijack variable.
pub fn is_loader_hijack(name: &str) -> bool {
    let name = comparable(name);
    LOADER_HIJACK.contains(&name.as_ref())
        || LOADER_HIJACK_PREFIXES.iter().any(|p| name.starts_with(p))
}

fn in_minimal(name: &str) -> bool {
    let name = comparable(name);
    MINIMAL.contains(&name.as_ref()) || name.starts_with("LC_")
}

/// A variable name as the system compares it: Windows ignores case, Unix does not.
fn comparable(name: &str) -> std::borrow::Cow<'_, str> {
    if cfg!(windows) {
        std::borrow::Cow::Owned(name.to_ascii_uppercase())
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

/// The host variables (of `host`) the server must not inherit: under `minimal` every one not
/// in the allowlist, under both every loader-hijack one; never one that `keep` (the config's
/// `env` keys and `envPassthrough`) names. Names compare case-insensitively on Windows only.
pub fn withheld<'a>(
    host: impl IntoIterator<Item = &'a str>,
    minimal: bool,
    keep: &[&str],
) -> Vec<String> {
    let kept = |name: &str| {
        keep.iter().any(|k| {
            if cfg!(windows) {
                k.eq_ignore_ascii_case(name)
            } else {
                *k == name
            }
        })
    };
    host.into_iter()
        .filter(|name| !kept(name))
        .filter(|name| is_loader_hijack(name) || (minimal && !in_minimal(name)))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inherit_withholds_only_loader_hijack_variables() {
        let host = [
            "PATH",
            "NODE_OPTIONS",
            "LD_PRELOAD",
            "DYLD_INSERT_LIBRARIES",
            "API_TOKEN",
        ];
        assert_eq!(
            withheld(host, false, &[]),
            ["NODE_OPTIONS", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES"]
        );
        assert_eq!(
            withheld(host, false, &["NODE_OPTIONS"]),
            ["LD_PRELOAD", "DYLD_INSERT_LIBRARIES"]
        );
    }

    #[test]
    fn minimal_passes_the_allowlist_and_what_the_config_names() {
        let host = [
            "PATH",
            "HOME",
            "LC_ALL",
            "AWS_SECRET_ACCESS_KEY",
            "PYTHONPATH",
            "EXTRA",
        ];
        assert_eq!(
            withheld(host, true, &["EXTRA"]),
            ["AWS_SECRET_ACCESS_KEY", "PYTHONPATH"]
        );
    }
}
