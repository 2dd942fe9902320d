//! Protected paths: the fifteen built-in patterns of the seed, the common
//! credential stores a home directory holds, the user's additions, and
//! mino's own home when it lies inside the project, all matched
//! case-insensitively against a project-relative path. Pure: it sees names
//! only, never the filesystem (where the home is comes in as a name).

use std::sync::LazyLock;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// File-name patterns, matched against the final component.
pub const BUILTIN_FILE_PATTERNS: [&str; 11] = [
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "id_rsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
];

/// Directory patterns, matched against every component but the last (and the
/// last too: listing `.ssh` reveals what is inside it).
pub const BUILTIN_DIR_PATTERNS: [&str; 4] = [".git/", ".ssh/", ".aws/", ".gnupg/"];

/// Credential stores a home directory holds, beyond the seed's fifteen, so
/// that a project that is `~` (or holds a dotfiles checkout) does not hand
/// them out. Written like a user pattern: `NAME` for a final component,
/// `DIR/` for a directory anywhere on the path, a pattern with an inner `/`
/// for a path that ends the relative path (matched at any depth).
///
/// With the seed's patterns this is the one table of secrets: the file
/// tools match it, and the sandbox masks every literal entry under the
/// home (`home_secret_paths`), so the two cannot disagree.
pub const CREDENTIAL_STORE_PATTERNS: [&str; 24] = [
    ".git-credentials",
    ".pgpass",
    ".envrc",
    "*.env",
    "id_dsa*",
    ".vault-token",
    ".terraformrc",
    ".kube/",
    ".azure/",
    ".docker/config.json",
    ".config/gh/hosts.yml",
    ".config/gcloud/",
    ".config/**/credentials.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".config/github-copilot/",
    ".config/rclone/rclone.conf",
    ".local/share/keyrings/",
    ".password-store/",
];

/// The secrets of the one table that name a fixed place, relative to a
/// home: the literal patterns of the seed and of the credential stores (a
/// directory without its `/`). The sandbox masks each of them under the
/// home; the file tools refuse each of them (a test holds both to this).
pub fn home_secret_paths() -> impl Iterator<Item = &'static str> {
    BUILTIN_FILE_PATTERNS
        .iter()
        .chain(BUILTIN_DIR_PATTERNS.iter())
        .chain(CREDENTIAL_STORE_PATTERNS.iter())
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.contains(['*', '?', '[', '{']) && *p != ".git")
}

/// Why a path is withheld from file tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// It matches a protected pattern.
    Pattern,
    /// It is mino's own home (settings, sessions, logs, audit) or inside it.
    MinoHome,
}

/// A user pattern that globset cannot compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid protected-path pattern {pattern:?}: {message}")]
pub struct PatternError {
    pub pattern: String,
    pub message: String,
}

/// The compiled set of protected patterns. Built-ins are always present.
#[derive(Debug, Clone)]
pub struct ProtectedPaths {
    /// Matched against the final component.
    names: GlobSet,
    /// Matched against each directory component (and the final one).
    dirs: GlobSet,
    /// User patterns containing a `/`: matched against the whole relative path.
    whole: GlobSet,
    /// Built-in patterns containing a `/`: matched against the relative path
    /// and every suffix of it that starts at a component (any depth).
    nested: GlobSet,
    /// mino's home, project-relative and case-folded, when it lies inside
    /// the project (empty when the project itself is inside the home).
    mino_home: Option<String>,
    /// mino's home as absolute paths (as given and canonical), case-folded,
    /// for free strings that a tool server takes as paths of its own.
    mino_home_absolute: Vec<String>,
    /// Every path is protected: what is left when the built-in patterns
    /// did not compile (fail closed).
    all: bool,
}

/// The built-in patterns, compiled once.
static BUILTIN: LazyLock<Result<ProtectedPaths, PatternError>> =
    LazyLock::new(|| ProtectedPaths::new::<&str>(&[]));

fn glob(pattern: &str) -> Result<Glob, PatternError> {
    GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| PatternError {
            pattern: pattern.to_string(),
            message: e.kind().to_string(),
        })
}

fn build(set: GlobSetBuilder, pattern: &str) -> Result<GlobSet, PatternError> {
    set.build().map_err(|e| PatternError {
        pattern: pattern.to_string(),
        message: e.to_string(),
    })
}

impl ProtectedPaths {
    /// The built-in patterns plus `extra`, each written like a built-in one:
    /// `NAME` for a final component, `DIR/` for a directory anywhere on the
    /// path, or a pattern with an inner `/` for a whole relative path.
    pub fn new<S: AsRef<str>>(extra: &[S]) -> Result<Self, PatternError> {
        let mut names = GlobSetBuilder::new();
        let mut dirs = GlobSetBuilder::new();
        let mut whole = GlobSetBuilder::new();
        let mut nested = GlobSetBuilder::new();
        for p in BUILTIN_FILE_PATTERNS {
            names.add(glob(p)?);
        }
        for p in BUILTIN_DIR_PATTERNS {
            dirs.add(glob(p.trim_end_matches('/'))?);
        }
        for p in CREDENTIAL_STORE_PATTERNS {
            match p.strip_suffix('/') {
                Some(dir) if dir.contains('/') => nested.add(glob(&format!("{dir}/**"))?),
                Some(dir) => dirs.add(glob(dir)?),
                None if p.contains('/') => nested.add(glob(p)?),
                None => names.add(glob(p)?),
            };
        }
        // A directory store is protected as a final component too (listing
        // `.config/gcloud` reveals what is inside it).
        for p in CREDENTIAL_STORE_PATTERNS {
            if let Some(dir) = p.strip_suffix('/')
                && dir.contains('/')
            {
                nested.add(glob(dir)?);
            }
        }
        for p in extra {
            let p = p.as_ref().trim();
            if p.is_empty() {
                return Err(PatternError {
                    pattern: String::new(),
                    message: "a pattern cannot be empty".into(),
                });
            }
            if let Some(dir) = p.strip_suffix('/') {
                if dir.contains('/') {
                    whole.add(glob(&format!("{dir}/**"))?);
                } else {
                    dirs.add(glob(dir)?);
                }
            } else if p.contains('/') {
                whole.add(glob(p.trim_start_matches("./").trim_start_matches('/'))?);
            } else {
                names.add(glob(p)?);
            }
        }
        Ok(Self {
            names: build(names, "file-name patterns")?,
            dirs: build(dirs, "directory patterns")?,
            whole: build(whole, "path patterns")?,
            nested: build(nested, "credential store patterns")?,
            mino_home: None,
            mino_home_absolute: Vec::new(),
            all: false,
        })
    }

    /// The same patterns, with mino's home at `relative` inside the project
    /// (a normalized project-relative path; empty when the whole project
    /// lies inside the home).
    pub fn with_mino_home(mut self, relative: &str) -> Self {
        let trimmed = relative.trim_matches('/');
        self.mino_home = Some(fold(trimmed));
        self
    }

    /// The same patterns, with mino's home at these absolute paths (the
    /// home as given and its canonical form): a free string naming a path
    /// inside it is protected (see `names_protected`).
    pub fn with_mino_home_absolute(mut self, paths: &[String]) -> Self {
        self.mino_home_absolute = paths
            .iter()
            .map(|p| fold(p.replace('\\', "/").trim_matches('/')))
            .filter(|p| !p.is_empty())
            .collect();
        self
    }

    /// The built-in patterns only. Never fails and never unprotects: were
    /// the built-ins not to compile (a test proves they do), every path
    /// would be protected, and `check_builtin` stops mino at start.
    pub fn builtin() -> Self {
        match &*BUILTIN {
            Ok(paths) => paths.clone(),
            Err(_) => Self::everything(),
        }
    }

    /// Compiles the built-in patterns now, if nothing has yet: a start runs
    /// it on a thread of its own, so the compilation (about a millisecond,
    /// most of it the regex compiler's code read in for the first time)
    /// overlaps the start's other work instead of delaying its first frame.
    pub fn warm() {
        LazyLock::force(&BUILTIN);
    }

    /// Whether the built-in patterns compiled; mino does not start when
    /// they did not. Waits for a compilation already under way.
    pub fn check_builtin() -> Result<(), PatternError> {
        BUILTIN.as_ref().map(|_| ()).map_err(Clone::clone)
    }

    /// Every path protected.
    fn everything() -> Self {
        Self {
            names: GlobSet::empty(),
            dirs: GlobSet::empty(),
            whole: GlobSet::empty(),
            nested: GlobSet::empty(),
            mino_home: None,
            mino_home_absolute: Vec::new(),
            all: true,
        }
    }

    /// Whether `relative` (a normalized project-relative path with `/`
    /// separators) is protected. Names are matched as given and with full
    /// Unicode case folding, because a case-insensitive file system maps
    /// `tls.\u{212A}ey` (a Kelvin sign) or `id_r\u{17F}a` (a long s) to the
    /// same file as `tls.key` and `id_rsa`.
    pub fn is_protected(&self, relative: &str) -> bool {
        self.protection(relative).is_some()
    }

    /// Why `relative` is withheld, if it is: everything when the built-ins
    /// failed, then mino's home, then the patterns.
    pub fn protection(&self, relative: &str) -> Option<Protection> {
        if self.all {
            return Some(Protection::Pattern);
        }
        let folded = fold(relative);
        if let Some(home) = &self.mino_home {
            let path = folded.trim_matches('/');
            if home.is_empty()
                || path == home
                || path
                    .strip_prefix(home.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
            {
                return Some(Protection::MinoHome);
            }
        }
        if self.matches(relative) || (folded != relative && self.matches(&folded)) {
            return Some(Protection::Pattern);
        }
        None
    }

    /// Whether a free string (an argument of an MCP call, which a server may
    /// take as a path of its own: absolute, `~/...`, `file://...`) names a
    /// protected file: its final `/`- or `\\`-separated component, or a
    /// directory component before it, matches a pattern. A server may
    /// normalise the path (`.env/.`, `x/../.env`), percent-decode it
    /// (`%2Eenv`) or drop a URI's query and fragment (`.env?raw=1`) before
    /// it opens a file, so each of those readings is checked too.
    pub fn names_protected(&self, text: &str) -> bool {
        let decoded = percent_encoding::percent_decode_str(text).decode_utf8_lossy();
        [text, decoded.as_ref()].into_iter().any(|reading| {
            let slashed = reading.replace('\\', "/");
            let mut readings = vec![lexical(&slashed), slashed.clone()];
            if slashed.contains("://")
                && let Some(end) = slashed.find(['?', '#'])
            {
                readings.push(lexical(&slashed[..end]));
            }
            readings.iter().any(|r| {
                let r = r.trim_end_matches('/');
                self.is_protected(r) || self.inside_mino_home(r)
            })
        })
    }

    /// Whether an absolute (or `file://`) path lies in mino's home.
    fn inside_mino_home(&self, reading: &str) -> bool {
        let folded = fold(reading);
        // `lexical` readings have lost the leading `/` (and `file://` its
        // slashes): compare without it.
        let path = folded
            .strip_prefix("file:")
            .unwrap_or(&folded)
            .trim_start_matches('/');
        self.mino_home_absolute.iter().any(|home| {
            path == home
                || path
                    .strip_prefix(home.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    fn matches(&self, relative: &str) -> bool {
        let components: Vec<&str> = relative.split('/').filter(|c| !c.is_empty()).collect();
        let Some(last) = components.last() else {
            return false;
        };
        if self.names.is_match(last) {
            return true;
        }
        if components.iter().any(|c| self.dirs.is_match(c)) {
            return true;
        }
        if !self.nested.is_empty() {
            for start in 0..components.len() {
                if self.nested.is_match(components[start..].join("/")) {
                    return true;
                }
            }
        }
        !self.whole.is_empty() && self.whole.is_match(relative)
    }
}

/// Full case folding, approximated by upper- then lower-casing.
fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.to_uppercase().to_lowercase()
}

/// `path` with `.` components dropped and each `..` taking away the
/// component before it, as a server that normalises paths would read it.
fn lexical(path: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                kept.pop();
            }
            other => kept.push(other),
        }
    }
    kept.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin() -> ProtectedPaths {
        ProtectedPaths::new::<&str>(&[]).unwrap()
    }

    #[test]
    fn free_strings_naming_protected_files() {
        let p = builtin();
        for text in [
            "/home/u/proj/.env",
            "/home/u/proj/.ENV/",
            "file:///home/u/.ssh/config",
            "C:\\Users\\u\\id_rsa",
            "~/.aws/credentials",
            "proj/tls.key",
            // Readings a server may take: normalised, decoded, query dropped.
            "/home/u/proj/.env/.",
            "/home/u/proj/.env/x/..",
            "/home/u/proj/sub/../.ENV",
            "/home/u/proj/%2Eenv",
            "/home/u/proj/%2eenv",
            "file:///home/u/proj/.env?raw=1",
            "file:///home/u/proj/id_rsa#top",
        ] {
            assert!(p.names_protected(text), "{text} should be protected");
        }
        for text in [
            "/home/u/proj/notes.md",
            "hello .env world",
            "",
            "/",
            "echo",
            "/home/u/proj/.env-example",
            "what is 50%?",
        ] {
            assert!(!p.names_protected(text), "{text} should not be protected");
        }
    }

    #[test]
    fn every_builtin_pattern_compiles() {
        for pattern in BUILTIN_FILE_PATTERNS
            .iter()
            .chain(&BUILTIN_DIR_PATTERNS)
            .map(|p| p.trim_end_matches('/'))
        {
            assert!(glob(pattern).is_ok(), "{pattern}");
        }
        assert_eq!(ProtectedPaths::check_builtin(), Ok(()));
        assert!(!ProtectedPaths::builtin().all);
        assert!(ProtectedPaths::builtin().is_protected(".env"));
        assert!(!ProtectedPaths::builtin().is_protected("notes.md"));
    }

    #[test]
    fn what_is_left_when_the_builtins_fail_protects_everything() {
        let closed = ProtectedPaths::everything();
        for path in ["notes.md", "src/main.rs", "."] {
            assert!(closed.is_protected(path), "{path}");
        }
    }

    #[test]
    fn every_builtin_pattern_protects_its_example() {
        let p = builtin();
        for path in [
            ".env",
            ".env.local",
            "server.pem",
            "tls.key",
            "cert.p12",
            "id_rsa",
            "id_rsa.pub",
            "id_ecdsa",
            "id_ed25519_sk",
            ".netrc",
            ".npmrc",
            ".pypirc",
            ".git/config",
            ".ssh/config",
            ".aws/credentials",
            ".gnupg/pubring.kbx",
        ] {
            assert!(p.is_protected(path), "{path} should be protected");
        }
    }

    #[test]
    fn case_variants_and_nested_paths() {
        let p = builtin();
        for path in [
            ".ENV",
            ".Git/config",
            "ID_RSA.pub",
            "config/.env.local",
            ".git/hooks/pre-commit",
            "sub/.GIT/HEAD",
            "a/b/.Ssh/known_hosts",
            "deep/dir/Server.PEM",
        ] {
            assert!(p.is_protected(path), "{path} should be protected");
        }
    }

    #[test]
    fn final_git_component_is_protected_file_or_directory() {
        let p = builtin();
        assert!(p.is_protected(".git"));
        assert!(p.is_protected("vendor/lib/.git"));
    }

    #[test]
    fn ordinary_names_are_not_protected() {
        let p = builtin();
        for path in [
            "docs/env.md",
            "notes.md",
            "environment.env.md.txt",
            "src/key.rs",
            "keys/readme.md",
            "gitignore",
            ".gitignore",
            ".github/workflows/ci.yml",
            "pem",
            "docs/config",
        ] {
            assert!(!p.is_protected(path), "{path} should not be protected");
        }
    }

    #[test]
    fn credential_stores_of_a_home_are_protected_at_any_depth() {
        let p = builtin();
        for path in [
            ".git-credentials",
            ".pgpass",
            ".envrc",
            "prod.env",
            "config/Staging.ENV",
            "id_dsa",
            "id_dsa.pub",
            ".vault-token",
            ".terraformrc",
            ".kube/config",
            ".kube",
            ".azure/msal_token_cache.json",
            ".docker/config.json",
            "dotfiles/.docker/config.json",
            ".config/gh/hosts.yml",
            "dotfiles/.config/gh/hosts.yml",
            ".config/gcloud",
            ".config/gcloud/application_default_credentials.json",
            ".config/credentials.json",
            ".config/some-tool/credentials.json",
            ".config/a/b/credentials.json",
        ] {
            assert_eq!(
                p.protection(path),
                Some(Protection::Pattern),
                "{path} should be protected"
            );
        }
        for path in [
            ".docker/daemon.json",
            ".config/gh/config.yml",
            "credentials.json",
            "src/credentials.json",
            ".config/mino.toml",
            "environment.md",
        ] {
            assert!(!p.is_protected(path), "{path} should not be protected");
        }
    }

    #[test]
    fn a_free_string_inside_minos_home_is_protected() {
        let p = builtin().with_mino_home_absolute(&[
            "/home/u/.config/mino/".to_string(),
            "~/.config/mino".to_string(),
        ]);
        for text in [
            "/home/u/.config/mino",
            "/home/u/.config/mino/sessions/abc.jsonl",
            "/home/U/.Config/Mino/log/mino.log",
            "file:///home/u/.config/mino/settings.toml",
            "/home/u/project/../.config/mino/sessions",
            "/home/u/.config/mino/./sessions/",
            "~/.config/mino/sessions/x.jsonl",
            "%2Fhome%2Fu%2F.config%2Fmino%2Fsessions",
        ] {
            assert!(p.names_protected(text), "{text} should be protected");
        }
        for text in [
            "/home/u/.config/mino-other/file",
            "/home/u/.config/minor",
            "/home/u/project/src/main.rs",
            "sessions/abc.jsonl",
        ] {
            assert!(!p.names_protected(text), "{text} should not be protected");
        }
    }

    #[test]
    fn the_seeds_fifteen_are_unchanged() {
        assert_eq!(
            BUILTIN_FILE_PATTERNS,
            [
                ".env",
                ".env.*",
                "*.pem",
                "*.key",
                "*.p12",
                "id_rsa*",
                "id_ecdsa*",
                "id_ed25519*",
                ".netrc",
                ".npmrc",
                ".pypirc",
            ]
        );
        assert_eq!(BUILTIN_DIR_PATTERNS, [".git/", ".ssh/", ".aws/", ".gnupg/"]);
    }

    #[test]
    fn minos_home_inside_the_project_is_withheld_in_every_letter_case() {
        let p = builtin().with_mino_home(".config/mino");
        for path in [
            ".config/mino",
            ".config/mino/config.toml",
            ".config/mino/sessions/abc.jsonl",
            ".CONFIG/Mino/audit.jsonl",
            ".config/mino/logs/mino.log",
            ".config/mino/anything-added-later",
        ] {
            assert_eq!(p.protection(path), Some(Protection::MinoHome), "{path}");
        }
        assert_eq!(p.protection(".config/mino-other/x"), None);
        assert_eq!(p.protection(".config"), None);
        assert_eq!(p.protection("README.md"), None);
        assert_eq!(p.protection(".env"), Some(Protection::Pattern));
        // A project inside the home: everything is the home's.
        let all = builtin().with_mino_home("");
        assert_eq!(all.protection(""), Some(Protection::MinoHome));
        assert_eq!(all.protection("src/main.rs"), Some(Protection::MinoHome));
    }

    #[test]
    fn user_patterns_add_names_directories_and_paths() {
        let p = ProtectedPaths::new(&["*.sqlite", "secrets/", "config/prod.toml"]).unwrap();
        assert!(p.is_protected("data/app.SQLITE"));
        assert!(p.is_protected("secrets/token.txt"));
        assert!(p.is_protected("a/Secrets/b/c"));
        assert!(p.is_protected("config/prod.toml"));
        assert!(!p.is_protected("other/config/prod.toml"));
        assert!(p.is_protected(".env"), "built-ins stay");
        assert!(!p.is_protected("config/dev.toml"));
    }

    #[test]
    fn unicode_case_variants_are_protected_too() {
        let p = builtin();
        for path in [
            "tls.\u{212A}ey",
            "id_r\u{17F}a",
            ".\u{17F}sh/config",
            ".aw\u{17F}/credentials",
            ".ENV",
        ] {
            assert!(p.is_protected(path), "{path} should be protected");
        }
        assert!(!p.is_protected("caf\u{e9}.md"));
    }

    #[test]
    fn a_dot_slash_user_pattern_matches_its_path() {
        let p = ProtectedPaths::new(&["./config/prod.toml"]).unwrap();
        assert!(p.is_protected("config/prod.toml"));
    }

    #[test]
    fn bad_user_pattern_is_an_error_naming_it() {
        let err = ProtectedPaths::new(&["[unclosed"]).unwrap_err();
        assert_eq!(err.pattern, "[unclosed");
        assert!(ProtectedPaths::new(&[" "]).is_err());
    }
}
