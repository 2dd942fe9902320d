//! What makes a `git push` one no checkpoint undoes: everything but a plain
//! fast-forward push of named branches. Options are read the way git's
//! option parser reads them (a long option may be any unique prefix of its
//! name, short options cluster), and erring toward asking: a prefix that
//! could expand to a forcing, deleting, mirroring or pruning option counts
//! as that option, and a word the shell still expands counts as anything.
//! Reads words only.

/// Long options of `git push` that rewrite or delete remote refs, or run a
/// program of the caller's choosing on the remote side.
const IRREVERSIBLE: &[&str] = &[
    "--force",
    "--force-with-lease",
    "--force-if-includes",
    "--delete",
    "--mirror",
    "--prune",
    "--receive-pack",
    "--exec",
];

/// Options whose value is the next word. `--all` and `--tags` rewrite refs
/// only together with a force, and the force asks on its own.
const TAKES_VALUE: &[&str] = &["-o", "--push-option", "--repo", "--recurse-submodules"];

/// Short options of `git push` that neither force nor delete.
const HARMLESS_SHORT: &str = "unvq46";

/// A word the shell still expands: it may become any option or refspec.
fn unexpanded(word: &str) -> bool {
    word.is_empty() || word.contains(['$', '`', '*', '?', '[', '{', '~'])
}

/// Why `git push ARGS` may change what no checkpoint restores, or `None`
/// for a plain fast-forward push of named branches.
pub fn irreversible(args: &[String]) -> Option<String> {
    let mut positional = Vec::new();
    let mut options_end = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if unexpanded(a) {
            return Some(format!(
                "git push is given {a:?}, which the shell expands into words the guard cannot see"
            ));
        }
        if options_end || !a.starts_with('-') || a == "-" {
            positional.push(a);
            continue;
        }
        if a == "--" {
            options_end = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let name = format!("--{}", long.split('=').next().unwrap_or(long));
            if name.starts_with("--no-") {
                continue;
            }
            if let Some(full) = IRREVERSIBLE.iter().find(|o| o.starts_with(name.as_str())) {
                return Some(format!(
                    "git push {a} (git reads it as {full}) rewrites or deletes remote refs"
                ));
            }
            if !a.contains('=') && TAKES_VALUE.contains(&name.as_str()) {
                i += 1;
            }
            continue;
        }
        for (k, f) in a[1..].char_indices() {
            if HARMLESS_SHORT.contains(f) {
                continue;
            }
            if f == 'o' {
                // `-o VALUE` or `-oVALUE`: a push option for the server.
                if k + 2 == a.len() {
                    i += 1;
                }
                break;
            }
            return Some(format!(
                "git push {a} holds -{f}, which forces, deletes or is not known to the guard"
            ));
        }
    }
    // The first positional word is the remote; the rest are refspecs.
    positional.iter().enumerate().find_map(|(k, r)| {
        if r.starts_with('+') {
            Some(format!("git push {r} forces the update of a remote ref"))
        } else if k > 0 && (r.starts_with(':') || r.ends_with(':') && r.len() > 1) {
            Some(format!("git push {r} deletes a remote ref"))
        } else if r.starts_with(':') {
            Some(format!("git push {r} names no remote"))
        } else {
            None
        }
    })
}

/// One word, read on its own, that would make a push irreversible: the
/// crude scan's test, where which words belong to the push is not known.
/// A forcing or deleting option in any abbreviation, a short cluster with
/// `-f` or `-d`, a `+ref` or a `:ref`.
pub fn risky_word(word: &str) -> bool {
    if let Some(long) = word.strip_prefix("--") {
        let name = format!("--{}", long.split('=').next().unwrap_or(long));
        return name.len() > 2
            && !name.starts_with("--no-")
            && IRREVERSIBLE.iter().any(|o| o.starts_with(name.as_str()));
    }
    if let Some(cluster) = word.strip_prefix('-') {
        return cluster.contains(['f', 'd']);
    }
    word.len() > 1 && (word.starts_with('+') || word.starts_with(':'))
}
