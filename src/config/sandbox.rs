//! `[sandbox]` of the user's settings: every value checked, every error
//! naming the file, the key and what is accepted. Never reads a file.

use std::path::{Component, Path};

use super::error::{ConfigError, KeyPath};
use super::raw::RawSandbox;
use super::source::SourceFile;
use crate::policy::destination::{self, NetworkRules};
use crate::sandbox::{Network, SandboxSettings, UnsandboxedInBypass};

const NETWORK_ACCEPTED: &str = "\"on\" or \"off\"";
const UNSANDBOXED_ACCEPTED: &str = "\"ask\" or \"run\"";
const WRITABLE_ACCEPTED: &str =
    "an absolute directory path or one starting with ~/, without . or .. components";

const ALLOW_PRIVATE_ACCEPTED: &str = "an exact \"host:port\": a host name or an IPv4 address, or \
     an IPv6 address in brackets (\"[::1]:8080\"), and a port from 1 to 65535, without a scheme, \
     a path or a wildcard";

const ALLOWED_DOMAINS_ACCEPTED: &str = "a host name or a pattern of one, labels of letters, \
     digits, - and _ where * stands for any run of characters (\"*.crates.io\"), without a \
     scheme, a port or a path";

const PUBLISH_ACCEPTED: &str = "a TCP port from 1024 to 65535, each at most once";

const PASS_ENV_ACCEPTED: &str =
    "a variable name (letters, digits, _), or a prefix of one ending in *";

/// `[sandbox] network`.
pub(super) fn network(src: &SourceFile, value: &str) -> Result<Network, ConfigError> {
    match value {
        "on" => Ok(Network::On),
        "off" => Ok(Network::Off),
        other => Err(src.invalid(
            KeyPath::of(&["sandbox", "network"]),
            format!("{other:?} is not a network setting"),
            NETWORK_ACCEPTED,
        )),
    }
}

/// `[sandbox] unsandboxed_in_bypass`.
pub(super) fn unsandboxed_in_bypass(
    src: &SourceFile,
    value: &str,
) -> Result<UnsandboxedInBypass, ConfigError> {
    match value {
        "ask" => Ok(UnsandboxedInBypass::Ask),
        "run" => Ok(UnsandboxedInBypass::Run),
        other => Err(src.invalid(
            KeyPath::of(&["sandbox", "unsandboxed_in_bypass"]),
            format!("{other:?} is not accepted"),
            UNSANDBOXED_ACCEPTED,
        )),
    }
}

/// `[sandbox] writable`, `toolchains` and `caches`: absolute or `~/`
/// paths without `.` or `..`.
fn check_dirs(src: &SourceFile, key: &str, dirs: &[String]) -> Result<(), ConfigError> {
    for (i, dir) in dirs.iter().enumerate() {
        let bare = dir.strip_prefix("~/").unwrap_or(dir);
        let well_formed = (dir.starts_with("~/") || dir.starts_with('/'))
            && Path::new(bare)
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::RootDir));
        if !well_formed {
            return Err(src.invalid(
                KeyPath::of(&["sandbox", key]).index(i),
                format!("{dir:?} is not accepted"),
                WRITABLE_ACCEPTED,
            ));
        }
    }
    Ok(())
}

/// `[sandbox]` of the user's file.
pub(super) fn sandbox_settings(
    src: &SourceFile,
    raw: &RawSandbox,
) -> Result<SandboxSettings, ConfigError> {
    let mut sandbox = SandboxSettings::default();
    sandbox.enabled = raw.enabled.unwrap_or(sandbox.enabled);
    sandbox.namespaces = raw.namespaces.unwrap_or(sandbox.namespaces);
    sandbox.required = raw.required.unwrap_or(sandbox.required);
    if let Some(value) = &raw.network {
        sandbox.network = network(src, value)?;
    }
    if let Some(value) = &raw.unsandboxed_in_bypass {
        sandbox.unsandboxed_in_bypass = unsandboxed_in_bypass(src, value)?;
    }
    for (key, list, out) in [
        ("writable", &raw.writable, &mut sandbox.writable),
        ("toolchains", &raw.toolchains, &mut sandbox.toolchains),
        ("caches", &raw.caches, &mut sandbox.caches),
    ] {
        if let Some(dirs) = list {
            check_dirs(src, key, dirs)?;
            *out = dirs.clone();
        }
    }
    if let Some(names) = &raw.pass_env {
        for (i, name) in names.iter().enumerate() {
            let bare = name.strip_suffix('*').unwrap_or(name);
            if bare.is_empty() || !bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(src.invalid(
                    KeyPath::of(&["sandbox", "pass_env"]).index(i),
                    format!("{name:?} is not accepted"),
                    PASS_ENV_ACCEPTED,
                ));
            }
        }
        sandbox.pass_env = names.clone();
    }
    if let Some(entries) = &raw.allow_private {
        for (i, entry) in entries.iter().enumerate() {
            if !destination::valid_host_port(entry) {
                return Err(src.invalid(
                    KeyPath::of(&["sandbox", "allow_private"]).index(i),
                    format!("{entry:?} is not accepted"),
                    ALLOW_PRIVATE_ACCEPTED,
                ));
            }
        }
        sandbox.allow_private = entries.clone();
    }
    if let Some(patterns) = &raw.allowed_domains {
        for (i, pattern) in patterns.iter().enumerate() {
            let compiles = NetworkRules::new(&[], Some(std::slice::from_ref(pattern))).is_ok();
            if !destination::valid_domain_pattern(pattern) || !compiles {
                return Err(src.invalid(
                    KeyPath::of(&["sandbox", "allowed_domains"]).index(i),
                    format!("{pattern:?} is not accepted"),
                    ALLOWED_DOMAINS_ACCEPTED,
                ));
            }
        }
        sandbox.allowed_domains = Some(patterns.clone());
    }
    if let Some(ports) = &raw.publish {
        for (i, port) in ports.iter().enumerate() {
            let valid = u16::try_from(*port).ok().filter(|p| *p >= 1024);
            match valid {
                Some(port) if !sandbox.publish.contains(&port) => sandbox.publish.push(port),
                _ => {
                    return Err(src.invalid(
                        KeyPath::of(&["sandbox", "publish"]).index(i),
                        format!("{port} is not accepted"),
                        PUBLISH_ACCEPTED,
                    ));
                }
            }
        }
    }
    Ok(sandbox)
}
