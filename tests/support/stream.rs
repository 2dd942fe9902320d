//! Reading `--output-format stream-json`: the records a run printed, and the
//! views of them the suites assert on (decisions, result statuses and
//! outputs), written once for every suite.

use serde_json::Value;

/// Every line of `stdout`, each one JSON record.
pub fn records(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// The records of type `kind`.
pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The decisions, as (tool, decision, code).
pub fn decisions(events: &[Value]) -> Vec<(String, String, String)> {
    of_type(events, "decision")
        .iter()
        .map(|d| {
            (
                d["tool"].as_str().unwrap().to_string(),
                d["decision"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Each tool result's status, in order.
pub fn statuses(events: &[Value]) -> Vec<String> {
    of_type(events, "tool_result")
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_string())
        .collect()
}

/// Each tool result's output, in order.
pub fn outputs(events: &[Value]) -> Vec<String> {
    of_type(events, "tool_result")
        .iter()
        .map(|r| r["output"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The exit status `-p` owes a completed turn that printed `events`: 2 when
/// it made tool calls and every one was rejected or denied, else 0.
pub fn completed_status(events: &[Value]) -> i32 {
    let results = statuses(events);
    let refused = results
        .iter()
        .filter(|s| *s == "rejected" || *s == "denied")
        .count();
    if !results.is_empty() && refused == results.len() {
        2
    } else {
        0
    }
}
