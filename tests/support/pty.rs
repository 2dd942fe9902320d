//! The built binary in a pseudo-terminal: type lines, wait for text.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

pub struct Pty {
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<String>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// How much of the output earlier `expect`s consumed.
    seen: usize,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Pty {
    pub fn spawn(program: &str, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Self {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 120,
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
        let out = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                out.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Self {
            writer,
            output,
            child,
            seen: 0,
            _master: pair.master,
        }
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
