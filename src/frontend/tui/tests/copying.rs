//! Code copied from the screen is the code: with mouse capture off, the
//! rows a person selects in the terminal hold a code block's lines from the
//! left edge with their indentation, no gutter or margin in them, tabs
//! expanded to the same stops, and a line too long for the screen cut into
//! rows that are the line again when joined. `/copy` sends the answer's
//! text byte for byte.

use crossterm::event::KeyCode;

use crate::agent::AgentEvent;

use super::super::msg::Action;
use super::{agent, app, key, press, shot, start_turn, type_text};

const ANSWER: &str = "Try this:\n\n```python\ndef total(rows):\n    out = 0\n    for row in rows:\n\
\t\tout += sum(int(x) for x in row.split(',') if x.strip() and not x.startswith('#'))\n    \
return out\n```\n\nThat is all.";

fn answered() -> super::super::app::App {
    let mut app = app();
    start_turn(&mut app, "sum the rows", 1);
    for piece in ANSWER.split_inclusive(' ') {
        agent(&mut app, AgentEvent::AssistantDelta(piece.into()));
    }
    app
}

/// The rows between the code block's header and the end of the block.
fn code_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip_while(|row| !row.starts_with("─ python ─"))
        .skip(1)
        .take_while(|row| !row.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_code_block_shows_as_its_own_text_from_the_left_edge() {
    let mut app = answered();
    for finished in [false, true] {
        if finished {
            agent(&mut app, AgentEvent::AssistantDone);
        }
        let screen = shot(&app, 51, 24);
        // Prose keeps its margin; the code has none.
        assert!(screen.contains("\n Try this:\n"), "{screen}");
        let rows = code_rows(&screen);
        assert_eq!(
            rows,
            [
                "def total(rows):",
                "    out = 0",
                "    for row in rows:",
                // Two tabs, expanded to 4-column stops; the long line is
                // cut where the row ends, nothing added or dropped.
                "        out += sum(int(x) for x in row.split(',') i",
                "f x.strip() and not x.startswith('#'))",
                "    return out",
            ],
            "{screen}"
        );
        let joined = format!("{}{}", rows[3], rows[4]);
        assert_eq!(
            joined,
            ANSWER
                .lines()
                .find(|line| line.starts_with('\t'))
                .unwrap()
                .replace('\t', "    ")
        );
    }
}

#[test]
fn copy_sends_the_answer_with_its_indentation() {
    let mut app = answered();
    agent(&mut app, AgentEvent::AssistantDone);
    type_text(&mut app, "/copy");
    let actions = press(&mut app, key(KeyCode::Enter));
    let [Action::Copy(text)] = actions.as_slice() else {
        panic!("{actions:?}");
    };
    assert_eq!(text, ANSWER);
    let mut out = Vec::new();
    super::super::term::copy_to_clipboard(&mut out, text).unwrap();
    let sent = String::from_utf8(out).unwrap();
    let encoded = sent
        .strip_prefix("\x1b]52;c;")
        .and_then(|rest| rest.strip_suffix('\x07'))
        .unwrap();
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    assert_eq!(decoded, ANSWER.as_bytes());
    assert!(ANSWER.contains("\n    for row in rows:\n\t\tout"));
}

#[test]
fn copy_removes_control_characters_and_says_how_many() {
    let mut app = app();
    start_turn(&mut app, "how do I test", 1);
    let answer = "Run `make test`\x1b[201~; touch FLAG\n\x1b]0;title\x07\tdone\u{9b}2J\x7f";
    agent(&mut app, AgentEvent::AssistantDelta(answer.into()));
    agent(&mut app, AgentEvent::AssistantDone);
    type_text(&mut app, "/copy");
    let actions = press(&mut app, key(KeyCode::Enter));
    let [Action::Copy(text)] = actions.as_slice() else {
        panic!("{actions:?}");
    };
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{text:?}"
    );
    assert_eq!(text, "Run `make test`[201~; touch FLAG\n]0;title\tdone2J");
    let screen = shot(&app, 140, 30);
    assert!(screen.contains("5 control characters removed"), "{screen}");
}
