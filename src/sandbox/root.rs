//! The table of what a sandboxed command's constructed root holds (DESIGN
//! section 5a): the system directories read-only, the named toolchains
//! read-only in an otherwise empty home, the build caches through a layer of
//! the sandbox's own, and the environment variables that pass. Everything
//! the table does not name is absent. Pure data and its expansion against a
//! home; the user's settings may add to it (never a project's), nothing
//! removes from it. Never mounts and never reads a file.

use std::path::{Path, PathBuf};

/// How one entry of the table reaches the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// A system directory, bound read-only at its own path.
    System,
    /// A toolchain or configuration in the home, bound read-only.
    Toolchain,
    /// A cache in the home: the user's copy read-only below, the command's
    /// writes in a layer of the sandbox's own.
    Cache,
}

impl Part {
    pub fn name(self) -> &'static str {
        match self {
            Part::System => "system (read-only)",
            Part::Toolchain => "toolchain (read-only)",
            Part::Cache => "cache (the sandbox's own layer)",
        }
    }
}

/// One entry: an absolute path, or one starting with `~/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub path: &'static str,
    pub part: Part,
}

const fn system(path: &'static str) -> Entry {
    Entry {
        path,
        part: Part::System,
    }
}

const fn toolchain(path: &'static str) -> Entry {
    Entry {
        path,
        part: Part::Toolchain,
    }
}

const fn cache(path: &'static str) -> Entry {
    Entry {
        path,
        part: Part::Cache,
    }
}

/// The root every command starts from; entries that do not exist here are
/// left out.
pub const ROOT: [Entry; 27] = [
    system("/usr"),
    system("/bin"),
    system("/sbin"),
    system("/lib"),
    system("/lib32"),
    system("/lib64"),
    system("/libx32"),
    system("/etc"),
    system("/opt"),
    toolchain("~/.cargo/bin"),
    toolchain("~/.rustup"),
    toolchain("~/.pyenv"),
    toolchain("~/.nvm"),
    toolchain("~/.local/share/pnpm"),
    toolchain("~/.bun"),
    toolchain("~/.deno"),
    toolchain("~/.sdkman"),
    toolchain("~/go"),
    toolchain("~/.gitconfig"),
    toolchain("~/.config/git"),
    cache("~/.cache"),
    cache("~/.cargo/registry"),
    cache("~/.cargo/git"),
    cache("~/.npm"),
    cache("~/.rustup/tmp"),
    cache("~/.local/share/pnpm/store"),
    cache("~/go/pkg/mod"),
];

/// The only variables of mino's environment a command gets (besides what
/// `[sandbox] pass_env` names); a name ending in `*` is a prefix.
pub const ENV_ALLOWED: [&str; 18] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_*",
    "TERM",
    "TZ",
    "COLORTERM",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
];

/// The proxy variables: with namespaces never inherited from mino's
/// environment, set by the sandbox to its own proxy when the network is on.
pub const PROXY_ENV: [&str; 8] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
];

/// `NO_PROXY` inside the namespace.
pub const NAMESPACE_LOOPBACK: &str = "localhost,127.0.0.1,::1";

/// What the proxy variables are set to for the proxy's bridge on the
/// namespace's loopback `port`: HTTP for http and https, SOCKS5 (names
/// resolved by the proxy) for the rest. With `direct_loopback` (a call in
/// the session's shared network, where a background process may serve),
/// the namespace's own loopback is reached directly: only what runs in the
/// namespace listens there, never the host.
pub fn proxy_env(port: u16, direct_loopback: bool) -> Vec<(&'static str, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    PROXY_ENV
        .iter()
        .map(|name| {
            let value = match name.to_ascii_lowercase().as_str() {
                "all_proxy" => socks.clone(),
                "no_proxy" if direct_loopback => NAMESPACE_LOOPBACK.to_string(),
                "no_proxy" => String::new(),
                _ => http.clone(),
            };
            (*name, value)
        })
        .collect()
}

/// Whether a variable named `name` passes, by the table and `extra` (the
/// user's `pass_env`).
pub fn env_passes(name: &str, extra: &[String]) -> bool {
    let matches = |pattern: &str| match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    };
    ENV_ALLOWED.iter().any(|p| matches(p)) || extra.iter().any(|p| matches(p))
}

/// `~/x` against `home`; absolute paths as they are; `None` for a home
/// path without a home.
pub fn expand(entry: &str, home: Option<&Path>) -> Option<PathBuf> {
    match entry.strip_prefix("~/") {
        Some(rest) => home.map(|home| home.join(rest)),
        None => Some(PathBuf::from(entry)),
    }
}

/// The table with the user's additions, in order: the built-in entries,
/// then `toolchains` and `caches` from the settings.
pub fn entries(toolchains: &[String], caches: &[String]) -> Vec<(String, Part)> {
    let mut all: Vec<(String, Part)> = ROOT.iter().map(|e| (e.path.to_string(), e.part)).collect();
    all.extend(toolchains.iter().map(|p| (p.clone(), Part::Toolchain)));
    all.extend(caches.iter().map(|p| (p.clone(), Part::Cache)));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_named_variables_pass() {
        assert!(env_passes("PATH", &[]));
        assert!(env_passes("LC_ALL", &[]));
        assert!(!env_passes("GITHUB_TOKEN", &[]));
        assert!(!env_passes("PATHX", &[]));
        assert!(env_passes("CARGO_HOME", &["CARGO_*".to_string()]));
    }

    #[test]
    fn home_entries_need_a_home() {
        assert_eq!(expand("~/.cache", None), None);
        assert_eq!(
            expand("~/.cache", Some(Path::new("/h"))),
            Some(PathBuf::from("/h/.cache"))
        );
        assert_eq!(expand("/usr", None), Some(PathBuf::from("/usr")));
    }
}
