//! The built binary in a pseudo-terminal: type lines, wait for text in the
//! output (`Pty`), or read the screen a terminal would show, parsed with
//! `vt100`, and wait for it to contain a text (`Screen`).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

pub struct Pty {
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<String>>,
    /// Every byte the program wrote, as it came.
    bytes: Arc<Mutex<Vec<u8>>>,
    /// Set when the reader reached the end of the output.
    closed: Arc<AtomicBool>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// How much of the output earlier `expect`s consumed.
    seen: usize,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Pty {
    pub fn spawn(program: &str, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Self {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(cwd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let out = output.clone();
        let raw = bytes.clone();
        let closed = Arc::new(AtomicBool::new(false));
        let reader_closed = closed.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                raw.lock().unwrap().extend_from_slice(&buf[..n]);
                out.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            reader_closed.store(true, Ordering::SeqCst);
        });
        Self {
            writer,
            output,
            bytes,
            closed,
            child,
            seen: 0,
            _master: pair.master,
        }
    }

    /// Resizes the terminal, as a window being resized does: the program
    /// is told by SIGWINCH.
    pub fn resize(&self, rows: u16, cols: u16) {
        self._master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    pub fn send_line(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\r").as_bytes())
            .unwrap();
        self.writer.flush().unwrap();
    }

    /// Writes bytes as typed (e.g. `\x03` for Ctrl-C).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// Waits for `needle` after what earlier calls consumed; returns the text
    /// up to and including it.
    pub fn expect(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            {
                let out = self.output.lock().unwrap();
                if let Some(i) = out[self.seen..].find(needle) {
                    let end = self.seen + i + needle.len();
                    let text = out[self.seen..end].to_string();
                    self.seen = end;
                    return text;
                }
            }
            let exited = matches!(self.child.try_wait(), Ok(Some(_)));
            if exited {
                // Give the reader a moment to collect the last output.
                std::thread::sleep(Duration::from_millis(200));
                let out = self.output.lock().unwrap();
                if !out[self.seen..].contains(needle) {
                    panic!(
                        "the program exited before {needle:?}; output after the last match:\n{}",
                        &out[self.seen..]
                    );
                }
                continue;
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for {needle:?}; output after the last match:\n{}",
                    &self.output.lock().unwrap()[self.seen..]
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every byte written so far, from `from` on.
    pub fn bytes_from(&self, from: usize) -> Vec<u8> {
        let bytes = self.bytes.lock().unwrap();
        bytes[from.min(bytes.len())..].to_vec()
    }

    /// True once the reader reached the end of the output.
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// True once the program has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }

    pub fn all(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    pub fn wait(&mut self) -> u32 {
        self.child.wait().unwrap().exit_code()
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// Rows and columns of the terminal every `Pty` gets.
pub const ROWS: u16 = 40;
pub const COLS: u16 = 120;

/// How long a wait lasts before the test fails (only against hangs).
const PATIENCE: Duration = Duration::from_secs(30);

/// A synchronized update's start and end (mode 2026).
const BEGIN_UPDATE: &[u8] = b"\x1b[?2026h";
const END_UPDATE: &[u8] = b"\x1b[?2026l";

/// Where `needle` last starts in `bytes`.
fn last_at(bytes: &[u8], needle: &[u8]) -> Option<usize> {
    bytes.windows(needle.len()).rposition(|w| w == needle)
}

/// The program's screen: every byte it writes goes through a `vt100`
/// parser of the pty's size.
pub struct Screen {
    pub pty: Pty,
    parser: vt100::Parser,
    fed: usize,
}

impl Screen {
    pub fn spawn(program: &str, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Self {
        Self {
            pty: Pty::spawn(program, args, cwd, env),
            parser: vt100::Parser::new(
                NonZeroU16::new(ROWS).unwrap(),
                NonZeroU16::new(COLS).unwrap(),
                0,
            ),
            fed: 0,
        }
    }

    /// Feeds the parser what arrived since the last call, up to the start
    /// of a synchronized update still being written: the screen is only
    /// ever judged between frames, as a terminal shows it.
    fn feed(&mut self) {
        let new = self.pty.bytes_from(self.fed);
        let whole = match last_at(&new, BEGIN_UPDATE) {
            Some(begin) if last_at(&new[begin..], END_UPDATE).is_none() => begin,
            // The start of an update may itself be cut in two.
            _ => (1..BEGIN_UPDATE.len())
                .rev()
                .find(|&cut| new.ends_with(&BEGIN_UPDATE[..cut]))
                .map_or(new.len(), |cut| new.len() - cut),
        };
        self.fed += whole;
        self.parser.process(&new[..whole]);
    }

    /// The screen now, one line per row.
    pub fn text(&mut self) -> String {
        self.feed();
        self.parser.screen().contents()
    }

    /// The parsed terminal now (modes, cursor, cells).
    pub fn terminal(&mut self) -> &vt100::Screen {
        self.feed();
        self.parser.screen()
    }

    /// Waits until `ready` holds for the screen; returns the screen. `what`
    /// names the wait in the failure message.
    pub fn wait_until(&mut self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let exited = self.pty.exited();
            if exited {
                // Collect the last output before judging.
                std::thread::sleep(Duration::from_millis(100));
            }
            let text = self.text();
            if ready(&text) {
                return text;
            }
            if exited {
                panic!("the program exited before {what}; the screen:\n{text}");
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the screen:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the screen contains `needle`; returns the screen.
    pub fn wait_for(&mut self, needle: &str) -> String {
        self.wait_until(&format!("{needle:?}"), |screen| screen.contains(needle))
    }

    /// Waits until the screen contains every one of `needles`.
    pub fn wait_for_all(&mut self, needles: &[&str]) -> String {
        self.wait_until(&format!("{needles:?}"), |screen| {
            needles.iter().all(|n| screen.contains(n))
        })
    }

    /// Resizes the terminal and the screen read from it.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.feed();
        self.parser.set_size(
            NonZeroU16::new(rows).unwrap(),
            NonZeroU16::new(cols).unwrap(),
        );
        self.pty.resize(rows, cols);
    }

    /// Writes bytes as typed: `\x1b` is Esc, `\r` Enter, `\x04` Ctrl-D.
    pub fn send(&mut self, bytes: &[u8]) {
        self.pty.send_raw(bytes);
    }

    /// Types `text` and presses Enter.
    pub fn submit(&mut self, text: &str) {
        self.pty.send_raw(format!("{text}\r").as_bytes());
    }

    /// Presses Esc alone (a later byte in the same write would make it Alt).
    pub fn esc(&mut self) {
        self.pty.send_raw(b"\x1b");
    }

    /// Waits for the program to exit; returns its exit code and every byte
    /// it wrote.
    pub fn wait_exit(&mut self) -> (u32, Vec<u8>) {
        let deadline = Instant::now() + PATIENCE;
        while !self.pty.exited() {
            if Instant::now() > deadline {
                panic!("the program did not exit; the screen:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let code = self.pty.wait();
        // The reader ends at end of file once every writer is gone.
        let deadline = Instant::now() + Duration::from_secs(2);
        while !self.pty.closed() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.feed();
        (code, self.pty.bytes_from(0))
    }
}
