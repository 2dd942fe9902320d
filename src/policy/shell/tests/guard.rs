//! The bypass guard's subset wherever a catastrophic command hides: in
//! input the tokenizer calls malformed or oversized (the code stays the
//! input's, the guard still hears), in constructs the tokenizer reads as
//! one command (functions, `case`), in here-documents and code handed to a
//! shell, and behind targets that expand to `/`, `~` or the project.

use super::*;

fn guarded(command: &str) -> bool {
    check("bash", command).catastrophic
}

/// Each row keeps its code and is in the guard's subset.
fn caught(rows: &[(&str, &str)]) {
    for (command, want) in rows {
        let v = check("bash", command);
        assert_eq!(v.code, Some(*want), "{command:?}: {}", v.reason);
        assert!(
            v.catastrophic,
            "{command:?} escaped the guard: {}",
            v.reason
        );
    }
}

#[test]
fn malformed_input_keeps_its_code_and_the_guard_still_sees_it() {
    let oversized = format!("rm -rf ~; : {}", "a".repeat(MAX_INPUT_BYTES));
    caught(&[
        ("case x in x) rm -rf ~;; esac", INPUT_MALFORMED),
        ("case x in x) rm -rf ';' ~;; esac", INPUT_MALFORMED),
        ("rm -rf / '", INPUT_MALFORMED),
        ("rm -rf ~ <<EOF\nx", INPUT_MALFORMED),
        ("rm -rf ~ $(( 1 )", INPUT_MALFORMED),
        ("x=$(case a in a) echo;; esac); rm -rf ~", INPUT_MALFORMED),
        ("rm -rf ~ \r", INPUT_MALFORMED),
        ("rm -rf ~\0", INPUT_MALFORMED),
        ("r\\m -rf \"$HOME\" '", INPUT_MALFORMED),
        (
            "case x in x) dd if=/dev/zero of=/dev/sda;; esac",
            INPUT_MALFORMED,
        ),
        ("case x in x) mkfs.ext4 /dev/sdb1;; esac", INPUT_MALFORMED),
        ("case x in x) chmod -R 777 /;; esac", INPUT_MALFORMED),
        (
            "case x in x) git push --force origin main;; esac",
            INPUT_MALFORMED,
        ),
        (&oversized, INPUT_OVERSIZED),
    ]);
    // The outcome is still the input's own: malformed input is not
    // dangerous in the seed's precedence, so auto mode asks and says why.
    let v = check("bash", "case x in x) rm -rf ~;; esac");
    assert_eq!(v.outcome, Outcome::UnresolvedIneligible);
    assert!(
        v.reason.contains("rm removes ~ recursively"),
        "{}",
        v.reason
    );
    // Malformed input without a catastrophic word stays out of the subset.
    assert!(!guarded("case x in x) rm -rf build;; esac"));
    assert!(!guarded("echo '"));
}

#[test]
fn wrappings_the_tokenizer_reads_are_catastrophic() {
    caught(&[
        ("{ rm -rf ~; }", CATASTROPHIC),
        ("if true; then rm -rf ~; fi", CATASTROPHIC),
        ("while true; do rm -rf ~; done", CATASTROPHIC),
        ("f() { rm -rf ~; }; f", CATASTROPHIC),
        ("f () { rm -rf ~; }; f", CATASTROPHIC),
        ("function f { rm -rf ~; }; f", CATASTROPHIC),
        ("function f() ( rm -rf ~ ); f", CATASTROPHIC),
        ("case x in (x) rm -rf ~;; esac", CATASTROPHIC),
    ]);
}

/// Code a shell runs that the tokenizer never read as commands: the crude
/// scan marks it for the guard; the precise code stays (a shell given code
/// is dangerous anyway).
#[test]
fn code_handed_to_a_shell_meets_the_guard() {
    caught(&[
        ("bash <<EOF\nrm -rf ~\nEOF", DANGEROUS),
        ("cat <<'EOF' | sh\nrm -rf ~\nEOF", DANGEROUS),
        ("bash -c 'rm -rf ~'", DANGEROUS),
        ("sh -c \"cd / && rm -rf *\"", DANGEROUS),
        ("echo 'rm -rf ~' | bash", DANGEROUS),
        ("bash <<< 'rm -rf ~'", DANGEROUS),
        ("su -c 'rm -rf /'", DANGEROUS),
        ("xargs -I{} sh -c 'rm -rf ~'", DANGEROUS),
        ("python3 -c \"import os; os.system('rm -rf ~')\"", DANGEROUS),
        ("cat > x.sh <<EOF\nrm -rf ~\nEOF", AMBIGUOUS),
    ]);
    // A word the tokenizer read as an argument may still be a program
    // (`git rm -rf ~ push -f origin main` is not a push, but the guard
    // errs): the guard hears, the code stays precise, and a read-only
    // command keeps its allowance in auto mode.
    let v = check("bash", "/usr/bin/grep rm -r .");
    assert_eq!(v.outcome, Outcome::AllowFinal);
    assert!(v.catastrophic, "{}", v.reason);
}

#[test]
fn targets_that_expand_to_a_catastrophic_one() {
    caught(&[
        ("rm -rf {~,x}", CATASTROPHIC),
        ("rm -rf x{,/..}", CATASTROPHIC),
        ("rm -rf ~/..", CATASTROPHIC),
        ("rm -rf ~/../..", CATASTROPHIC),
        ("rm -rf /home/u/project/..", CATASTROPHIC),
        ("rm -rf /home/u/project/src/../", CATASTROPHIC),
        ("rm -rf ../..", CATASTROPHIC),
        ("rm -rf sub/..", CATASTROPHIC),
        ("rm -rf ./build/../..", CATASTROPHIC),
        ("rm -rf \"$X/\"", CATASTROPHIC),
        ("rm -rf \"${X}\"/*", CATASTROPHIC),
        ("rm -rf /u*", CATASTROPHIC),
        ("rm -rf /home/*", CATASTROPHIC),
        ("rm -rf .*", CATASTROPHIC),
        ("rm -rf ~/.*", CATASTROPHIC),
        ("rm -rf ${HOME}/", CATASTROPHIC),
        ("rm -rf //", CATASTROPHIC),
        ("rm -rf /usr/../", CATASTROPHIC),
        ("rm -rf /home/u/project/.git/../.git", CATASTROPHIC),
        ("find / -delete", CATASTROPHIC),
        ("find ~ -name x -delete", CATASTROPHIC),
        ("wipefs -a /dev/sda", CATASTROPHIC),
        ("shred /dev/nvme0n1", CATASTROPHIC),
    ]);
}

#[test]
fn ordinary_commands_stay_out_of_the_subset() {
    for command in [
        "rm -rf build",
        "rm -rf {build,dist}",
        "rm -rf *.o",
        "rm -rf ~/foo/*",
        "rm -rf ~/.cache/x",
        "rm -rf ./target/debug/..",
        "find . -name '*.o' -delete",
        "echo 'rm -rf ~'",
        "git commit -m 'do not rm -rf ~'",
        "/usr/bin/grep -rn 'rm -rf /' .",
        "cat > clean.sh <<EOF\nrm -rf build\nEOF",
        "wipefs --help",
        "/usr/bin/grep -rn format src",
        "/usr/bin/grep -rn mkfs src",
    ] {
        let v = check("bash", command);
        assert!(!v.catastrophic, "{command:?}: {}", v.reason);
    }
    assert_eq!(
        check("bash", "/usr/bin/grep -rn 'rm -rf /' .").outcome,
        Outcome::AllowFinal
    );
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Shell-ish fragments, the malformed and the compound among them.
    fn pieces() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("case x in x)".to_string()),
                Just(";;".to_string()),
                Just("esac".to_string()),
                Just("{".to_string()),
                Just("}".to_string()),
                Just("if true; then".to_string()),
                Just("fi".to_string()),
                Just("f()".to_string()),
                Just("function".to_string()),
                Just("rm -rf".to_string()),
                Just("~".to_string()),
                Just("$(".to_string()),
                Just(")".to_string()),
                Just("(".to_string()),
                Just("'".to_string()),
                Just("\"".to_string()),
                Just("`".to_string()),
                Just("\\".to_string()),
                Just("\n".to_string()),
                Just("<<E".to_string()),
                Just("E".to_string()),
                Just(" ".to_string()),
                "[ -~]{0,6}",
                any::<char>().prop_map(String::from),
            ],
            0..30,
        )
        .prop_map(|v| v.concat())
    }

    const CATASTROPHES: &[&str] = &[
        " rm -rf ~ ",
        " rm -rf / ",
        " mkfs.ext4 /dev/sda ",
        " dd of=/dev/sda ",
        " chmod -R 0 / ",
        " git push -f origin main ",
    ];

    /// `words` put in at a word boundary of `text` (its start, or right
    /// after a space or a newline) at or before `at`.
    fn insert(text: &str, at: usize, words: &str) -> String {
        let at = (0..=at.min(text.len()))
            .rev()
            .find(|&i| i == 0 || (text.is_char_boundary(i) && text[..i].ends_with([' ', '\n'])))
            .unwrap_or(0);
        format!("{}{words}{}", &text[..at], &text[at..])
    }

    proptest! {
        /// Adding catastrophic words anywhere never makes the guard quieter.
        #[test]
        fn adding_catastrophic_words_never_quiets_the_guard(
            input in pieces(), at in 0usize..200, which in 0usize..6, at2 in 0usize..200,
        ) {
            let once = insert(&input, at, CATASTROPHES[which]);
            prop_assert!(!guarded(&input) || guarded(&once), "{input:?} -> {once:?}");
            let twice = insert(&once, at2, CATASTROPHES[(which + 1) % 6]);
            prop_assert!(!guarded(&once) || guarded(&twice), "{once:?} -> {twice:?}");
        }

        /// Input the tokenizer cannot read is never a hiding place.
        #[test]
        fn catastrophic_words_in_unreadable_input_are_seen(
            input in pieces(), at in 0usize..200, which in 0usize..6,
        ) {
            let text = insert(&input, at, CATASTROPHES[which]);
            let v = check("bash", &text);
            let level_3 = CODES.iter().any(|c| Some(c.name) == v.code && c.level == 3);
            prop_assert!(!level_3 || v.catastrophic, "{text:?}: {}", v.reason);
        }

        /// A catastrophic first command is seen whatever follows it.
        #[test]
        fn a_catastrophic_first_command_is_seen(input in pieces(), which in 0usize..6) {
            let text = format!("{};{input}", CATASTROPHES[which]);
            prop_assert!(guarded(&text), "{text:?}");
        }
    }
}
