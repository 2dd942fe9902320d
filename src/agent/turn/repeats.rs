//! Calls a turn repeats: the same tool with the same arguments. A repeat
//! goes through the decision and runs as any other call; when its result is
//! the same as the earlier one's, the model gets one line saying so instead
//! of the text again, and the third identical result ends the turn. A call
//! the decision or the user refused counts the same way (its reason is
//! sent each time), so a model asking again and again for what it was
//! denied ends its turn. Pure: no I/O, no clock.

use crate::model::{ResultStatus, ToolCall};

/// The identical result that ends the turn (the third).
pub const IDENTICAL_LIMIT: u32 = 3;

/// What the turn's calls returned, by tool and arguments.
#[derive(Debug, Default)]
pub struct Repeats {
    seen: Vec<Seen>,
}

#[derive(Debug)]
struct Seen {
    name: String,
    arguments: String,
    status: ResultStatus,
    output: String,
    /// The call (1-based, in the turn) whose result this is.
    number: u32,
    /// How many calls returned it.
    times: u32,
}

/// How a result compares with the turn's earlier ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Not seen before (or changed since): sent as it is.
    New,
    /// The same as call `number`'s: sent as one line.
    Same { number: u32 },
    /// The same as call `number`'s for the third time: the turn ends.
    Again { number: u32 },
}

impl Repeats {
    /// Compares the result of `call` (call `number` of the turn) with the
    /// earlier results of the same tool and arguments, and remembers it.
    pub fn result(
        &mut self,
        call: &ToolCall,
        number: u32,
        status: ResultStatus,
        output: &str,
    ) -> Repeat {
        let arguments = canonical(&call.arguments);
        let earlier = self
            .seen
            .iter_mut()
            .find(|seen| seen.name == call.name && seen.arguments == arguments);
        match earlier {
            Some(seen) if seen.status == status && seen.output == output => {
                seen.times += 1;
                if seen.times >= IDENTICAL_LIMIT {
                    Repeat::Again {
                        number: seen.number,
                    }
                } else {
                    Repeat::Same {
                        number: seen.number,
                    }
                }
            }
            Some(seen) => {
                // A changed result counts again from this call.
                seen.status = status;
                seen.output = output.to_string();
                seen.number = number;
                seen.times = 1;
                Repeat::New
            }
            None => {
                self.seen.push(Seen {
                    name: call.name.clone(),
                    arguments,
                    status,
                    output: output.to_string(),
                    number,
                    times: 1,
                });
                Repeat::New
            }
        }
    }
}

/// The result text that stands for an unchanged one.
pub fn same_as(number: u32) -> String {
    format!("Same as call {number}: the result has not changed.")
}

/// The arguments as one JSON text (spacing aside), or as given when they
/// are not JSON.
fn canonical(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .map(|value| value.to_string())
        .unwrap_or_else(|_| arguments.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn the_second_identical_result_is_short_and_the_third_ends() {
        let mut repeats = Repeats::default();
        let read = call("read_file", r#"{"path": "a.md"}"#);
        let done = ResultStatus::Completed;
        assert_eq!(repeats.result(&read, 1, done, "text"), Repeat::New);
        let other = call("read_file", r#"{"path":"b.md"}"#);
        assert_eq!(repeats.result(&other, 2, done, "text"), Repeat::New);
        let spaced = call("read_file", r#"{ "path":"a.md" }"#);
        assert_eq!(
            repeats.result(&spaced, 3, done, "text"),
            Repeat::Same { number: 1 }
        );
        assert_eq!(
            repeats.result(&read, 4, done, "text"),
            Repeat::Again { number: 1 }
        );
    }

    #[test]
    fn a_changed_result_counts_again() {
        let mut repeats = Repeats::default();
        let bash = call("bash", r#"{"command":"make"}"#);
        let failed = ResultStatus::Error;
        assert_eq!(repeats.result(&bash, 1, failed, "1 error"), Repeat::New);
        assert_eq!(repeats.result(&bash, 2, failed, "2 errors"), Repeat::New);
        assert_eq!(
            repeats.result(&bash, 3, failed, "2 errors"),
            Repeat::Same { number: 2 }
        );
        assert_eq!(
            repeats.result(&bash, 4, ResultStatus::Completed, "2 errors"),
            Repeat::New
        );
        assert_eq!(same_as(2), "Same as call 2: the result has not changed.");
    }
}
