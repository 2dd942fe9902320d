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
                prop_assert!(!input.chars().any(|c| ";|&<>$`\n(){}*?~\\".contains(c)), "{input:?}");
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(input in any::<String>()) {
        let v = check("bash", &input);
        prop_assert!(v.outcome != Outcome::AllowFinal || !input.contains(';'));
    }
}
