//! Fuzzes the shell gate's classifier: any bytes, every shell. It must
//! return a verdict without panicking, and allow only a command that starts
//! with a trusted path and holds no shell metacharacter.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mino::policy::ProtectedPaths;
use mino::policy::shell::{
    Evidence, FileEvidence, Outcome, Rules, SHELL_NAMES, Trusted, classify, executable_to_examine,
};

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let mut rules = Rules::new(ProtectedPaths::builtin());
    for path in ["/usr/bin/git", "/usr/bin/ls", "/usr/bin/sed", "/usr/bin/find"] {
        rules.trusted.push(Trusted {
            path: path.into(),
            sha256: None,
        });
    }
    for shell in SHELL_NAMES {
        let evidence = executable_to_examine(shell, command, &rules).map(|path| Evidence {
            path,
            file: FileEvidence::Regular {
                mode: 0o755,
                owner: 0,
                user: 0,
                sha256: None,
            },
        });
        let verdict = classify(shell, command, &rules, evidence.as_ref());
        if verdict.outcome == Outcome::AllowFinal {
            let start = command.trim_start().trim_start_matches(['\'', '"']);
            assert!(rules.trusted.iter().any(|t| start.starts_with(&t.path)));
            assert!(!command.chars().any(|c| ";|&<>$`\n(){}*?\\".contains(c)));
        }
    }
});
