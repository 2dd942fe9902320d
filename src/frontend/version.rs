//! `mino version --verbose` (and `mino -vV`): what this build speaks and
//! what this machine lets its sandbox do, one `key: value` line each, so a
//! bug report can paste it whole.

use crate::config::ProviderKind;
use crate::sandbox::UnixSockets;
use crate::sandbox::probe::Support;

/// The short form, as `mino --version` prints it.
pub fn short() -> String {
    format!("mino {}", env!("CARGO_PKG_VERSION"))
}

/// The long form: the short line, then the wires, the protocol revisions,
/// the sandbox `support` allows, and the build.
pub fn verbose(support: &Support) -> String {
    let wires: Vec<&str> = ProviderKind::ALL.iter().map(|p| p.name()).collect();
    let (current, fallback) = (crate::mcp::CURRENT_REVISION, crate::mcp::FALLBACK_REVISION);
    let earlier: Vec<&str> = rmcp::model::ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .rev()
        .filter(|v| v.as_str() < fallback.as_str())
        .map(|v| v.as_str())
        .collect();
    let acp = serde_json::to_value(agent_client_protocol::schema::ProtocolVersion::V1)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| "1".to_string());
    let lines = [
        short(),
        format!("wires: {}", wires.join(", ")),
        format!(
            "mcp: {current} (server/discover), else {fallback} (initialize; a server may answer {}) (rmcp)",
            earlier.join(", ")
        ),
        format!("acp: protocol version {acp} (agent-client-protocol)"),
        format!("sandbox: {}", sandbox(support)),
        format!(
            "build: {} {}, {} profile, target_env {}",
            std::env::consts::OS,
            std::env::consts::ARCH,
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            target_env(),
        ),
        format!("features: {}", features()),
    ];
    lines.join("\n")
}

/// What the sandbox can be on this machine.
fn sandbox(support: &Support) -> String {
    let landlock = match support.landlock_abi {
        Some(abi) => format!("Landlock ABI {abi}"),
        None => "no Landlock".to_string(),
    };
    if support.user_namespaces {
        format!("full (user, mount, pid and network namespaces; {landlock})")
    } else if support.landlock_abi.is_some() {
        let filter = match UnixSockets::on(support) {
            UnixSockets::Filtered => "; unix sockets refused by seccomp",
            UnixSockets::Landlock | UnixSockets::Reachable => "",
        };
        format!(
            "Landlock only ({landlock}{filter}; no user namespaces: {})",
            support
                .namespace_error
                .as_deref()
                .unwrap_or("unknown reason")
        )
    } else {
        format!(
            "none ({})",
            support
                .namespace_error
                .as_deref()
                .unwrap_or("unknown reason")
        )
    }
}

fn target_env() -> &'static str {
    if cfg!(target_env = "musl") {
        "musl"
    } else if cfg!(target_env = "gnu") {
        "gnu"
    } else {
        "other"
    }
}

/// The build's parts that another build could differ in. The crate has no
/// optional features of its own, so this names the fixed choices.
fn features() -> &'static str {
    "no optional features; tls rustls (ring), http/2, highlighting syntect (oniguruma)"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_names_its_part() {
        let support = Support {
            user_namespaces: false,
            namespace_error: Some("EPERM".into()),
            landlock_abi: Some(4),
            socket_filter: true,
            socket_filter_error: None,
        };
        let text = verbose(&support);
        let keys: Vec<&str> = text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(": ").map(|(k, _)| k))
            .collect();
        assert_eq!(
            keys,
            ["wires", "mcp", "acp", "sandbox", "build", "features"]
        );
        assert!(text.starts_with("mino "));
        assert!(text.contains("wires: openai-responses, openai-chat, anthropic, scripted"));
        assert!(
            text.contains("sandbox: Landlock only (Landlock ABI 4; unix sockets refused by seccomp; no user namespaces: EPERM)")
        );
        assert!(text.contains(
            "mcp: 2026-07-28 (server/discover), else 2025-11-25 (initialize; a server may answer 2025-06-18, 2025-03-26, 2024-11-05) (rmcp)"
        ));
    }
}
