//! The terminal: raw mode, the alternate screen, mouse capture and
//! bracketed paste on the way in, and all of it undone on the way out, on
//! every path: a normal return (the guard's `Drop`), an error, and a panic
//! (a hook that restores before the panic message prints). Signals are the
//! loop's business; it returns, and the guard restores. A frame goes out
//! whole: buffered, and inside a synchronized update, so the terminal
//! never shows half of one.

use std::io::{self, BufWriter, Stdout, Write};
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
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub type Tui = Terminal<CrosstermBackend<BufWriter<Stdout>>>;

/// Room for a whole frame of a large terminal, so one frame is one write.
const FRAME_BYTES: usize = 1 << 18;

/// The terminal in full-screen mode; dropping it restores the terminal.
pub struct TerminalGuard {
    pub terminal: Tui,
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
        Terminal::new(CrosstermBackend::new(BufWriter::with_capacity(
            FRAME_BYTES,
            io::stdout(),
        )))
    });
    match setup {
        Ok(terminal) => Ok(TerminalGuard { terminal }),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// Draws one frame inside a synchronized update: a terminal that knows
/// the update shows the frame at once, one that does not ignores it.
pub fn draw(terminal: &mut Tui, render: impl FnOnce(&mut ratatui::Frame)) -> io::Result<()> {
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    terminal.draw(render)?;
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
