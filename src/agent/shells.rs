//! `/shells`: the person's view of the session's background processes
//! (command, uptime, last line), one's output, and stopping one. What it
//! shows is redacted like every result. Never starts anything.

use std::time::Duration;

use super::commands::ShellsAction;
use super::driver::Runtime;
use super::events::AgentEvent;

/// Runs `/shells` (`None`), `/shells N` or `/shells kill N`.
pub(super) async fn command(rt: &Runtime, action: Option<ShellsAction>) {
    let shells = &rt.tool_cx.shells;
    let text = match action {
        None => list(rt),
        Some(ShellsAction::Show(id)) => match shells.get(id) {
            Some(bg) => format!(
                "Output of background process {id} ({}):\n{}",
                bg.command,
                bg.kept_output()
            ),
            None => missing(rt, id),
        },
        Some(ShellsAction::Kill(id)) => match shells.kill(id).await {
            Some(text) => text,
            None => missing(rt, id),
        },
    };
    let secrets = rt.tool_cx.secrets.get().await;
    let text = secrets.redact(&text).text;
    rt.emit(AgentEvent::Notice(text));
}

fn list(rt: &Runtime) -> String {
    let lines = rt.tool_cx.shells.list();
    if lines.is_empty() {
        return "No background processes in this session (bash with `background: true` starts one)."
            .to_string();
    }
    let mut text = String::from("Background processes of this session:\n");
    for line in lines {
        let state = if line.running { "running" } else { "ended" };
        text.push_str(&format!(
            "  {}  {state} {}  {}\n     last: {}\n",
            line.id,
            uptime(line.uptime),
            crate::controls::one_line(&line.command),
            crate::controls::one_line(&line.last_line),
        ));
    }
    text.push_str("/shells N shows one's output; /shells kill N stops it.");
    text
}

fn missing(rt: &Runtime, id: u32) -> String {
    let ids: Vec<String> = rt.tool_cx.shells.ids().iter().map(u32::to_string).collect();
    if ids.is_empty() {
        format!("There is no background process {id}: this session has none.")
    } else {
        format!(
            "There is no background process {id}; this session's are: {}.",
            ids.join(", ")
        )
    }
}

/// `m:ss`, or `h:mm:ss` past an hour.
fn uptime(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_reads_as_a_clock() {
        assert_eq!(uptime(Duration::from_secs(42)), "0:42");
        assert_eq!(uptime(Duration::from_secs(3725)), "1:02:05");
    }
}
