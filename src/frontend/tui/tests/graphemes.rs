//! Grapheme clusters on the chat pane: a flag, a skin-toned emoji and a
//! joined family are each one cluster of two cells. Wrapping never splits
//! one or loses its modifiers, and scrolling (drawn frame after frame on the
//! same terminal, as the real one is) leaves no stray cell behind.

use insta::assert_snapshot;

use crate::agent::AgentEvent;

use ratatui::buffer::Buffer;

use super::*;

const FLAG: &str = "🇫🇷";
const THUMB: &str = "👍🏽";
const FAMILY: &str = "👨\u{200d}👩\u{200d}👧\u{200d}👦";

fn emoji_app() -> App {
    let mut app = app();
    start_turn(&mut app, "Show me emoji", 1);
    let mut text = String::new();
    for i in 0..12 {
        text.push_str(&format!(
            "Row {i}: flag {FLAG} thumb {THUMB} family {FAMILY} and {FAMILY}{THUMB}{FLAG} joined.\n\n"
        ));
    }
    agent(&mut app, AgentEvent::AssistantDelta(text));
    agent(&mut app, AgentEvent::AssistantDone);
    app
}

/// The clusters a screen row holds, in order, from the buffer's cells.
fn row_symbols(buffer: &ratatui::buffer::Buffer, y: u16) -> String {
    (0..buffer.area.width)
        .map(|x| buffer[(x, y)].symbol())
        .collect()
}

#[test]
fn clusters_keep_their_modifiers_and_take_two_cells() {
    let app = emoji_app();
    let terminal = draw(&app, 34, 24);
    let buffer = terminal.backend().buffer();
    let screen = screen(buffer);
    assert!(screen.contains(FLAG) && screen.contains(THUMB) && screen.contains(FAMILY));
    for y in 0..buffer.area.height {
        let row = row_symbols(buffer, y);
        // A modifier or a joiner never stands alone at a row's start.
        assert!(
            !row.starts_with('\u{1f3fd}') && !row.starts_with('\u{200d}'),
            "{row}"
        );
        // Each cluster is one cell followed by one blank (the second cell).
        for x in 0..buffer.area.width.saturating_sub(1) {
            let symbol = buffer[(x, y)].symbol();
            if [FLAG, THUMB, FAMILY].contains(&symbol) {
                assert_eq!(buffer[(x + 1, y)].symbol(), " ", "row {y}: {row}");
            }
        }
    }
    assert_snapshot!(screen);
}

/// Applies the cells ratatui sends for one frame to `screen` the way a
/// terminal does with two-column glyphs: a wide glyph covers the cell after
/// it, and writing over either half of a wide glyph erases the whole glyph.
fn apply(screen: &mut Buffer, updates: &[(u16, u16, &ratatui::buffer::Cell)]) {
    use ratatui::buffer::CellWidth;
    let width = screen.area.width;
    for &(x, y, cell) in updates {
        if screen[(x, y)].symbol().cell_width() > 1 && x + 1 < width {
            screen[(x + 1, y)].reset();
        }
        if x > 0 && screen[(x - 1, y)].symbol().cell_width() > 1 {
            screen[(x - 1, y)].reset();
        }
        screen[(x, y)] = cell.clone();
        if cell.symbol().cell_width() > 1 && x + 1 < width {
            screen[(x + 1, y)].reset();
        }
    }
}

#[test]
fn scrolling_leaves_no_stray_cells() {
    let mut app = emoji_app();
    let first = draw(&app, 34, 24).backend().buffer().clone();
    // What the terminal shows, updated frame by frame with ratatui's diff.
    let mut shown = first.clone();
    let mut previous = first;
    for msg in [
        Msg::ScrollUp(3),
        Msg::ScrollUp(1),
        Msg::PageUp,
        Msg::ScrollDown(1),
        Msg::ScrollDown(2),
        Msg::PageDown,
        Msg::ScrollBottom,
    ] {
        update(&mut app, msg);
        let next = draw(&app, 34, 24).backend().buffer().clone();
        apply(&mut shown, &previous.diff(&next));
        // Any cell that differs from the frame drawn whole was left over.
        assert_eq!(screen(&shown), screen(&next));
        assert_eq!(shown, next);
        previous = next;
    }
}
