//! The terminal: raw mode, the alternate screen, mouse capture and
//! bracketed paste on the way in, and all of it undone on the way out, on
//! every path: a normal return (the guard's `Drop`), an error, and a panic
//! (a hook that restores before the panic message prints). Signals are the
//! loop's business; it returns, and the guard restores. A frame goes out
//! whole: buffered, and inside a synchronized update, so the terminal
//! never shows half of one.

use std::io::{self, Stdout, Write};
use std::mem::ManuallyDrop;
use std::sync::Once;

use crossterm::cursor::{Hide, Show};
use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange,
};
use crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode,
};
use crossterm::{execute, queue};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

use super::scroll;

pub type Tui = Terminal<CrosstermBackend<FrameWriter<Stdout>>>;

/// What the screen's writer makes room for at first: a frame of a large
/// terminal (it grows past it if needed).
const FRAME_BYTES: usize = 1 << 16;

/// The terminal in full-screen mode; dropping it restores the terminal.
pub struct TerminalGuard {
    /// Never dropped (see the guard's `Drop`).
    pub terminal: ManuallyDrop<Tui>,
}

static PANIC_HOOK: Once = Once::new();

/// Puts the terminal into full-screen mode; `mouse` takes the mouse's
/// buttons and wheel.
pub fn enter(mouse: bool) -> io::Result<TerminalGuard> {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
    enable_raw_mode()?;
    let setup = execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange
    )
    .and_then(|()| set_mouse(&mut io::stdout(), mouse))
    .and_then(|()| {
        Terminal::with_options(
            CrosstermBackend::new(FrameWriter::new(io::stdout())),
            TerminalOptions {
                viewport: Viewport::Fixed(screen()?),
            },
        )
    });
    match setup {
        Ok(terminal) => Ok(TerminalGuard {
            terminal: ManuallyDrop::new(terminal),
        }),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// The whole screen, as the terminal says it is. crossterm opens
/// `/dev/tty` to ask, so it is asked at start, when the terminal says it
/// was resized, and when the person asks for a redraw: never per frame
/// (ratatui's full-screen viewport asks before every frame, an open and a
/// close of the terminal device 25 times a second while an answer streams).
fn screen() -> io::Result<Rect> {
    let (width, height) = crossterm::terminal::size()?;
    Ok(Rect::new(0, 0, width, height))
}

/// Takes the terminal's size again and draws the next frame whole: the
/// terminal may have cut or reflowed what it showed even when the size
/// came back to the one last drawn (shrunk and grown again before mino
/// heard of it).
pub fn follow_size(terminal: &mut Tui) -> io::Result<()> {
    resize(terminal, screen()?)
}

/// Clears the screen and makes it `area`: the next frame is drawn whole.
fn resize<W: Write>(
    terminal: &mut Terminal<CrosstermBackend<FrameWriter<W>>>,
    area: Rect,
) -> io::Result<()> {
    terminal.resize(area)?;
    terminal.backend_mut().writer_mut().shown = Shown::default();
    Ok(())
}

/// Draws one frame inside a synchronized update: a terminal that knows
/// the update shows the frame at once, one that does not ignores it. The
/// frame goes out in one write. It is written as the difference from the
/// screen as shown, which a scroll moves first when rows of the screen
/// come back higher up (`scroll`): an answer streaming at the bottom of
/// the chat writes its new rows, not the whole pane again. The terminal's
/// cursor is never shown (the input draws its own).
pub fn draw<W: Write>(
    terminal: &mut Terminal<CrosstermBackend<FrameWriter<W>>>,
    render: impl FnOnce(&mut ratatui::Frame),
) -> io::Result<()> {
    render(&mut terminal.get_frame());
    let next = std::mem::take(terminal.current_buffer_mut());
    let mut shown = std::mem::take(&mut terminal.backend_mut().writer_mut().shown);
    let fresh = shown.buffer.area != next.area;
    if fresh {
        // The first frame, or one after a resize (which cleared the screen).
        shown.buffer = Buffer::empty(next.area);
        scroll::fingerprints(&shown.buffer, &mut shown.rows);
    }
    let written = present(terminal.backend_mut(), &mut shown, &next);
    // The frame is what the screen shows now; the buffer it replaces,
    // cleared, is where the next frame is drawn.
    let mut canvas = std::mem::replace(&mut shown.buffer, next);
    canvas.reset();
    *terminal.current_buffer_mut() = canvas;
    if fresh {
        // ratatui's own record of the screen is not used: its memory goes.
        terminal.swap_buffers();
        *terminal.current_buffer_mut() = Buffer::default();
        terminal.swap_buffers();
    }
    let writer = terminal.backend_mut().writer_mut();
    writer.shown = shown;
    if written.is_err() {
        writer.waiting.clear();
    }
    written?;
    Write::flush(terminal.backend_mut())
}

/// Queues the frame `next` over the screen `shown` (of the same size),
/// which it updates.
fn present<W: Write>(
    backend: &mut CrosstermBackend<FrameWriter<W>>,
    shown: &mut Shown,
    next: &Buffer,
) -> io::Result<()> {
    queue!(backend, BeginSynchronizedUpdate)?;
    scroll::fingerprints(next, &mut shown.next_rows);
    if let Some(found) = scroll::find(&shown.rows, &shown.next_rows) {
        backend
            .writer_mut()
            .write_all(scroll::sequence(found, next.area.y).as_bytes())?;
        scroll::apply(&mut shown.buffer, &mut shown.rows, found);
    }
    backend.draw(shown.buffer.diff_iter(next))?;
    std::mem::swap(&mut shown.rows, &mut shown.next_rows);
    // Queued, not asked of the backend, which would flush half a frame.
    queue!(backend, Hide, EndSynchronizedUpdate)
}

/// The screen as the terminal shows it: the last frame drawn, and its
/// rows' fingerprints.
#[derive(Default)]
pub struct Shown {
    buffer: Buffer,
    rows: Vec<u64>,
    /// The next frame's fingerprints (kept to reuse the memory).
    next_rows: Vec<u64>,
}

/// Mouse reports for buttons and the wheel only (SGR encoding). Unlike
/// crossterm's `EnableMouseCapture` this asks for no motion events, so
/// moving the mouse does not wake the loop.
/// Off, the terminal gets the mouse back (its own selection works).
pub fn set_mouse(out: &mut impl Write, on: bool) -> io::Result<()> {
    if on {
        out.write_all(b"\x1b[?1000h\x1b[?1006h")?;
    } else {
        out.write_all(b"\x1b[?1000l\x1b[?1006l")?;
    }
    out.flush()
}

/// Writes escape sequences (the title, the bell) as they are.
pub fn write_sequence(out: &mut impl Write, sequence: &str) -> io::Result<()> {
    out.write_all(sequence.as_bytes())?;
    out.flush()
}

/// Leaves full-screen mode. Safe to call more than once, and on a terminal
/// that has gone away (errors are ignored: there is nowhere to report them).
pub fn restore() {
    let _ = disable_raw_mode();
    let mut out = io::stdout();
    let _ = execute!(
        out,
        // A frame cut short (a panic while drawing) must not leave the
        // terminal holding its screen.
        EndSynchronizedUpdate,
        DisableBracketedPaste,
        DisableFocusChange,
        DisableMouseCapture,
        LeaveAlternateScreen,
        Show
    );
    let _ = out.flush();
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
        // ratatui's own drop only shows the cursor, which `restore` did;
        // on a terminal that hung up (its pane closed while a tracer held
        // the hangup signal) it would print the failure to a closed stderr
        // and panic. So the terminal is never dropped: the guard lives for
        // the whole run and the process ends right after.
    }
}

/// The screen's writer: everything waits in memory until a flush, which
/// writes it to the terminal in one go. Unlike `BufWriter` it never writes
/// when dropped: what is still waiting then is a frame cut short (a panic
/// while drawing), which would land on the person's own screen after
/// `restore`, inside a synchronized update nobody ends.
pub struct FrameWriter<W: Write> {
    waiting: Vec<u8>,
    out: W,
    /// The screen as shown, for the next frame's difference.
    shown: Shown,
}

impl<W: Write> FrameWriter<W> {
    fn new(out: W) -> Self {
        Self {
            waiting: Vec::with_capacity(FRAME_BYTES),
            out,
            shown: Shown::default(),
        }
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.waiting.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let written = self
            .out
            .write_all(&self.waiting)
            .and_then(|()| self.out.flush());
        self.waiting.clear();
        written
    }
}

/// Writes `text` to `path`, created or replaced, 0600, never through a
/// link.
pub fn copy_to_file(path: &std::path::Path, text: &str) -> io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(text.as_bytes())?;
    file.sync_data()
}

/// Writes `text` to the clipboard with OSC 52.
pub fn copy_to_clipboard(out: &mut impl Write, text: &str) -> io::Result<()> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    /// A terminal that keeps each write it was sent.
    #[derive(Clone, Default)]
    struct Sent(Rc<RefCell<Vec<Vec<u8>>>>);

    impl Sent {
        /// Everything sent, in order.
        fn all(&self) -> Vec<u8> {
            self.0.borrow().concat()
        }
    }

    impl Write for Sent {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().push(bytes.to_vec());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_frame_goes_out_whole_at_its_flush_and_a_cut_short_one_never() {
        let sent = Sent::default();
        let mut writer = FrameWriter::new(sent.clone());
        writer.write_all(b"\x1b[?2026hframe one").unwrap();
        writer.write_all(b"\x1b[?2026l").unwrap();
        assert!(sent.all().is_empty(), "nothing before the flush");
        writer.flush().unwrap();
        assert_eq!(sent.all(), b"\x1b[?2026hframe one\x1b[?2026l");
        // A frame cut short by a panic: dropped, never written.
        writer.write_all(b"\x1b[?2026hhalf a fr").unwrap();
        drop(writer);
        assert_eq!(sent.all(), b"\x1b[?2026hframe one\x1b[?2026l");
    }

    #[test]
    fn each_frame_is_one_write_from_the_updates_start_to_its_end() {
        let sent = Sent::default();
        let mut terminal = terminal(&sent, 20, 3);
        for text in ["first frame", "second frame"] {
            draw(&mut terminal, |frame| {
                frame.render_widget(text, frame.area());
            })
            .unwrap();
        }
        let writes = sent.0.borrow();
        assert_eq!(writes.len(), 2, "one write per frame");
        for (write, text) in writes.iter().zip(["first", "second"]) {
            let write = String::from_utf8_lossy(write);
            assert!(write.starts_with("\x1b[?2026h"), "{write:?}");
            assert!(write.ends_with("\x1b[?2026l"), "{write:?}");
            assert!(write.contains(text), "{write:?}");
        }
    }

    /// A `width` × `height` screen whose writes go to `sent`.
    fn terminal(
        sent: &Sent,
        width: u16,
        height: u16,
    ) -> Terminal<CrosstermBackend<FrameWriter<Sent>>> {
        Terminal::with_options(
            CrosstermBackend::new(FrameWriter::new(sent.clone())),
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
            },
        )
        .unwrap()
    }

    /// A terminal emulator of `width` × `height`.
    fn emulator(width: u16, height: u16) -> vt100::Parser {
        vt100::Parser::new(
            std::num::NonZeroU16::new(height).unwrap(),
            std::num::NonZeroU16::new(width).unwrap(),
            0,
        )
    }

    /// The screen a real terminal emulator shows after `bytes`, compared
    /// with the frame: every cell's text, colours and boldness.
    fn assert_shows(parser: &mut vt100::Parser, bytes: &[u8], frame: &Buffer, step: usize) {
        use ratatui::style::{Color, Modifier};
        use unicode_width::UnicodeWidthStr;
        parser.process(bytes);
        let screen = parser.screen();
        let colour = |c: Color| match c {
            Color::Reset => vt100::Color::Default,
            Color::Indexed(i) => vt100::Color::Idx(i),
            Color::Yellow => vt100::Color::Idx(3),
            Color::Rgb(r, g, b) => vt100::Color::Rgb(r, g, b),
            other => panic!("a colour the test does not use: {other:?}"),
        };
        for y in 0..frame.area.height {
            for x in 0..frame.area.width {
                let got = screen.cell(y, x).unwrap();
                // The right half of a wide character: the terminal keeps
                // the character's colours there, ratatui a blank cell.
                if got.is_wide_continuation() {
                    assert_eq!(frame[(x - 1, y)].symbol().width(), 2, "({x}, {y})");
                    continue;
                }
                let want = &frame[(x, y)];
                let text = if got.contents().is_empty() {
                    " "
                } else {
                    got.contents()
                };
                assert_eq!(text, want.symbol(), "frame {step}, cell ({x}, {y})");
                assert_eq!(got.fgcolor(), colour(want.fg), "frame {step}, ({x}, {y})");
                assert_eq!(got.bgcolor(), colour(want.bg), "frame {step}, ({x}, {y})");
                assert_eq!(got.bold(), want.modifier.contains(Modifier::BOLD));
            }
        }
    }

    #[test]
    fn a_streamed_answer_scrolls_the_pane_and_the_screen_stays_exactly_the_frame() {
        use ratatui::style::{Color, Style, Stylize};
        use ratatui::text::Line;
        use ratatui::widgets::Paragraph;
        let (width, height) = (30u16, 12u16);
        let sent = Sent::default();
        let mut terminal = terminal(&sent, width, height);
        let mut parser = emulator(width, height);
        let mut answer = String::new();
        let mut scrolled = 0;
        for step in 0..120 {
            // Wide characters too: a row moves whole, wide ones with it.
            let word = match step % 5 {
                1 => "界",
                3 => "🙂x",
                _ => "",
            };
            answer.push_str(&format!("w{step}{word} "));
            if step % 7 == 6 {
                answer.push('\n');
            }
            let lines: Vec<Line> = answer
                .lines()
                .enumerate()
                .map(|(i, text)| {
                    let style = match i % 3 {
                        0 => Style::new().fg(Color::Indexed(2)),
                        1 => Style::new().bg(Color::Rgb(10, 20, 30)).bold(),
                        _ => Style::new(),
                    };
                    Line::styled(text.to_string(), style)
                })
                .collect();
            let before = sent.0.borrow().len();
            let mut frame_buffer = Buffer::empty(Rect::new(0, 0, width, height));
            draw(&mut terminal, |frame| {
                let area = frame.area();
                frame.render_widget("header".reversed(), Rect::new(0, 0, width, 1));
                // The pane, bottom-aligned as the chat follows its end.
                let pane = Rect::new(0, 1, width, area.height - 2);
                let shown = lines.len().saturating_sub(usize::from(pane.height));
                let visible: Vec<Line> = lines[shown..].to_vec();
                frame.render_widget(Paragraph::new(visible), pane);
                frame.render_widget(
                    format!("status {step}").yellow(),
                    Rect::new(0, area.height - 1, width, 1),
                );
                frame_buffer = frame.buffer_mut().clone();
            })
            .unwrap();
            let writes = sent.0.borrow();
            assert_eq!(writes.len(), before + 1, "one write per frame");
            let write = writes.last().unwrap().clone();
            drop(writes);
            if String::from_utf8_lossy(&write).contains("S\x1b[r") {
                scrolled += 1;
                assert!(
                    write.len() < 400,
                    "frame {step}: a scroll writes the new rows only ({} bytes)",
                    write.len()
                );
            }
            assert_shows(&mut parser, &write, &frame_buffer, step);
        }
        // 18 lines through a pane of 10 rows: each line past the tenth
        // scrolls it.
        assert_eq!(scrolled, 8, "the pane scrolled {scrolled} times");
    }

    #[test]
    fn after_a_resize_the_screen_is_exactly_the_frame_again() {
        use ratatui::widgets::Paragraph;
        let sent = Sent::default();
        let mut terminal = terminal(&sent, 20, 8);
        let mut parser = emulator(20, 8);
        let text = |n: usize| -> String { (0..n).map(|i| format!("line {i}\n")).collect() };
        let mut step = 0;
        let mut frame_of =
            |terminal: &mut Terminal<_>, parser: &mut vt100::Parser, lines: usize| {
                let before = sent.all().len();
                let mut drawn = Buffer::default();
                draw(terminal, |frame| {
                    let area = frame.area();
                    let all = text(lines);
                    let skip = lines.saturating_sub(usize::from(area.height));
                    let shown: String = all.lines().skip(skip).map(|l| format!("{l}\n")).collect();
                    frame.render_widget(Paragraph::new(shown), area);
                    drawn = frame.buffer_mut().clone();
                })
                .unwrap();
                assert_shows(parser, &sent.all()[before..], &drawn, step);
                step += 1;
            };
        for lines in 1..12 {
            frame_of(&mut terminal, &mut parser, lines);
        }
        // The terminal shrinks: it clears and the frames go on at the new size.
        let before = sent.all().len();
        resize(&mut terminal, Rect::new(0, 0, 16, 5)).unwrap();
        parser.process(&sent.all()[before..]);
        parser.screen_mut().set_size(
            std::num::NonZeroU16::new(5).unwrap(),
            std::num::NonZeroU16::new(16).unwrap(),
        );
        for lines in 12..20 {
            frame_of(&mut terminal, &mut parser, lines);
        }
    }

    /// Frames made to fool the scroll: rows from a handful of texts, so
    /// that many rows look alike, blank ones among them, shifted by any
    /// amount, restyled, or changed at random.
    #[test]
    fn frames_of_rows_that_look_alike_still_show_exactly() {
        use ratatui::style::{Color, Style};
        let (width, height) = (12u16, 10u16);
        let sent = Sent::default();
        let mut terminal = terminal(&sent, width, height);
        let mut parser = emulator(width, height);
        // Narrow characters only: what colours a terminal leaves in the
        // half of a wide one that a narrow one overwrites is ratatui's
        // diff's business, scroll or not (the streamed test has wide ones).
        let texts = ["", "a", "ab", "b", "a  b", "same", "same", "     x"];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut random = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut rows: Vec<(usize, u8)> = (0..usize::from(height)).map(|_| (0, 0)).collect();
        let mut scrolls = 0;
        for step in 0..400 {
            match random(4) {
                // Up by some rows inside a band, new rows at its bottom.
                0 | 1 => {
                    let top = random(rows.len() - 1);
                    let bottom = top + 1 + random(rows.len() - top - 1);
                    let by = 1 + random(bottom - top);
                    rows[top..=bottom].rotate_left(by.min(bottom - top));
                    for row in &mut rows[bottom + 1 - by.min(bottom - top)..=bottom] {
                        *row = (random(texts.len()), random(3) as u8);
                    }
                }
                // A row changes text or only its colour.
                2 => {
                    let row = random(rows.len());
                    rows[row] = (random(texts.len()), random(3) as u8);
                }
                _ => {
                    let row = random(rows.len());
                    rows[row].1 = random(3) as u8;
                }
            }
            let mut drawn = Buffer::default();
            let before = sent.all().len();
            draw(&mut terminal, |frame| {
                let buffer = frame.buffer_mut();
                for (y, (text, colour)) in rows.iter().enumerate() {
                    let style = match colour {
                        0 => Style::new(),
                        1 => Style::new().fg(Color::Indexed(5)),
                        _ => Style::new().bg(Color::Rgb(1, 2, 3)),
                    };
                    buffer.set_string(0, y as u16, texts[*text], style);
                }
                drawn = buffer.clone();
            })
            .unwrap();
            let written = sent.all()[before..].to_vec();
            scrolls += usize::from(String::from_utf8_lossy(&written).contains("S\x1b[r"));
            assert_shows(&mut parser, &written, &drawn, step);
        }
        assert!(scrolls >= 20, "only {scrolls} frames scrolled");
    }
}
