//! Which name the gateway serves a tool or prompt under: the manager's (`names: 'manager'`,
//! the default: what an agent of the manager sees, `mcp_<server>_<tool>` in compat), or the
//! server's own (`names: 'upstream'`), where a name two servers share (or one that is
//! another's manager name) is served under the manager's name for every server that has it,
//! so no name is ambiguous and none depends on which server started first.

use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServedNames {
    #[default]
    Manager,
    Upstream,
}

impl ServedNames {
    pub const VALUES: &str = "'manager' or 'upstream'";

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "manager" => Some(Self::Manager),
            "upstream" => Some(Self::Upstream),
            _ => None,
        }
    }
}

/// For each `(manager name, upstream name)`, the name served, in the same order. Manager
/// names are unique among themselves (the manager makes them so).
pub fn served_names(pairs: &[(&str, &str)], mode: ServedNames) -> Vec<String> {
    if mode == ServedNames::Manager {
        return pairs.iter().map(|(own, _)| (*own).to_owned()).collect();
    }
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, upstream) in pairs {
        *count.entry(upstream).or_default() += 1;
    }
    let mut bare: Vec<bool> = pairs.iter().map(|(_, up)| count[up] == 1).collect();
    // A bare name that is also the manager name of one served under it goes back to its own
    // manager name; repeat until none is left (at worst every name is the manager's).
    loop {
        let taken: HashSet<&str> = (pairs.iter().zip(&bare))
            .filter(|(_, bare)| !**bare)
            .map(|((own, _), _)| *own)
            .collect();
        let mut changed = false;
        for ((_, upstream), bare) in pairs.iter().zip(bare.iter_mut()) {
            if *bare && taken.contains(upstream) {
                *bare = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    pairs
        .iter()
        .zip(bare)
        .map(|((own, upstream), bare)| if bare { upstream } else { own }.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manager_names_by_default() {
        let pairs = [("mcp_a_x", "x"), ("mcp_b_y", "y")];
        assert_eq!(
            served_names(&pairs, ServedNames::Manager),
            ["mcp_a_x", "mcp_b_y"]
        );
    }

    #[test]
    fn upstream_names_unless_shared() {
        let pairs = [("mcp_a_x", "x"), ("mcp_a_y", "y"), ("mcp_b_x", "x")];
        assert_eq!(
            served_names(&pairs, ServedNames::Upstream),
            ["mcp_a_x", "y", "mcp_b_x"]
        );
    }

    #[test]
    fn a_bare_name_never_shadows_a_manager_name() {
        // b's own tool is called mcp_a_x: a's x (shared with c) is served as mcp_a_x, so b's
        // goes back to its manager name too.
        let pairs = [
            ("mcp_a_x", "x"),
            ("mcp_b_mcp_a_x", "mcp_a_x"),
            ("mcp_c_x", "x"),
        ];
        let served = served_names(&pairs, ServedNames::Upstream);
        assert_eq!(served, ["mcp_a_x", "mcp_b_mcp_a_x", "mcp_c_x"]);
        assert_eq!(ServedNames::parse("upstream"), Some(ServedNames::Upstream));
        assert_eq!(ServedNames::parse("bare"), None);
    }
}
