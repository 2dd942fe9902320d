//! `mino sandbox check`: what this machine supports and what a command run
//! now would see, as one JSON object. Reads; never runs a command.

use serde_json::{Value, json};

use super::root::{self as table, ENV_ALLOWED, Part};
use super::{Level, Network, PROXY_PORT, PROXY_SOCKET, Planner, Support, root, summary};

/// The report for `planner` on a machine that supports `support`.
pub fn report(planner: &Planner, support: &Support) -> Value {
    let plan = planner.plan("true");
    let level = planner.sandbox.level;
    let shown = |paths: &[std::path::PathBuf]| -> Vec<String> {
        paths.iter().map(|p| p.display().to_string()).collect()
    };
    let masked: Vec<String> = plan.masked().map(|p| p.display().to_string()).collect();
    let settings = &planner.sandbox.settings;
    let root: Vec<Value> = table::entries(&settings.toolchains, &settings.caches)
        .into_iter()
        .map(|(entry, part)| {
            let present = table::expand(&entry, planner.home.as_deref())
                .is_some_and(|p| p.symlink_metadata().is_ok());
            json!({ "path": entry, "part": part, "present": present })
        })
        .chain(
            ["/tmp", "/var/tmp", "/dev/shm"]
                .into_iter()
                .map(|p| json!({ "path": p, "part": "private", "present": true })),
        )
        .chain([
            json!({ "path": "/dev", "part": "fresh (null, zero, full, random, urandom, tty, its own devpts)", "present": true }),
            json!({ "path": "/proc", "part": "its own PID namespace's", "present": true }),
            json!({ "path": "~", "part": "empty, read-only", "present": planner.home.is_some() }),
        ])
        .collect();
    let parts: Vec<&str> = [Part::System, Part::Toolchain, Part::Cache]
        .iter()
        .map(|p| p.name())
        .collect();
    let mut env: Vec<String> = ENV_ALLOWED.iter().map(|s| (*s).to_string()).collect();
    env.extend(settings.pass_env.iter().cloned());
    json!({
        "platform": std::env::consts::OS,
        "user_namespaces": support.user_namespaces,
        "user_namespaces_error": support.namespace_error,
        "landlock_abi": support.landlock_abi,
        "socket_filter": support.socket_filter,
        "enabled": planner.sandbox.settings.enabled,
        "level": level,
        "summary": summary(&planner.sandbox),
        "degraded": planner.sandbox.degraded,
        "missing": planner.sandbox.missing(),
        "unix_sockets": super::describe::unix_sockets(&planner.sandbox, support),
        "apparmor_restricts_user_namespaces": super::probe::apparmor_hint().is_some(),
        "network": match (level, settings.network) {
            (Level::Full, Network::On) => "via proxy",
            (Level::Full, Network::Off) => "off",
            _ => "on (the host's)",
        },
        "network_summary": super::describe::network(&planner.sandbox),
        "network_namespace": level == Level::Full,
        "proxy": if planner.uses_proxy() {
            json!({
                "listens": format!("127.0.0.1:{PROXY_PORT} inside the command's namespace"),
                "socket": PROXY_SOCKET,
                "env": root::proxy_env(PROXY_PORT, false)
                    .into_iter()
                    .map(|(name, value)| format!("{name}={value}"))
                    .collect::<Vec<_>>(),
                "refuses": "loopback, unspecified, link-local, private, shared (100.64/10), unique-local, multicast, broadcast and reserved addresses, also IPv4-mapped, -compatible, NAT64 and 6to4",
                "allow_private": settings.allow_private,
                "allowed_domains": settings.allowed_domains,
            })
        } else {
            Value::Null
        },
        "writable": if level == Level::None { Vec::new() } else {
            let mut w = shown(&plan.writable);
            w.push("/tmp (private)".to_string());
            w
        },
        "read_only": if level == Level::Full { shown(&plan.read_only) } else { Vec::new() },
        "masked": masked,
        "ignored_links": shown(&plan.ignored_links),
        "root": if level == Level::Full { root } else { Vec::new() },
        "root_parts": parts,
        "env_allowed": env,
    })
}
