//! `[model] profile`: how mino talks to the model, "default" or "small"
//! (forced tool calls, the `final_answer` tool, a smaller tool set with
//! short descriptions, results cut harder). Owns the names, the window at
//! or under which "small" is chosen when no settings file names a profile,
//! and the banner's sentence saying why. Never touches a request itself.

/// The largest context window (tokens) for which the small profile is
/// chosen when the settings name none.
pub const SMALL_WINDOW: u64 = 8192;

/// The names `[model] profile` accepts, for error messages.
pub const PROFILE_NAMES: &str = "\"default\", \"small\"";

/// How mino talks to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    #[default]
    Default,
    /// For small models in small windows: every request forces a tool call,
    /// `final_answer` ends a turn, fewer tools with shorter descriptions,
    /// results cut to a share of the window.
    Small,
}

impl Profile {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "default" => Some(Profile::Default),
            "small" => Some(Profile::Small),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Default => "default",
            Profile::Small => "small",
        }
    }
}

/// The profile in force and whether the window chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileChoice {
    pub profile: Profile,
    /// The window mino knows (settings, the built-in table or the server's
    /// report) when it chose the profile; `None` when the settings named it.
    pub by_window: Option<u64>,
}

impl Default for ProfileChoice {
    /// What the default window chooses: the default profile.
    fn default() -> Self {
        Self::choose(None, super::DEFAULT_CONTEXT_WINDOW)
    }
}

impl ProfileChoice {
    /// The profile the settings name (`set`), else the one for `window`.
    pub fn choose(set: Option<Profile>, window: u64) -> Self {
        match set {
            Some(profile) => Self {
                profile,
                by_window: None,
            },
            None => Self {
                profile: if window <= SMALL_WINDOW {
                    Profile::Small
                } else {
                    Profile::Default
                },
                by_window: Some(window),
            },
        }
    }

    pub fn is_small(self) -> bool {
        self.profile == Profile::Small
    }

    /// The banner's line, for any profile but the default one chosen by
    /// the window (which needs no word).
    pub fn banner_line(self) -> Option<String> {
        match (self.profile, self.by_window) {
            (Profile::Default, Some(_)) => None,
            (profile, None) => Some(format!("Profile: {} (from settings).", profile.name())),
            (Profile::Small, Some(window)) => Some(format!(
                "Profile: small (chosen for a context window of {window} tokens, {SMALL_WINDOW} or less; set [model] profile = \"default\" to change it)."
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_of_8k_or_less_chooses_small_unless_settings_say() {
        assert_eq!(ProfileChoice::choose(None, 4096).profile, Profile::Small);
        assert_eq!(ProfileChoice::choose(None, 8192).profile, Profile::Small);
        assert_eq!(ProfileChoice::choose(None, 8193).profile, Profile::Default);
        let set = ProfileChoice::choose(Some(Profile::Default), 4096);
        assert_eq!(set.profile, Profile::Default);
        assert_eq!(
            set.banner_line().as_deref(),
            Some("Profile: default (from settings).")
        );
        let line = ProfileChoice::choose(None, 4096).banner_line().unwrap();
        assert!(line.contains("small") && line.contains("4096"), "{line}");
        assert_eq!(ProfileChoice::choose(None, 128_000).banner_line(), None);
        assert_eq!(ProfileChoice::default().banner_line(), None);
        assert_eq!(Profile::from_name("Small"), None);
        for name in ["default", "small"] {
            assert!(PROFILE_NAMES.contains(name));
            assert_eq!(Profile::from_name(name).map(Profile::name), Some(name));
        }
    }
}
