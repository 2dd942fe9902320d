//! The names MCP tools are offered under: `mcp_SERVER_TOOL`, with every
//! character model APIs refuse replaced, at most 64 characters, and unique.
//! A name that had to be cut or that collides gets a short digest of its
//! server and tool. Once given, a name means that one tool of that one
//! server for the rest of the run, whatever the servers list later: "allow
//! for session" and "never" are remembered by name, so a name must never
//! come to mean another tool.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

/// The longest tool name the model APIs accept (OpenAI and Anthropic: 64).
pub const MAX_TOOL_NAME: usize = 64;

/// Every MCP tool name starts with this, so none can shadow a built-in tool.
pub const PREFIX: &str = "mcp_";

/// `mcp_SERVER_TOOL` with characters outside `[A-Za-z0-9_-]` replaced by `_`.
fn sanitized(server: &str, tool: &str) -> String {
    format!("{PREFIX}{server}_{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name with a digest of `server` and `tool` at the end, cut to fit.
fn digested(base: &str, server: &str, tool: &str) -> String {
    let digest = Sha256::new()
        .chain_update(server.as_bytes())
        .chain_update([0])
        .chain_update(tool.as_bytes())
        .finalize();
    let suffix = format!("_{}", &hex::encode(digest)[..8]);
    let keep = MAX_TOOL_NAME - suffix.len();
    // `base` is ASCII after sanitizing, so byte indexes are char boundaries.
    format!("{}{suffix}", &base[..base.len().min(keep)])
}

/// Hands out unique names for the tools of a run, and the same name again
/// for the same server and tool.
#[derive(Debug, Default)]
pub struct Namer {
    taken: HashSet<String>,
    given: HashMap<(String, String), String>,
}

impl Namer {
    /// The name for `tool` of `server`: the one it was given before, else a
    /// new one unique among every name given so far.
    pub fn name(&mut self, server: &str, tool: &str) -> String {
        let key = (server.to_string(), tool.to_string());
        if let Some(name) = self.given.get(&key) {
            return name.clone();
        }
        let base = sanitized(server, tool);
        let mut name = if base.len() <= MAX_TOOL_NAME && base.chars().count() == base.len() {
            base.clone()
        } else {
            digested(&base, server, tool)
        };
        if self.taken.contains(&name) {
            name = digested(&base, server, tool);
        }
        let mut n = 2;
        while self.taken.contains(&name) {
            name = digested(&base, server, &format!("{tool}\0{n}"));
            n += 1;
        }
        self.taken.insert(name.clone());
        self.given.insert(key, name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_TOOL_NAME).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_are_kept() {
        let mut n = Namer::default();
        assert_eq!(n.name("everything", "echo"), "mcp_everything_echo");
        assert_eq!(n.name("fs", "read-file"), "mcp_fs_read-file");
    }

    #[test]
    fn odd_characters_long_names_and_collisions() {
        let mut n = Namer::default();
        let a = n.name("s", "a.b");
        let b = n.name("s", "a b");
        let c = n.name("s", "a_b");
        let long = n.name("server", &"x".repeat(200));
        let unicode = n.name("s", "résumé/ü");
        for name in [&a, &b, &c, &long, &unicode] {
            assert!(valid(name), "{name}");
        }
        assert_eq!(a, "mcp_s_a_b");
        let all: HashSet<_> = [&a, &b, &c, &long, &unicode].into_iter().collect();
        assert_eq!(all.len(), 5);
        // The same tool gets the same name in another list.
        let mut again = Namer::default();
        assert_eq!(again.name("server", &"x".repeat(200)), long);
    }

    #[test]
    fn a_name_never_comes_to_mean_another_tool() {
        let mut n = Namer::default();
        assert_eq!(n.name("s", "a.b"), "mcp_s_a_b");
        // The server drops `a.b` and offers `a_b`: it does not inherit the
        // name (and whatever the session remembers for it).
        let later = n.name("s", "a_b");
        assert_ne!(later, "mcp_s_a_b");
        assert!(valid(&later));
        // Server `x_y`'s `z` cannot take the name of server `x`'s `y_z`.
        assert_eq!(n.name("x", "y_z"), "mcp_x_y_z");
        assert_ne!(n.name("x_y", "z"), "mcp_x_y_z");
        // Asked again, each keeps its own.
        assert_eq!(n.name("s", "a.b"), "mcp_s_a_b");
        assert_eq!(n.name("s", "a_b"), later);
    }

    #[test]
    fn two_hundred_tools_all_valid_and_unique() {
        let mut n = Namer::default();
        let names: HashSet<String> = (0..200)
            .map(|i| {
                // 200 distinct tools whose names collide in pairs once
                // sanitised (`t 3` and `t.3`).
                let sep = if i % 2 == 0 { ' ' } else { '.' };
                n.name(&format!("srv{}", i % 5), &format!("t{sep}{}", i / 10))
            })
            .collect();
        assert_eq!(names.len(), 200);
        assert!(names.iter().all(|name| valid(name)));
    }
}
