//! The context windows of well-known hosted models, so that a settings file
//! naming only `model` gets the window that model has instead of one
//! default for everyone. A loopback server's window is what it was started
//! with, which no table knows: the server is asked at start
//! (`model::window`), and the settings' `context_window` wins.

/// (name prefix, tokens), longest prefixes first where they overlap. Names
/// are matched without case and without a router's `vendor/` prefix
/// (OpenRouter's `openai/gpt-5-mini`).
const KNOWN: &[(&str, u64)] = &[
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o4-mini", 200_000),
    ("o3", 200_000),
    ("claude-", 200_000),
    ("gemini-", 1_048_576),
    ("qwen3-coder", 262_144),
    ("deepseek-", 128_000),
    ("kimi-k2", 131_072),
    ("grok-4", 256_000),
    ("mistral-large", 128_000),
    ("codestral", 256_000),
];

/// The window of `model` when it is a well-known hosted model.
pub fn known_window(model: &str) -> Option<u64> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    KNOWN
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|(_, tokens)| *tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_models_have_their_window() {
        assert_eq!(known_window("gpt-5-mini"), Some(400_000));
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("openai/GPT-4o"), Some(128_000));
        assert_eq!(known_window("qwen/qwen3-coder"), Some(262_144));
        assert_eq!(known_window("my-finetune"), None);
        assert_eq!(known_window(""), None);
    }
}
