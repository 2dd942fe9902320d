//! A saved session's summary for the lists (`/sessions`, `/resume`): its
//! header and its first prompt, shortened, read line by line without
//! parsing the rest of the file.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::SessionId;
use super::format::{Line, LogEntry, parse_line};
use super::store::SessionSummary;
use crate::model::Item;

/// How many characters of the first prompt a summary keeps.
pub const PROMPT_PREVIEW_CHARS: usize = 60;

/// The summary of one file, or `None` when it is not a readable session.
pub(super) fn summarize(path: &Path, id: SessionId) -> Option<SessionSummary> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = File::from(rustix::fs::open(path, flags, Mode::empty()).ok()?);
    let metadata = file.metadata().ok()?;
    if !metadata.is_file() {
        return None;
    }
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut next_line = |line: &mut Vec<u8>| -> Option<()> {
        line.clear();
        match reader.read_until(b'\n', line) {
            Ok(_) if line.last() == Some(&b'\n') => Some(()),
            _ => None,
        }
    };
    next_line(&mut line)?;
    let header = match parse_line(&line) {
        Ok(Line::Header(header)) if header.id == id => header,
        _ => return None,
    };
    let mut first_prompt = None;
    while next_line(&mut line).is_some() {
        // A preview: whatever does not decode is skipped.
        if let Ok(Line::Entry(LogEntry::Item(Item::User { text }))) = parse_line(&line) {
            first_prompt = Some(shorten(&text));
            break;
        }
    }
    Some(SessionSummary {
        id,
        started: header.started,
        project: header.project,
        model: header.model,
        first_prompt,
        bytes: metadata.len(),
    })
}

fn shorten(text: &str) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if words.chars().count() <= PROMPT_PREVIEW_CHARS {
        return words;
    }
    let mut cut: String = words.chars().take(PROMPT_PREVIEW_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}
