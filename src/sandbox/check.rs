//! `mino sandbox check`: what this machine supports and what a command run
//! now would see, as one JSON object. Reads; never runs a command.

use serde_json::{Value, json};

use super::{Level, Planner, Support, summary};

/// The report for `planner` on a machine that supports `support`.
pub fn report(planner: &Planner, support: &Support) -> Value {
    let plan = planner.plan("true");
    let level = planner.sandbox.level;
    let shown = |paths: &[std::path::PathBuf]| -> Vec<String> {
        paths.iter().map(|p| p.display().to_string()).collect()
    };
    let masked: Vec<String> = plan.masked().map(|p| p.display().to_string()).collect();
    json!({
        "platform": std::env::consts::OS,
        "user_namespaces": support.user_namespaces,
        "user_namespaces_error": support.namespace_error,
        "landlock_abi": support.landlock_abi,
        "enabled": planner.sandbox.settings.enabled,
        "level": level,
        "summary": summary(&planner.sandbox),
        "degraded": planner.sandbox.degraded,
        "network": match level {
            Level::Full => planner.sandbox.settings.network.name(),
            _ => "on",
        },
        "writable": if level == Level::None { Vec::new() } else {
            let mut w = shown(&plan.writable);
            w.push("/tmp (private)".to_string());
            w
        },
        "read_only": if level == Level::Full { shown(&plan.read_only) } else { Vec::new() },
        "masked": masked,
    })
}
