//! Whether a word names a place whose recursive removal or mode change is
//! catastrophic: the whole file system or a directory right under it, the
//! home directory, the project, an ancestor of either, or a `.git`. The
//! word is read as the shell would expand it, as far as that can be known
//! without expanding anything: `.` and `..` resolved lexically, each
//! alternative of a brace expansion looked at, an unknown variable also
//! taken as empty, and a glob right under such a place taken to match
//! everything in it. Errs toward "catastrophic". Pure: it never looks at
//! the filesystem.

use super::Rules;

/// A word whose brace expansions give more alternatives than this counts
/// as catastrophic without more reading.
const MAX_ALTERNATIVES: usize = 64;

/// Names the whole file system, the home directory, the project, an
/// ancestor of either, or a `.git` (as `rm -rf WORD` would reach it).
pub fn catastrophic_target(arg: &str, rules: &Rules) -> bool {
    let lower = arg.to_ascii_lowercase().replace('\\', "/");
    let Some(alternatives) = expand_braces(&lower) else {
        return true;
    };
    alternatives
        .iter()
        .any(|word| spellings(word).iter().any(|w| place(w, rules)))
}

/// The first `{a,b}` group (not `${...}`) with a comma at its own depth:
/// its start, its end and its alternatives.
fn first_group(word: &str) -> Option<(usize, usize, Vec<&str>)> {
    let bytes = word.as_bytes();
    let mut start = 0;
    while let Some(open) = word[start..].find('{').map(|p| start + p) {
        start = open + 1;
        if open > 0 && bytes[open - 1] == b'$' {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if commas.is_empty() {
                            break;
                        }
                        let mut alternatives = Vec::new();
                        let mut from = open + 1;
                        for c in commas.iter().copied().chain([i]) {
                            alternatives.push(&word[from..c]);
                            from = c + 1;
                        }
                        return Some((open, i, alternatives));
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
        }
    }
    None
}

/// Every word brace expansion gives, or `None` past the cap.
fn expand_braces(word: &str) -> Option<Vec<String>> {
    let mut done = Vec::new();
    let mut todo = vec![word.to_string()];
    while let Some(w) = todo.pop() {
        match first_group(&w) {
            None => done.push(w),
            Some((open, close, alternatives)) => {
                for alt in alternatives {
                    todo.push(format!("{}{alt}{}", &w[..open], &w[close + 1..]));
                }
            }
        }
        if done.len() + todo.len() > MAX_ALTERNATIVES {
            return None;
        }
    }
    Some(done)
}

/// The word with the home's spellings made `~`, and also with every other
/// variable taken as empty (an unset `$X` in `"$X/"` leaves `/`).
fn spellings(word: &str) -> Vec<String> {
    let mut home = word.to_string();
    for spelling in ["${home}", "$home", "%userprofile%", "$env:userprofile"] {
        if let Some(rest) = home.strip_prefix(spelling) {
            home = format!("~{rest}");
        }
    }
    // `$PWD` is where the command runs: the project, as `~+` spells it.
    for spelling in ["${pwd}", "$pwd"] {
        if let Some(rest) = home.strip_prefix(spelling)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            home = format!("~+{rest}");
        }
    }
    let mut out = vec![home.clone()];
    if home.contains('$') {
        let empty = without_variables(&home);
        if !empty.is_empty() {
            out.push(empty);
        }
    }
    out
}

fn without_variables(word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '$' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        i += 1;
        match chars.get(i) {
            Some('{') => {
                while i < chars.len() && chars[i] != '}' {
                    i += 1;
                }
                i += 1;
            }
            Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
            Some(_) => i += 1,
            None => {}
        }
    }
    out
}

fn glob(component: &str) -> bool {
    component.contains(['*', '?', '['])
}

/// A glob that matches every (or every hidden) entry: `*`, `.*`, `.??*`.
fn matches_everything(component: &str) -> bool {
    glob(component) && component.chars().all(|c| matches!(c, '*' | '?' | '.'))
}

/// Whether the glob `pattern` (`*`, `?`, `[...]`) may match `name`; a
/// bracket is taken to match any one character.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let mut p: Vec<char> = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '[' {
            for d in chars.by_ref() {
                if d == ']' {
                    break;
                }
            }
            p.push('?');
        } else {
            p.push(c);
        }
    }
    let n: Vec<char> = name.chars().collect();
    // Classic two-row matching: linear in pattern times name.
    let mut row = vec![false; n.len() + 1];
    row[0] = true;
    for &pc in &p {
        let mut next = vec![false; n.len() + 1];
        if pc == '*' {
            next[0] = row[0];
        }
        for j in 1..=n.len() {
            next[j] = match pc {
                '*' => next[j - 1] || row[j],
                '?' => row[j - 1],
                c => row[j - 1] && c == n[j - 1],
            };
        }
        row = next;
    }
    row[n.len()]
}

/// A path's components from the root, `.` and `..` resolved.
fn components(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            c => out.push(c.to_string()),
        }
    }
    out
}

/// One spelling, after brace expansion: is it a catastrophic place?
fn place(word: &str, rules: &Rules) -> bool {
    if matches!(word, "c:" | "c:/" | "%systemdrive%") {
        return true;
    }
    let b = word.as_bytes();
    if b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && word[2..].trim_matches('/').is_empty()
    {
        return true;
    }
    // The word is lowercase; so are the places it is compared with.
    let lowered = |p: &str| components(&p.to_ascii_lowercase().replace('\\', "/"));
    let home = rules.home.as_deref().map(lowered);
    let project = rules.project_root.as_deref().map(lowered);
    // Where the word starts, and what is left of it.
    let (base, rest, anchor): (Vec<String>, &str, Anchor) =
        if let Some(rest) = word.strip_prefix('/') {
            (Vec::new(), rest, Anchor::Root)
        } else if let Some(after) = word.strip_prefix('~') {
            let (user, rest) = after.split_once('/').unwrap_or((after, ""));
            match (user, &home, &project) {
                ("+", _, Some(p)) => (p.clone(), rest, Anchor::Root),
                ("", Some(h), _) => (h.clone(), rest, Anchor::Root),
                _ => (Vec::new(), rest, Anchor::Home),
            }
        } else {
            match &project {
                Some(p) => (p.clone(), word, Anchor::Root),
                None => (Vec::new(), word, Anchor::Project),
            }
        };
    let mut at = base;
    let mut above = 0usize;
    for c in rest.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if at.pop().is_none() {
                    above += 1;
                }
            }
            c => {
                // A glob right under `/` matches the top-level directories;
                // `*` or `.*` right under any catastrophic place empties it.
                if glob(c)
                    && ((anchor == Anchor::Root && at.is_empty())
                        || (matches_everything(c)
                            && (at.last().is_some_and(|c| c == ".git")
                                || catastrophic_place(&at, above, anchor, &home, &project))))
                {
                    return true;
                }
                // `.g?t`, `.gi*`, `.[g]it` may be `.git` (a glob matches a
                // leading dot only with one of its own).
                if glob(c) && c.starts_with('.') && glob_matches(c, ".git") {
                    at.push(".git".to_string());
                } else {
                    at.push(c.to_string());
                }
            }
        }
    }
    at.last().is_some_and(|c| c == ".git")
        || catastrophic_place(&at, above, anchor, &home, &project)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// Components from `/`.
    Root,
    /// Components from a home directory mino does not know.
    Home,
    /// Components from the project root, which mino does not know.
    Project,
}

/// `/`, a directory right under it, the home, the project, or an ancestor
/// of either.
fn catastrophic_place(
    at: &[String],
    above: usize,
    anchor: Anchor,
    home: &Option<Vec<String>>,
    project: &Option<Vec<String>>,
) -> bool {
    match anchor {
        Anchor::Home | Anchor::Project => above > 0 || at.is_empty(),
        Anchor::Root => {
            let ancestor_of =
                |p: &Option<Vec<String>>| p.as_ref().is_some_and(|p| p.starts_with(at));
            at.is_empty() || at.len() == 1 || ancestor_of(home) || ancestor_of(project)
        }
    }
}

/// Whether a written path is one of the files of a `.git` directory whose
/// truncation breaks the repository as a whole (`.git/HEAD`, `.git/index`,
/// `.git/config`, `.git/packed-refs`, also spelled `./.g?t/index`). `.git`
/// itself cannot be truncated while it is a directory.
pub fn inside_git(word: &str) -> bool {
    let lower = word.to_ascii_lowercase().replace('\\', "/");
    let parts: Vec<&str> = lower
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let [.., dir, file] = parts.as_slice() else {
        return false;
    };
    let git = *dir == ".git" || (glob(dir) && dir.starts_with('.') && glob_matches(dir, ".git"));
    git && ["head", "index", "config", "packed-refs"]
        .iter()
        .any(|f| *file == *f || (glob(file) && glob_matches(file, f)))
}
