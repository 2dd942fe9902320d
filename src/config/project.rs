//! A project's `.mino/config.toml`, which can only tighten: add protected
//! patterns, turn tools off, mark a user's MCP server `ask` or disable it,
//! add rules that ask or deny. Everything that
//! could loosen (a mode, a hook, a trusted executable, a model or a provider preset, limits, a
//! tool turned on, a new server) is refused with the key and the file that
//! does accept it. Never reads a file itself.

use std::path::Path;

use super::error::{ConfigError, KeyPath};
use super::raw::{RawMcp, RawSandbox, RawTools};
use super::sandbox::{network, unsandboxed_in_bypass};
use super::settings::Settings;
use super::source::SourceFile;
use super::validate::{add_patterns, check_server_name};
use crate::sandbox::{Network, UnsandboxedInBypass};

/// Applies the project file `src` on top of `settings` (already holding the
/// user's). `user_file` is where the refused keys belong.
pub fn apply_project(
    settings: &mut Settings,
    src: &SourceFile,
    user_file: &Path,
) -> Result<(), ConfigError> {
    let raw = &src.raw;
    let only_user = format!(
        "is only accepted in the user settings {}",
        user_file.display()
    );
    let refused = [
        ("default_mode", raw.default_mode.is_some()),
        ("yolo", raw.yolo.is_some()),
        ("model", raw.model.is_some()),
        ("providers", raw.providers.is_some()),
        ("limits", raw.limits.is_some()),
        ("shell_gate", raw.shell_gate.is_some()),
        ("hooks", raw.hooks.is_some()),
        ("agents", raw.agents.is_some()),
        ("ui", raw.ui.is_some()),
        ("checkpoints", raw.checkpoints.is_some()),
        ("lsp", raw.lsp.is_some()),
    ];
    if let Some((key, _)) = refused.iter().find(|(_, present)| *present) {
        return Err(src.loosening(KeyPath::of(&[key]), only_user));
    }
    if let Some(tools) = &raw.tools {
        turn_off_tools(settings, src, tools)?;
    }
    if let Some(patterns) = raw.protected.as_ref().and_then(|p| p.patterns.as_ref()) {
        add_patterns(settings, src, patterns)?;
    }
    if let Some(mcp) = &raw.mcp {
        mark_servers(settings, src, mcp, user_file)?;
    }
    if let Some(sandbox) = &raw.sandbox {
        tighten_sandbox(settings, src, sandbox, user_file)?;
    }
    if let Some(rules) = &raw.rules {
        let mut all = settings.rules.rules().to_vec();
        all.extend(super::rules::rules(
            src,
            rules,
            all.len() + 1,
            Some(user_file),
        )?);
        settings.rules = std::sync::Arc::new(crate::policy::saved::SavedRules::new(all));
    }
    Ok(())
}

/// A project may cut the network, require the sandbox and keep
/// `sandbox: false` asking; nothing that loosens.
fn tighten_sandbox(
    settings: &mut Settings,
    src: &SourceFile,
    raw: &RawSandbox,
    user_file: &Path,
) -> Result<(), ConfigError> {
    let key = |k: &str| KeyPath::of(&["sandbox", k]);
    let only_user = format!(
        "is only accepted in the user settings {}; a project may set network = \"off\", required = true and unsandboxed_in_bypass = \"ask\"",
        user_file.display()
    );
    let refused = [
        ("enabled", raw.enabled.is_some()),
        ("namespaces", raw.namespaces.is_some()),
        ("writable", raw.writable.is_some()),
        ("toolchains", raw.toolchains.is_some()),
        ("caches", raw.caches.is_some()),
        ("pass_env", raw.pass_env.is_some()),
        ("allow_private", raw.allow_private.is_some()),
        ("allowed_domains", raw.allowed_domains.is_some()),
        ("publish", raw.publish.is_some()),
    ];
    if let Some((name, _)) = refused.iter().find(|(_, present)| *present) {
        return Err(src.loosening(key(name), only_user));
    }
    if let Some(value) = &raw.network {
        match network(src, value)? {
            Network::Off => settings.sandbox.network = Network::Off,
            Network::On => {
                return Err(src.loosening(
                    key("network"),
                    "= \"on\" would loosen; accepted here: \"off\"",
                ));
            }
        }
    }
    match raw.required {
        Some(true) => settings.sandbox.required = true,
        Some(false) => {
            return Err(src.loosening(key("required"), "= false would loosen; accepted here: true"));
        }
        None => {}
    }
    if let Some(value) = &raw.unsandboxed_in_bypass {
        match unsandboxed_in_bypass(src, value)? {
            UnsandboxedInBypass::Ask => {
                settings.sandbox.unsandboxed_in_bypass = UnsandboxedInBypass::Ask;
            }
            UnsandboxedInBypass::Run => {
                return Err(src.loosening(
                    key("unsandboxed_in_bypass"),
                    "= \"run\" would loosen; accepted here: \"ask\"",
                ));
            }
        }
    }
    Ok(())
}

fn turn_off_tools(
    settings: &mut Settings,
    src: &SourceFile,
    raw: &RawTools,
) -> Result<(), ConfigError> {
    let switches = [
        ("bash", raw.bash, &mut settings.tools.bash),
        ("edit", raw.edit, &mut settings.tools.edit),
        ("fetch", raw.fetch, &mut settings.tools.fetch),
        ("plan", raw.plan, &mut settings.tools.plan),
        ("lsp", raw.lsp, &mut settings.tools.lsp),
    ];
    match raw.fetch_private_hosts.as_deref() {
        Some("allow") => {
            return Err(src.loosening(
                KeyPath::of(&["tools", "fetch_private_hosts"]),
                "= \"allow\" would let fetches reach private addresses without a question; accepted here: \"ask\"",
            ));
        }
        Some(value) => {
            super::validate::private_hosts(src, value)?;
            settings.tools.fetch_private_hosts_allowed = false;
        }
        None => {}
    }
    for (name, value, switch) in switches {
        match value {
            Some(true) => {
                return Err(src.loosening(
                    KeyPath::of(&["tools", name]),
                    "= true would turn a tool on; accepted here: false (a project can only turn tools off)",
                ));
            }
            Some(false) => *switch = false,
            None => {}
        }
    }
    Ok(())
}

fn mark_servers(
    settings: &mut Settings,
    src: &SourceFile,
    raw: &RawMcp,
    user_file: &Path,
) -> Result<(), ConfigError> {
    let user_file = user_file.display();
    for (name, entry) in raw.servers.iter().flatten() {
        let key = KeyPath::of(&["mcp", "servers", name]);
        check_server_name(src, &key, name)?;
        let defined = [
            ("command", entry.command.is_some()),
            ("args", entry.args.is_some()),
            ("env", entry.env.is_some()),
            ("cwd", entry.cwd.is_some()),
            ("url", entry.url.is_some()),
            ("headers", entry.headers.is_some()),
            ("startup_timeout_secs", entry.startup_timeout_secs.is_some()),
            ("tool_timeout_secs", entry.tool_timeout_secs.is_some()),
            ("enabled", entry.enabled == Some(true)),
            ("trust_annotations", entry.trust_annotations == Some(true)),
        ];
        if let Some((field, _)) = defined.iter().find(|(_, present)| *present) {
            return Err(src.loosening(
                key.key(field),
                format!("is only accepted in the user settings {user_file}; a project may only set trust = \"ask\", enabled = false or trust_annotations = false on a server defined there"),
            ));
        }
        let Some(server) = settings.mcp_servers.get_mut(name) else {
            return Err(src.loosening(
                key,
                format!(
                    "names a server that the user settings {user_file} do not define; accepted: trust = \"ask\" or enabled = false on a server defined there"
                ),
            ));
        };
        if entry.enabled == Some(false) {
            server.enabled = false;
        }
        if entry.trust_annotations == Some(false) {
            server.trust_annotations = false;
        }
        match entry.trust.as_deref() {
            None => {}
            Some("ask") => server.trust_ask = true,
            Some(other) => {
                return Err(src.loosening(
                    key.key("trust"),
                    format!("= {other:?} is not accepted in a project; accepted here: \"ask\""),
                ));
            }
        }
    }
    Ok(())
}
