//! Properties over generated input: every input gets a verdict, and an
//! allowed one is a single plain command.

use proptest::prelude::*;

use super::*;

fn pieces() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("/usr/bin/git".to_string()),
            Just("/usr/bin/ls".to_string()),
            Just("status".to_string()),
            Just("rm -rf".to_string()),
            Just("~".to_string()),
            "[ -~]{0,6}",
            Just("$(".to_string()),
            Just(")".to_string()),
            Just("'".to_string()),
            Just("\"".to_string()),
            Just("`".to_string()),
            Just("\n".to_string()),
            Just("<<E".to_string()),
            Just(" ".to_string()),
            any::<char>().prop_map(String::from),
        ],
        0..40,
    )
    .prop_map(|v| v.concat())
}

/// The text outside single-quoted spans; an unclosed quote keeps the rest.
fn outside_single_quotes(input: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut double = false;
    for c in input.chars() {
        match c {
            '\'' if !double => quoted = !quoted,
            '"' if !quoted => {
                double = !double;
                out.push(c);
            }
            _ if !quoted => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whether the text holds a character the shell acts on: an operator, an
/// expansion, a glob, or a tilde where bash expands it (a word's start, or
/// after `=` or `:`).
fn acts(text: &str) -> bool {
    let mut before = None;
    text.chars().any(|c| {
        let tilde = c == '~' && matches!(before, None | Some(' ' | '=' | ':' | '"'));
        before = Some(c);
        tilde || ";|&<>$`\n(){}*?\\".contains(c)
    })
}

#[test]
fn a_tilde_inside_a_word_is_literal() {
    assert!(!acts("/usr/bin/ls /usr/bin/git~"));
    assert!(acts("/usr/bin/ls a=~"));
    assert!(acts("/usr/bin/ls ~"));
    assert_eq!(code("bash", "/usr/bin/ls /usr/bin/git~"), "ALLOW");
}

#[test]
fn a_single_quoted_opening_is_literal_and_allowed() {
    assert_eq!(outside_single_quotes("/usr/bin/ls '$('"), "/usr/bin/ls ");
    assert_eq!(outside_single_quotes("ls \"'$(\""), "ls \"'$(\"");
    assert_eq!(code("bash", "/usr/bin/ls '$('"), "ALLOW");
    assert_ne!(code("bash", "/usr/bin/ls \"$(\""), "ALLOW");
}

proptest! {
    #[test]
    fn any_input_gets_a_verdict_and_allow_means_simple(input in pieces()) {
        for shell in SHELL_NAMES {
            let v = check(shell, &input);
            prop_assert_eq!(v.code.is_none(), v.outcome == Outcome::AllowFinal);
            if v.outcome == Outcome::AllowFinal {
                // One literal command of plain words, a trusted path first.
                let words: Vec<&str> = input.split(' ').filter(|w| !w.is_empty()).collect();
                prop_assert!(rules().trusted.iter().any(|t| Some(t.path.as_str()) == words.first().map(|w| w.trim_matches(['\'', '"']))));
                // Outside single quotes (literal in every shell but cmd), no
                // character the shell would act on.
                let active = if *shell == "cmd" { input.clone() } else { outside_single_quotes(&input) };
                prop_assert!(!acts(&active), "{input:?}");
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(input in any::<String>()) {
        let v = check("bash", &input);
        prop_assert!(v.outcome != Outcome::AllowFinal || !input.contains(';'));
    }
}
