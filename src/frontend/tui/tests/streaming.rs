//! A streamed answer is laid out incrementally: the rows of its finished
//! blocks are kept and only the growing tail is parsed, highlighted and
//! wrapped again, yet after every piece of text the rows are exactly those
//! of the whole answer laid out at once.

use ratatui::text::Line;

use super::super::transcript::{EntryKind, Transcript};
use super::super::view::entry;

/// Markdown that tries the joins between blocks: a setext heading, a rule
/// that turns out to start emphasis, a loose list, numbered lists split by
/// a paragraph, quotes, a table, fences with blank lines inside, indented
/// code, an HTML comment across a blank line, a whitespace-only blank line,
/// tabs, and a reference link defined after its use.
const TRICKY: &str = "# Title\n\nA paragraph\nthat goes on.\nSetext\n---\n\nBefore\n***bold*** after\n\n\
- one\n\n- two\n\n  still two\n\n1. first\n2. second\n\nbetween\n\n3. third\n\n\
> quoted\nlazy line\n\n> another quote\n\n| a | b |\n|---|--:|\n| 1 | 22 |\n\n\
```rust\nfn main() {\n\n\tlet x = 1;\n}\n```\n\n    indented code\n\n    more of it\n\n\
<!-- a comment\n\nstill the comment -->\n\n   \n\ntext with a [link][r] in it\n\n\
[r]: https://example.com\n\n**done**\n";

/// The rows of the whole answer `text` laid out at once.
fn whole(text: &str, width: u16) -> Vec<Line<'static>> {
    entry::lines(
        &EntryKind::Assistant {
            text: text.to_string(),
            streaming: false,
        },
        width,
    )
}

fn streamed_rows(transcript: &Transcript, width: u16) -> Vec<Line<'static>> {
    let last = transcript.len() - 1;
    transcript
        .with_lines(last, width, <[Line]>::to_vec)
        .unwrap_or_default()
}

#[test]
fn every_prefix_streamed_a_character_at_a_time_lays_out_as_the_whole() {
    let mut transcript = Transcript::default();
    transcript.push(EntryKind::User("write".into()));
    let mut sent = String::new();
    for (i, c) in TRICKY.char_indices() {
        let piece = c.to_string();
        transcript.append_assistant(&piece);
        sent.push(c);
        // Narrow enough that long lines wrap.
        let width = if i % 97 == 0 { 23 } else { 30 };
        assert_eq!(
            streamed_rows(&transcript, width),
            whole(&sent, width),
            "after {:?}",
            &sent[sent.len().saturating_sub(40)..]
        );
    }
    // Ending the answer lays it out whole, the same rows again.
    transcript.finish_assistant();
    assert_eq!(streamed_rows(&transcript, 30), whole(TRICKY, 30));
}

#[test]
fn streaming_into_a_long_answer_lays_out_only_the_tail() {
    let block = "Some prose that wraps over a line or two at this width, \
                 with `code` and **bold** words in it.\n\n\
                 ```python\ndef f(rows):\n    return sum(rows)\n```\n\n\
                 - an item\n- another item\n\n";
    let mut transcript = Transcript::default();
    transcript.push(EntryKind::User("write".into()));
    let mut sent = String::new();
    let mut most = 0;
    for round in 0..130 {
        for word in block.split_inclusive(' ') {
            transcript.append_assistant(word);
            sent.push_str(word);
            let before = transcript.streamed_bytes();
            let rows = streamed_rows(&transcript, 60);
            most = most.max(transcript.streamed_bytes() - before);
            if round % 40 == 0 {
                assert_eq!(rows, whole(&sent, 60));
            }
        }
    }
    assert!(sent.len() > 20 * 1024);
    // Each frame re-lays out at most the last block or two, however long
    // the answer has grown.
    assert!(
        most < 2 * block.len(),
        "a frame laid out {most} bytes of a {} byte answer",
        sent.len()
    );
    // A frame with nothing new lays out nothing.
    let before = transcript.streamed_bytes();
    streamed_rows(&transcript, 60);
    assert_eq!(transcript.streamed_bytes(), before);
    // Another width lays out the whole answer once, then only the tail again.
    assert_eq!(streamed_rows(&transcript, 41), whole(&sent, 41));
    assert!(transcript.streamed_bytes() - before >= sent.len());
    transcript.append_assistant("more ");
    sent.push_str("more ");
    let before = transcript.streamed_bytes();
    assert_eq!(streamed_rows(&transcript, 41), whole(&sent, 41));
    assert!(transcript.streamed_bytes() - before < 2 * block.len());
}
