//! Session ids: 32 lowercase hexadecimal characters (128 random bits from the
//! system's random source). Owns generating, parsing and validating them.
//! Never touches a file: an id that passed `parse` is safe to use as a file
//! name because it can only contain `0-9` and `a-f`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How many hexadecimal characters an id has.
pub const ID_LEN: usize = 32;

/// A session id, always 32 lowercase hexadecimal characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

/// A string that is not a session id. The text says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid session id {given:?}: a session id is 32 lowercase hexadecimal characters (0-9, a-f), as /sessions lists them, or a unique prefix of at least 4 of them"
)]
pub struct InvalidId {
    /// What was given, cut to 48 characters.
    pub given: String,
}

impl SessionId {
    /// A new random id from the system's random source.
    pub fn generate() -> Result<SessionId, getrandom::Error> {
        let mut bytes = [0u8; ID_LEN / 2];
        getrandom::fill(&mut bytes)?;
        Ok(SessionId(hex::encode(bytes)))
    }

    /// Accepts exactly 32 characters from `0-9a-f`; anything else (upper
    /// case, spaces, path separators, another length) is refused.
    pub fn parse(text: &str) -> Result<SessionId, InvalidId> {
        let valid = text.len() == ID_LEN
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if valid {
            Ok(SessionId(text.to_owned()))
        } else {
            Err(InvalidId {
                given: text.chars().take(48).collect(),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 8 characters, for the status bar.
    pub fn short(&self) -> &str {
        self.0.get(..8).unwrap_or(&self.0)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for SessionId {
    type Err = InvalidId;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        SessionId::parse(text)
    }
}

impl TryFrom<String> for SessionId {
    type Error = InvalidId;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        SessionId::parse(&text)
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.0
    }
}

impl AsRef<str> for SessionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_valid_and_differ() {
        let a = SessionId::generate().unwrap();
        let b = SessionId::generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(SessionId::parse(a.as_str()).unwrap(), a);
        assert_eq!(a.short().len(), 8);
    }

    #[test]
    fn parse_refuses_anything_else() {
        for bad in [
            "",
            "3f9c0a1e",
            "3F9C0A1E5B7D4C2A9E8F1B0C6D5A4E3F",
            "3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3g",
            "3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3f0",
            "../../../../../../etc/passwd.....",
            " 3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3",
        ] {
            let err = SessionId::parse(bad).unwrap_err();
            assert!(
                err.to_string().contains("32 lowercase hexadecimal"),
                "{err}"
            );
        }
    }

    #[test]
    fn serde_validates() {
        let id: SessionId = serde_json::from_str("\"3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3f\"").unwrap();
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3f\""
        );
        assert!(serde_json::from_str::<SessionId>("\"nope\"").is_err());
    }
}
