//! A terminal that goes away: the full screen notices its hang-up without
//! the signal (a thread blocked in `poll`), and takes `EIO` from a read or
//! a draw as the hang-up too, so mino leaves as it does for the signal.

use super::Exit;

/// Resolves once the terminal on standard input hangs up. A terminal that
/// goes away without a hangup signal reaching mino (its session leader
/// kept it) would otherwise leave the terminal reader reading end of file
/// in a loop. A thread blocked in `poll` for the hang-up alone: no CPU.
pub(super) fn watch() -> tokio::sync::oneshot::Receiver<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("mino-hangup".into())
        .spawn(move || {
            use rustix::event::{PollFd, PollFlags, poll};
            let stdin = std::io::stdin();
            loop {
                let mut fds = [PollFd::new(&stdin, PollFlags::empty())];
                match poll(&mut fds, None) {
                    Ok(_) => {
                        let gone = PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL;
                        if fds[0].revents().intersects(gone) {
                            let _ = tx.send(());
                            return;
                        }
                    }
                    Err(rustix::io::Errno::INTR) => {}
                    // Nothing to watch: the signal handlers stay.
                    Err(_) => return,
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "the terminal's hang-up watch could not start");
    }
    rx
}

/// The hang-up, once; pending for ever when the watch ended without one.
pub(super) async fn heard(watch: &mut Option<tokio::sync::oneshot::Receiver<()>>) {
    let Some(receiver) = watch.as_mut() else {
        return std::future::pending().await;
    };
    let heard = receiver.await.is_ok();
    *watch = None;
    if !heard {
        std::future::pending::<()>().await;
    }
}

/// A terminal that hung up fails its reads and writes with `EIO`: that
/// ends the run as the hangup signal does; any other error is the
/// terminal's failure.
pub(super) fn or_failed(error: std::io::Error) -> std::io::Result<Exit> {
    if error.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error()) {
        Ok(Exit::Signal(1))
    } else {
        Err(error)
    }
}
