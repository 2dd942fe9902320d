//! Protected paths: the fifteen built-in patterns and the user's additions,
//! matched case-insensitively against a project-relative path. Pure: it sees
//! names only, never the filesystem.

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
}

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
        for p in BUILTIN_FILE_PATTERNS {
            names.add(glob(p)?);
        }
        for p in BUILTIN_DIR_PATTERNS {
            dirs.add(glob(p.trim_end_matches('/'))?);
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
        })
    }

    /// The built-in patterns only.
    pub fn builtin() -> Self {
        // The built-in patterns are constants that compile; an error here would
        // be a programming error caught by the tests, so fall back to an empty
        // user list rather than panic.
        match Self::new::<&str>(&[]) {
            Ok(p) => p,
            Err(_) => Self {
                names: GlobSet::empty(),
                dirs: GlobSet::empty(),
                whole: GlobSet::empty(),
            },
        }
    }

    /// Whether `relative` (a normalized project-relative path with `/`
    /// separators) is protected. Names are matched as given and with full
    /// Unicode case folding, because a case-insensitive file system maps
    /// `tls.\u{212A}ey` (a Kelvin sign) or `id_r\u{17F}a` (a long s) to the
    /// same file as `tls.key` and `id_rsa`.
    pub fn is_protected(&self, relative: &str) -> bool {
        if self.matches(relative) {
            return true;
        }
        let folded = fold(relative);
        folded != relative && self.matches(&folded)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin() -> ProtectedPaths {
        ProtectedPaths::new::<&str>(&[]).unwrap()
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
            "my.env",
            "pem",
            "docs/config",
        ] {
            assert!(!p.is_protected(path), "{path} should not be protected");
        }
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
