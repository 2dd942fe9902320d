//! `[limits]` and `[checkpoints]` of the user's file: how much one call,
//! turn or prompt may take, and how much of the undo history mino's home
//! keeps. Each value checked against its range, the error naming the key.

use std::time::Duration;

use super::error::{ConfigError, KeyPath};
use super::raw::RawLimits;
use super::settings::LimitSettings;
use super::source::SourceFile;
use super::validate::ranged;

/// How much a project's checkpoint store keeps (`[checkpoints]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Distinct checkpoints per session.
    pub keep: usize,
    pub max_age: Duration,
    /// Bytes only the store holds (hard-linked git objects still in the
    /// project cost nothing).
    pub max_bytes: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            keep: 100,
            max_age: Duration::from_secs(30 * 24 * 3600),
            max_bytes: 2 << 30,
        }
    }
}

pub(super) fn retention(
    src: &SourceFile,
    raw: &super::raw::RawCheckpoints,
) -> Result<Retention, ConfigError> {
    let key = |k: &str| KeyPath::of(&["checkpoints", k]);
    let mut out = Retention::default();
    if let Some(n) = raw.keep_per_session {
        let n = ranged(src, key("keep_per_session"), n, 1, 100_000, " checkpoints")?;
        out.keep = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(days) = raw.max_age_days {
        let days = ranged(src, key("max_age_days"), days, 1, 3650, " days")?;
        out.max_age = Duration::from_secs(days * 24 * 3600);
    }
    if let Some(mib) = raw.max_size_mib {
        let mib = ranged(src, key("max_size_mib"), mib, 16, 16 << 20, " MiB")?;
        out.max_bytes = mib << 20;
    }
    Ok(out)
}

pub(super) fn limits_settings(
    src: &SourceFile,
    raw: &RawLimits,
) -> Result<LimitSettings, ConfigError> {
    let key = |k: &str| KeyPath::of(&["limits", k]);
    let mut limits = LimitSettings::default();
    if let Some(secs) = raw.bash_timeout_secs {
        limits.bash_timeout = Duration::from_secs(ranged(
            src,
            key("bash_timeout_secs"),
            secs,
            1,
            3600,
            " seconds",
        )?);
    }
    if let Some(bytes) = raw.bash_output_bytes {
        let bytes = ranged(
            src,
            key("bash_output_bytes"),
            bytes,
            1024,
            16 * 1024 * 1024,
            " bytes",
        )?;
        limits.bash_output_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    }
    if let Some(n) = raw.turn_requests {
        limits.turn_requests =
            u32::try_from(ranged(src, key("turn_requests"), n, 1, 100, "")?).unwrap_or(100);
    }
    if let Some(n) = raw.turn_tool_calls {
        limits.turn_tool_calls =
            u32::try_from(ranged(src, key("turn_tool_calls"), n, 1, 500, "")?).unwrap_or(500);
    }
    if let Some(bytes) = raw.prompt_bytes {
        let bytes = ranged(
            src,
            key("prompt_bytes"),
            bytes,
            1024,
            16 * 1024 * 1024,
            " bytes",
        )?;
        limits.prompt_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    }
    if let Some(n) = raw.background_shells {
        limits.background_shells =
            usize::try_from(ranged(src, key("background_shells"), n, 1, 32, "")?).unwrap_or(32);
    }
    Ok(limits)
}
