//! What a frame can scroll rather than write again. When rows the screen
//! shows come back higher up in the next frame (an answer streaming at the
//! bottom of the chat pane pushes everything above it up), the terminal is
//! asked to scroll those rows inside a scroll region, and only the rows
//! that are new are written. The screen as shown is moved the same way,
//! and the frame is then drawn as the difference from it, so a scroll
//! guessed wrong costs bytes, never a wrong cell: the rows are found by
//! fingerprints, but what is written is found by comparing the cells.

use ratatui::buffer::{Buffer, Cell, CellDiffOption};
use ratatui::style::Color;

/// A scroll pays when it saves at least this many rows from being written
/// again (its own sequence is about the size of a short row).
const MIN_ROWS_SAVED: usize = 2;

/// Rows `top..bottom` of the screen (0-based, the bottom one excluded)
/// scrolled up by `by`: the top `by` of them leave, `by` blank rows come
/// in at the bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    pub top: u16,
    pub bottom: u16,
    pub by: u16,
}

/// A row's fingerprint: equal rows always have equal ones, unequal rows
/// almost never do.
pub fn fingerprints(buffer: &Buffer, out: &mut Vec<u64>) {
    out.clear();
    let width = usize::from(buffer.area.width).max(1);
    out.extend(buffer.content.chunks(width).map(row_fingerprint));
}

fn row_fingerprint(row: &[Cell]) -> u64 {
    let mut hash = 0;
    // Cells next to each other mostly share a style: it is worked out
    // again only when it changes.
    let mut last = None;
    let mut style = 0;
    for cell in row {
        let looks = (cell.fg, cell.bg, cell.modifier, cell.diff_option);
        if last != Some(looks) {
            style = colour(cell.fg)
                | colour(cell.bg) << 25
                | u64::from(cell.modifier.bits()) << 50
                | u64::from(cell.diff_option != CellDiffOption::None) << 63;
            last = Some(looks);
        }
        // The symbol's first eight bytes and its length (a longer
        // symbol's length takes a step of its own).
        let symbol = cell.symbol().as_bytes();
        let word = symbol
            .iter()
            .take(8)
            .fold(symbol.len() as u64, |word, &byte| {
                word << 8 ^ u64::from(byte)
            });
        if symbol.len() >= 8 {
            hash = mix(hash, symbol.len() as u64);
        }
        hash = mix(mix(hash, word), style);
    }
    hash
}

/// A colour in 25 bits, each colour its own.
fn colour(colour: Color) -> u64 {
    match colour {
        Color::Reset => 0,
        Color::Black => 1,
        Color::Red => 2,
        Color::Green => 3,
        Color::Yellow => 4,
        Color::Blue => 5,
        Color::Magenta => 6,
        Color::Cyan => 7,
        Color::Gray => 8,
        Color::DarkGray => 9,
        Color::LightRed => 10,
        Color::LightGreen => 11,
        Color::LightYellow => 12,
        Color::LightBlue => 13,
        Color::LightMagenta => 14,
        Color::LightCyan => 15,
        Color::White => 16,
        Color::Indexed(i) => 0x100 | u64::from(i),
        Color::Rgb(r, g, b) => 1 << 24 | u64::from(r) << 16 | u64::from(g) << 8 | u64::from(b),
    }
}

/// One step of the hash rustc uses: fingerprints need speed, not
/// resistance to chosen input.
fn mix(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

/// The scroll that saves the most rows between the screen `shown` and the
/// frame `next` (their rows' fingerprints), if one saves enough.
pub fn find(shown: &[u64], next: &[u64]) -> Option<Scroll> {
    let rows = next.len();
    if shown.len() != rows || rows < 2 {
        return None;
    }
    // Rows that already match where they are, counted from the top: a
    // scroll moves them, and they must then be written again.
    let mut in_place = Vec::with_capacity(rows + 1);
    in_place.push(0usize);
    for (a, b) in shown.iter().zip(next) {
        in_place.push(in_place[in_place.len() - 1] + usize::from(a == b));
    }
    let mut best: Option<(usize, Scroll)> = None;
    for by in 1..rows {
        let mut y = 0;
        while y < rows - by {
            if next[y] != shown[y + by] {
                y += 1;
                continue;
            }
            let start = y;
            while y < rows - by && next[y] == shown[y + by] {
                y += 1;
            }
            // Rows start..y of the next frame are rows start+by..y+by
            // now: the region start..y+by scrolled up by `by`.
            let end = y + by;
            let saved = (y - start).saturating_sub(in_place[end] - in_place[start]);
            if saved >= MIN_ROWS_SAVED && best.is_none_or(|(most, _)| saved > most) {
                best = Some((
                    saved,
                    Scroll {
                        top: u16::try_from(start).ok()?,
                        bottom: u16::try_from(end).ok()?,
                        by: u16::try_from(by).ok()?,
                    },
                ));
            }
        }
    }
    best.map(|(_, scroll)| scroll)
}

/// What asks the terminal to make the scroll, `screen_top` being the
/// buffer's first row on the screen: plain attributes (the rows that come
/// in take the current background), the region, the scroll, and the
/// region back to the whole screen. The cursor is left at the top left.
pub fn sequence(scroll: Scroll, screen_top: u16) -> String {
    let top = u32::from(screen_top) + u32::from(scroll.top) + 1;
    let bottom = u32::from(screen_top) + u32::from(scroll.bottom);
    format!("\x1b[m\x1b[{top};{bottom}r\x1b[{}S\x1b[r", scroll.by)
}

/// Moves `buffer`'s rows (and their fingerprints) as the terminal moved
/// its own.
pub fn apply(buffer: &mut Buffer, rows: &mut [u64], scroll: Scroll) {
    let width = usize::from(buffer.area.width);
    let (top, bottom, by) = (
        usize::from(scroll.top),
        usize::from(scroll.bottom),
        usize::from(scroll.by),
    );
    let Some(cells) = buffer.content.get_mut(top * width..bottom * width) else {
        return;
    };
    if by >= bottom - top {
        return;
    }
    cells.rotate_left(by * width);
    let blank_from = cells.len() - by * width;
    for cell in &mut cells[blank_from..] {
        cell.reset();
    }
    let blank = row_fingerprint(&cells[blank_from..blank_from + width]);
    if let Some(rows) = rows.get_mut(top..bottom) {
        rows.rotate_left(by);
        let len = rows.len();
        rows[len - by..].fill(blank);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use ratatui::layout::Rect;

    use super::*;

    fn buffer(lines: &[&str]) -> Buffer {
        let mut buffer = Buffer::empty(Rect::new(0, 0, 6, lines.len() as u16));
        for (y, line) in lines.iter().enumerate() {
            buffer.set_string(0, y as u16, line, ratatui::style::Style::new());
        }
        buffer
    }

    fn rows(buffer: &Buffer) -> Vec<u64> {
        let mut out = Vec::new();
        fingerprints(buffer, &mut out);
        out
    }

    #[test]
    fn rows_pushed_up_by_new_ones_at_the_bottom_are_a_scroll_of_their_band() {
        let shown = buffer(&["title", "a", "b", "c", "d", "input"]);
        let next = buffer(&["title", "c", "d", "e", "f", "input"]);
        let scroll = find(&rows(&shown), &rows(&next)).unwrap();
        assert_eq!(
            scroll,
            Scroll {
                top: 1,
                bottom: 5,
                by: 2
            }
        );
        let mut moved = shown.clone();
        let mut moved_rows = rows(&shown);
        apply(&mut moved, &mut moved_rows, scroll);
        assert_eq!(moved, buffer(&["title", "c", "d", "", "", "input"]));
        assert_eq!(moved_rows, rows(&moved));
        assert_eq!(sequence(scroll, 0), "\x1b[m\x1b[2;5r\x1b[2S\x1b[r");
    }

    #[test]
    fn rows_that_differ_only_past_a_symbol_s_eighth_byte_differ() {
        // A family emoji and the same with one more person joined on share
        // their first eight bytes.
        let three = "👨\u{200d}👩\u{200d}👧";
        let four = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
        let mut a = Buffer::empty(Rect::new(0, 0, 4, 1));
        let mut b = a.clone();
        a[(0, 0)].set_symbol(three);
        b[(0, 0)].set_symbol(four);
        assert_eq!(&three.as_bytes()[..8], &four.as_bytes()[..8]);
        assert_ne!(rows(&a), rows(&b));
        assert_eq!(rows(&a), rows(&a.clone()));
    }

    #[test]
    fn nothing_moved_or_too_little_saved_is_no_scroll() {
        let shown = buffer(&["a", "b", "c", "d"]);
        assert_eq!(find(&rows(&shown), &rows(&shown)), None);
        // One row saved is not worth a scroll.
        let next = buffer(&["b", "x", "y", "z"]);
        assert_eq!(find(&rows(&shown), &rows(&next)), None);
        // Blank rows match blank rows anywhere: they are already in place.
        let blank = buffer(&["", "", "", ""]);
        assert_eq!(find(&rows(&blank), &rows(&blank)), None);
        // Screens of different heights (a resize) never scroll.
        assert_eq!(find(&rows(&shown), &rows(&buffer(&["a", "b"]))), None);
    }
}
