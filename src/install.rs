//! What a packaged command line prints about itself: the version (short
//! and long), completion scripts and the manual page, the last two made
//! from the clap definition in `cli.rs` so they cannot drift from it.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, Sub};
use mino::frontend::version;
use mino::sandbox::probe::Support;

/// Acts on `-V`, `-vV`, `version`, `completions` and `man`, which need no
/// settings; `None` for everything else.
pub(crate) fn act(cli: &Cli) -> Option<i32> {
    let verbose = match &cli.command {
        _ if cli.version => cli.verbose,
        Some(Sub::Version { verbose }) => *verbose,
        Some(Sub::Completions { shell }) => {
            let mut command = Cli::command();
            clap_complete::generate(*shell, &mut command, "mino", &mut std::io::stdout());
            return Some(0);
        }
        Some(Sub::Man { dir }) => return Some(man(dir.as_deref())),
        _ => return None,
    };
    if verbose {
        let support = match std::env::current_exe() {
            Ok(exe) => Support::probe(&exe),
            Err(e) => Support {
                namespace_error: Some(format!("mino's own binary cannot be found: {e}")),
                ..Support::default()
            },
        };
        println!("{}", version::verbose(&support));
    } else {
        println!("{}", version::short());
    }
    Some(0)
}

fn man(dir: Option<&std::path::Path>) -> i32 {
    if let Some(dir) = dir {
        return match clap_mangen::generate_to(Cli::command(), dir) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!(
                    "mino: man --dir {}: the pages cannot be written: {e}",
                    dir.display()
                );
                2
            }
        };
    }
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut page) {
        eprintln!("mino: the manual page cannot be made: {e}");
        return 2;
    }
    match std::io::stdout().lock().write_all(&page) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mino: the manual page cannot be written: {e}");
            2
        }
    }
}
