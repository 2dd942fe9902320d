//! bash's arguments: read with serde (unknown fields refused) and checked,
//! each error naming the argument at fault and what is accepted. Never
//! runs, plans or decides anything.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::{MAX_COMMAND_BYTES, NAME, seconds};
use crate::tools::ToolError;

/// The arguments as the model wrote them: known fields only, each kept as
/// given when it has the wrong type, so the message can name it and say what
/// it was (`Args::parse` words every error).
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a JSON object with `command` (a string) and optionally `timeout_secs` \
                 (a positive integer), `sandbox` (a boolean), `reason` (a string) and `background` \
                 (a boolean)"
)]
struct RawArgs {
    #[serde(default)]
    command: Option<Given<String>>,
    #[serde(default)]
    timeout_secs: Option<Given<u64>>,
    #[serde(default)]
    sandbox: Option<Given<bool>>,
    #[serde(default)]
    reason: Option<Given<String>>,
    #[serde(default)]
    background: Option<Given<bool>>,
}

/// A field's value: of the expected type, or anything else, as written.
#[derive(Deserialize)]
#[serde(untagged)]
enum Given<T> {
    Valid(T),
    Invalid(Value),
}

/// The validated arguments.
pub(super) struct Args {
    pub command: String,
    pub timeout_secs: Option<u64>,
    /// `false` when the model asks to leave the sandbox.
    pub sandboxed: bool,
    pub reason: Option<String>,
    /// `background: true`: the command keeps running after the call.
    pub background: bool,
}

impl Args {
    pub fn parse(args: &Value, configured: Duration) -> Result<Self, ToolError> {
        let invalid = |message: String| ToolError::InvalidArguments {
            tool: NAME,
            message,
        };
        let raw: RawArgs = serde_json::from_value(args.clone()).map_err(|e| {
            invalid(match e.to_string() {
                unknown if unknown.starts_with("unknown field") => format!(
                    "{}; the accepted fields are `command`, `timeout_secs`, `sandbox`, `reason` \
                     and `background`",
                    unknown.split(", expected").next().unwrap_or(&unknown)
                ),
                other => other,
            })
        })?;
        let command = match raw.command {
            None => {
                return Err(invalid(
                    "`command` is missing; it must be a non-empty string holding the shell \
                     command to run"
                        .to_string(),
                ));
            }
            Some(Given::Valid(command)) => command,
            Some(Given::Invalid(other)) => {
                return Err(invalid(format!(
                    "`command` must be a string holding the shell command to run, not {}",
                    json_kind(&other)
                )));
            }
        };
        if command.trim().is_empty() {
            return Err(invalid(
                "`command` is empty; it must be a non-empty shell command".to_string(),
            ));
        }
        if command.contains('\0') {
            return Err(invalid(
                "`command` contains a NUL character, which a shell command cannot hold".to_string(),
            ));
        }
        if command.len() > MAX_COMMAND_BYTES {
            return Err(invalid(format!(
                "`command` is {} bytes long; at most {MAX_COMMAND_BYTES} bytes are accepted",
                command.len()
            )));
        }
        let timeout_secs = match raw.timeout_secs {
            None => None,
            Some(Given::Valid(secs)) if secs > 0 => Some(secs),
            Some(given) => {
                let value = match given {
                    Given::Valid(secs) => Value::from(secs),
                    Given::Invalid(value) => value,
                };
                return Err(invalid(format!(
                    "`timeout_secs` must be a positive whole number of seconds (it can only \
                     shorten the configured {} s), not {value}",
                    seconds(configured)
                )));
            }
        };
        let sandboxed = match raw.sandbox {
            None => true,
            Some(Given::Valid(on)) => on,
            Some(Given::Invalid(other)) => {
                return Err(invalid(format!(
                    "`sandbox` must be a boolean (false leaves the sandbox), not {}",
                    json_kind(&other)
                )));
            }
        };
        let reason = match raw.reason {
            None => None,
            Some(Given::Valid(reason)) if !reason.trim().is_empty() => Some(reason),
            Some(Given::Valid(_)) => {
                return Err(invalid(
                    "`reason` must be a non-empty string saying why the command needs to leave \
                     the sandbox, not an empty string"
                        .to_string(),
                ));
            }
            Some(Given::Invalid(other)) => {
                return Err(invalid(format!(
                    "`reason` must be a non-empty string saying why the command needs to leave \
                     the sandbox, not {}",
                    json_kind(&other)
                )));
            }
        };
        let background = match raw.background {
            None => false,
            Some(Given::Valid(on)) => on,
            Some(Given::Invalid(other)) => {
                return Err(invalid(format!(
                    "`background` must be a boolean (true leaves the command running and \
                     returns at once), not {}",
                    json_kind(&other)
                )));
            }
        };
        if !sandboxed && reason.is_none() {
            return Err(invalid(
                "`sandbox: false` needs a `reason`: a sentence saying why the command cannot run \
                 in the sandbox, which the user is shown"
                    .to_string(),
            ));
        }
        Ok(Self {
            command,
            timeout_secs,
            sandboxed,
            reason,
            background,
        })
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
