//! Whether `-p`'s reader is still there: stdout that is a pipe (or a
//! socket) whose reading end closed ends the turn at once, quietly, as
//! ripgrep does, even while nothing is being written (a tool running, a
//! request in flight). It watches; it never writes.

use std::os::fd::AsFd;

/// The exit status of a run whose reader went away (128 + SIGPIPE).
pub const READER_GONE: i32 = 141;

/// Whether `error` says the reader went away.
pub fn is_gone(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::BrokenPipe
}

/// Resolves when stdout is a pipe or socket whose reader has gone; never
/// for a terminal or a file. A thread of its own waits (poll with no
/// events asked reports only the error and hang-up the closed end
/// raises), so it holds no worker and ends with the process.
pub async fn reader_gone() {
    let stdout = std::io::stdout();
    let is_pipe = rustix::fs::fstat(stdout.as_fd()).is_ok_and(|stat| {
        let kind = rustix::fs::FileType::from_raw_mode(stat.st_mode);
        matches!(
            kind,
            rustix::fs::FileType::Fifo | rustix::fs::FileType::Socket
        )
    });
    if !is_pipe {
        return std::future::pending().await;
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let watcher = std::thread::Builder::new()
        .name("stdout-watch".into())
        .spawn(move || {
            let stdout = std::io::stdout();
            loop {
                let mut fds = [rustix::event::PollFd::new(
                    &stdout,
                    rustix::event::PollFlags::empty(),
                )];
                match rustix::event::poll(&mut fds, None) {
                    Ok(_) => {
                        let said = fds[0].revents();
                        if said.intersects(
                            rustix::event::PollFlags::ERR | rustix::event::PollFlags::HUP,
                        ) {
                            let _ = tx.send(());
                            return;
                        }
                    }
                    Err(rustix::io::Errno::INTR) => {}
                    Err(_) => return,
                }
            }
        });
    if watcher.is_err() || rx.await.is_err() {
        std::future::pending::<()>().await;
    }
}
