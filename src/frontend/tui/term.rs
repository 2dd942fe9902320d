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

use crossterm::cursor::Show;
use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange,
};
use crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode,
};
use crossterm::{execute, queue};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

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
    terminal.resize(screen()?)
}

/// Draws one frame inside a synchronized update: a terminal that knows
/// the update shows the frame at once, one that does not ignores it. The
/// frame goes out in one write: ratatui flushes when it has drawn, before
/// the update's end is queued, and that flush is held back.
pub fn draw<W: Write>(
    terminal: &mut Terminal<CrosstermBackend<FrameWriter<W>>>,
    render: impl FnOnce(&mut ratatui::Frame),
) -> io::Result<()> {
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    terminal.backend_mut().writer_mut().holding = true;
    let drawn = terminal.draw(render).map(drop);
    let writer = terminal.backend_mut().writer_mut();
    writer.holding = false;
    if drawn.is_err() {
        writer.waiting.clear();
    }
    drawn?;
    queue!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    terminal.backend_mut().flush()
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
    /// A frame is being drawn: flushes wait for its end (`draw`).
    holding: bool,
}

impl<W: Write> FrameWriter<W> {
    fn new(out: W) -> Self {
        Self {
            waiting: Vec::with_capacity(FRAME_BYTES),
            out,
            holding: false,
        }
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.waiting.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.holding {
            return Ok(());
        }
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
        let mut terminal = Terminal::with_options(
            CrosstermBackend::new(FrameWriter::new(sent.clone())),
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, 20, 3)),
            },
        )
        .unwrap();
        for text in ["first frame", "second frame"] {
            draw(&mut terminal, |frame| {
                frame.render_widget(text, frame.area());
                frame.set_cursor_position((2, 1));
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
}
