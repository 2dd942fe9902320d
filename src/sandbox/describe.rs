//! What the user and the model are told about the sandbox: the one-line
//! summary a dialog and a record line show, and the notes added to a result
//! when a command read a masked path or failed on a read-only one. Pure
//! text; never looks at the filesystem.

use super::{LANDLOCK_UNIX_ABI, Level, Network, Sandbox, Support, UnixSockets};

/// The `Sandbox:` field's value for a sandboxed call.
pub fn summary(sandbox: &Sandbox) -> String {
    let network = network(sandbox);
    match (sandbox.level, sandbox.unix_sockets) {
        (Level::Full, _) => format!("project writable, secrets masked, {network}"),
        (Level::LandlockOnly, UnixSockets::Reachable) => format!(
            "project writable (Landlock only), secrets not masked, unix sockets and the host's \
             loopback reachable, {network}"
        ),
        (Level::LandlockOnly, UnixSockets::Filtered) => format!(
            "project writable (Landlock only), secrets not masked, unix sockets refused \
             (seccomp), the host's loopback reachable, {network}"
        ),
        (Level::LandlockOnly, UnixSockets::Landlock) => format!(
            "project writable (Landlock only), secrets not masked, unix sockets outside out of \
             reach, the host's loopback reachable, {network}"
        ),
        (Level::None, _) => "no sandbox; runs with your account permissions".to_string(),
    }
}

/// What keeps the unix sockets outside from a command under Landlock alone,
/// and what that costs, for `mino sandbox check` (`None` at other levels).
pub fn unix_sockets(sandbox: &Sandbox, support: &Support) -> Option<String> {
    if sandbox.level != Level::LandlockOnly {
        return None;
    }
    let abi = support.landlock_abi.unwrap_or(0);
    Some(match sandbox.unix_sockets {
        UnixSockets::Landlock => format!(
            "out of reach by Landlock (ABI {abi}): pathname unix sockets are reached only in the \
             writable directories, abstract ones only within the sandbox"
        ),
        UnixSockets::Filtered => format!(
            "refused by a seccomp filter, since this kernel's Landlock (ABI {abi}) cannot \
             restrict pathname unix sockets (ABI {LANDLOCK_UNIX_ABI} can): socket(AF_UNIX) and \
             a datagram socketpair fail with EACCES and io_uring with ENOSYS, so no unix \
             socket outside (a tmux, docker or X server, an ssh agent) is reached. The cost: \
             programs that make their own unix sockets (tmux, ssh-agent, a server on a socket, \
             Python's forkserver) fail in this mode; a stream socketpair still works"
        ),
        UnixSockets::Reachable => format!(
            "reachable: this kernel's Landlock (ABI {abi}) cannot restrict pathname unix sockets \
             (ABI {LANDLOCK_UNIX_ABI} can), and the seccomp filter that would refuse them cannot \
             be installed here ({})",
            support
                .socket_filter_error
                .as_deref()
                .unwrap_or("unknown reason")
        ),
    })
}

/// Which network a command has: `network off`, `network via proxy` (with
/// the allow-list when one is set), or the host's where there is no
/// network namespace.
pub fn network(sandbox: &Sandbox) -> String {
    match (sandbox.level, sandbox.settings.network) {
        (Level::Full, Network::Off) => "network off".to_string(),
        (Level::Full, Network::On) => match &sandbox.settings.allowed_domains {
            None => "network via proxy".to_string(),
            Some(domains) => format!("network via proxy, allow-list: {}", listed(domains)),
        },
        (_, Network::Off) => "network on (off needs user namespaces)".to_string(),
        (_, Network::On) => "network on".to_string(),
    }
}

/// The first few entries of a list, and how many more there are.
fn listed(entries: &[String]) -> String {
    const SHOWN: usize = 3;
    if entries.is_empty() {
        return "nothing".to_string();
    }
    let mut text = entries
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    if entries.len() > SHOWN {
        text.push_str(&format!(" and {} more", entries.len() - SHOWN));
    }
    text
}

/// Said after the output when the command names a masked path: it read
/// nothing there, and why.
pub fn masked_note(command: &str, masked: &[String]) -> Option<String> {
    let named: Vec<&str> = masked
        .iter()
        .filter(|shown| {
            let name = shown.rsplit('/').next().unwrap_or(shown);
            !name.is_empty() && command.contains(name)
        })
        .map(String::as_str)
        .collect();
    if named.is_empty() {
        return None;
    }
    Some(format!(
        "[Sandbox: {} masked by the sandbox: it reads as empty and cannot be written. Secrets \
         stay out of reach of commands; ask the user if you need what it holds.]",
        named.join(", ")
    ))
}

/// Said after the output when a link named like a secret leads out of the
/// project: it masked nothing there.
pub fn links_note(links: &[String]) -> Option<String> {
    if links.is_empty() {
        return None;
    }
    Some(format!(
        "[Sandbox: {} named like a secret but leading out of the project: ignored, nothing \
         outside the project was masked through it.]",
        links.join(", ")
    ))
}

/// Said after the output when it shows the proxy refusing a destination
/// (its JSON body, its header, or curl's words for a refused tunnel).
pub fn network_note(output: &str) -> Option<String> {
    let refused = output.contains("\"error\":\"mino-proxy\"")
        || output.contains("X-Mino-Proxy-Refusal")
        || output.contains("CONNECT tunnel failed, response 403");
    if !refused {
        return None;
    }
    Some(
        "[Sandbox: the command's network goes through mino's proxy, which refused this \
         destination: loopback, link-local and private addresses are out of reach unless the \
         user's settings name the exact host:port in [sandbox] allow_private, and with [sandbox] \
         allowed_domains only the hosts listed there are reached. Do not work around it; ask \
         the user if the command needs that destination.]"
            .to_string(),
    )
}

/// Said after the output when it shows a write refused by the sandbox at
/// `level`: what that sandbox allows, as it is.
pub fn result_note(output: &str, level: Level) -> Option<String> {
    let read_only = output.contains("Read-only file system");
    let denied = output.contains("Permission denied") || output.contains("Operation not permitted");
    if !read_only && !denied {
        return None;
    }
    let what = match level {
        Level::LandlockOnly => {
            "the command ran under Landlock alone (no namespaces), where only the project, its \
             own TMPDIR and the build caches are writable, the machine's /tmp is read-only and \
             unix sockets may be refused"
        }
        _ => {
            "the command ran in the sandbox, where only the project, /tmp and the build caches \
             are writable, the home is empty but for toolchains, .git/hooks, .git/config, .mino \
             and shell start-up files are read-only, and secrets are masked"
        }
    };
    Some(format!(
        "[Sandbox: {what}. If it failed for that reason, do not work around it: call bash again \
         with \"sandbox\": false and a \"reason\", and the user will be asked.]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_is_named_with_its_allow_list() {
        use crate::sandbox::SandboxSettings;
        let mut sandbox = Sandbox::off(SandboxSettings::default());
        sandbox.level = Level::Full;
        assert_eq!(network(&sandbox), "network via proxy");
        sandbox.settings.allowed_domains = Some(
            ["*.crates.io", "pypi.org", "a.b", "c.d", "e.f"]
                .map(String::from)
                .to_vec(),
        );
        assert_eq!(
            network(&sandbox),
            "network via proxy, allow-list: *.crates.io pypi.org a.b and 2 more"
        );
        sandbox.settings.allowed_domains = Some(Vec::new());
        assert_eq!(network(&sandbox), "network via proxy, allow-list: nothing");
        sandbox.settings.network = Network::Off;
        assert_eq!(network(&sandbox), "network off");
        assert!(summary(&sandbox).ends_with("network off"));
        sandbox.level = Level::LandlockOnly;
        assert!(network(&sandbox).starts_with("network on"));
    }

    #[test]
    fn a_named_masked_path_is_noted() {
        let masked = vec![".env".to_string(), "~/.ssh".to_string()];
        let note = masked_note("cat ~/.ssh/id_rsa", &masked).unwrap_or_default();
        assert!(note.contains("~/.ssh masked by the sandbox"), "{note}");
        assert!(masked_note("ls", &masked).is_none());
    }

    #[test]
    fn a_proxy_refusal_is_explained() {
        for output in [
            "{\"error\":\"mino-proxy\",\"reason\":\"private-address\"}",
            "curl: (56) CONNECT tunnel failed, response 403",
        ] {
            let note = network_note(output).unwrap_or_default();
            assert!(note.contains("allow_private"), "{note}");
        }
        assert!(network_note("HTTP/1.1 403 Forbidden").is_none());
    }

    #[test]
    fn read_only_failures_point_at_sandbox_false() {
        let note = result_note(
            "touch: cannot touch 'x': Read-only file system",
            Level::Full,
        )
        .unwrap_or_default();
        assert!(note.contains("\"sandbox\": false"));
        assert!(result_note("ok", Level::Full).is_none());
        let fallback = result_note("Permission denied", Level::LandlockOnly).unwrap_or_default();
        assert!(fallback.contains("Landlock alone"), "{fallback}");
        assert!(!fallback.contains("secrets are masked"), "{fallback}");
    }
}
