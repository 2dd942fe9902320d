//! How diffs look in the chat: a changed line on its ground across the
//! whole width (removed red, added green), the words that changed between
//! a removed line and its added one on a brighter ground and bold, context
//! and hunks on none; the question dialog grounds its diff the same way.

use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

use crate::checkpoint::diffs::FileDiff;

use super::super::transcript::EntryKind;
use super::super::view::{diff, entry, theme};

const DIFF: &str = "--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,3 @@\n-# Relase notes\n+# Release notes\n \n ## 0.10.0\n";

fn row<'a>(lines: &'a [Line<'static>], starts: &str) -> &'a Line<'static> {
    lines
        .iter()
        .find(|l| l.to_string().trim_start().starts_with(starts))
        .unwrap_or_else(|| panic!("no row starting {starts:?}"))
}

/// The style of the first cell of `word` in `line`.
fn style_at(line: &Line<'static>, word: &str) -> Style {
    let text = line.to_string();
    let at = text.find(word).unwrap();
    let mut seen = 0;
    for span in &line.spans {
        let len = span.content.len();
        if at < seen + len {
            return span.style;
        }
        seen += len;
    }
    panic!("{word:?} not in {text:?}")
}

#[test]
fn changed_lines_are_grounded_across_the_width_and_changed_words_stand_out() {
    let kind = EntryKind::Diff {
        line: "Changed since this session's first prompt: notes.md +1 -1".into(),
        diffs: vec![FileDiff {
            path: "notes.md".into(),
            diff: DIFF.into(),
            note: None,
        }],
    };
    let lines = entry::lines(&kind, 60);
    for (sign, ground, words) in [
        ("+", theme::ADDED_GROUND, theme::ADDED_WORDS),
        ("-", theme::REMOVED_GROUND, theme::REMOVED_WORDS),
    ] {
        let line = row(&lines, &format!("{sign}# Rel"));
        assert_eq!(line.width(), 60, "{sign}: the ground fills the row");
        let last = line.spans.last().unwrap();
        assert_eq!(last.style.bg, Some(ground), "{sign}: {line:?}");
        let changed = if sign == "+" { "Release" } else { "Relase" };
        let emphasised = style_at(line, changed);
        assert_eq!(emphasised.bg, Some(words), "{sign}: {line:?}");
        assert!(emphasised.add_modifier.contains(Modifier::BOLD));
        assert_eq!(style_at(line, "notes").bg, Some(ground), "{sign}: {line:?}");
    }
    let context = row(&lines, "## 0.10.0");
    assert!(
        context.spans.iter().all(|s| s.style.bg.is_none()),
        "{context:?}"
    );
    let hunk = row(&lines, "@@");
    assert!(hunk.spans.iter().all(|s| s.style.bg.is_none()), "{hunk:?}");
}

#[test]
fn unlike_lines_get_their_ground_without_words_and_runs_pair_in_order() {
    let lines = [
        "@@ -1,3 +1,3 @@",
        "-alpha beta gamma",
        "-completely different text here",
        "+alpha BETA gamma",
        "+nothing of the sort at all, no",
        " context",
    ];
    let pieces: Vec<Vec<(Style, String)>> = lines
        .iter()
        .map(|l| vec![(Style::new(), (*l).to_string())])
        .collect();
    let out = diff::grounded(&lines, pieces);
    // alpha/beta pair: BETA alone is emphasised.
    let words: Vec<&str> = out[3]
        .iter()
        .filter(|(s, _)| s.bg == Some(theme::ADDED_WORDS))
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(words, vec!["BETA"]);
    // The second pair shares almost nothing: grounded, no words.
    for i in [2, 4] {
        assert!(
            out[i]
                .iter()
                .all(|(s, _)| s.bg == Some(theme::REMOVED_GROUND)
                    || s.bg == Some(theme::ADDED_GROUND)),
            "{:?}",
            out[i]
        );
    }
    assert!(out[5].iter().all(|(s, _)| s.bg.is_none()));
    assert!(out[0].iter().all(|(s, _)| s.bg.is_none()));
}
