//! The secret values of the home's credential stores that exist (the
//! literal entries of the one secret table: `~/.pgpass`, `~/.netrc`,
//! `~/.git-credentials`, `~/.vault-token`, `~/.docker/config.json`,
//! `~/.config/gh/hosts.yml`, `~/.aws/`, `~/.kube/`, ...), read by mino
//! itself at start so that a value copied elsewhere (a project's config
//! file holding the database password of `~/.pgpass`, a command run outside
//! the sandbox) is redacted from every result like the project's own.
//! Each store is read in its own format: `KEY=VALUE`, `key: value` and
//! JSON members whose name says credential, a `.pgpass` line's password,
//! `.netrc`'s `password`, URL credentials, a file that is one token, PEM
//! bodies. Bounded in files and bytes; binary stores (`.gnupg/`, keyrings,
//! the password store) and public keys are left alone. Never decides.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::secret_values::{Values, from_text, url_credentials};
use crate::secrets::MIN_SECRET_BYTES;

/// The largest store file read.
const FILE_LIMIT: u64 = 256 * 1024;
/// The most files read inside one store directory (`~/.aws/`, ...).
const DIR_FILES: usize = 32;
/// Stores that hold no text a value can be read from.
const BINARY_STORES: [&str; 3] = [".gnupg", ".local/share/keyrings", ".password-store"];

/// Every value of the credential stores under `home`.
pub fn home_values(home: &Path) -> Values {
    let mut values = Values::new();
    for rel in crate::policy::protected::home_secret_paths() {
        if BINARY_STORES.contains(&rel) {
            continue;
        }
        let path = home.join(rel);
        // A store may be a link (a dotfiles checkout): followed, since
        // mino only reads it to redact what it holds.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_file() {
            values.extend(store_values(&format!("~/{rel}"), &read(&path)));
        } else if meta.is_dir() {
            let Ok(entries) = std::fs::read_dir(&path) else {
                continue;
            };
            for entry in entries.flatten().take(DIR_FILES) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let public = name.ends_with(".pub")
                    || name.starts_with("known_hosts")
                    || name == "authorized_keys";
                if public || !entry.file_type().is_ok_and(|t| t.is_file()) {
                    continue;
                }
                let shown = format!("~/{rel}/{name}");
                values.extend(store_values(&shown, &read(&entry.path())));
            }
        }
    }
    values.retain(|(_, value)| value.len() >= MIN_SECRET_BYTES);
    values
}

/// At most `FILE_LIMIT` bytes of the regular file at `path` as text; a
/// FIFO or device swapped in is neither waited on nor read.
fn read(path: &Path) -> String {
    use rustix::fs::{Mode, OFlags};
    let mut text = String::new();
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(path, flags, Mode::empty()) else {
        return text;
    };
    let file = std::fs::File::from(fd);
    if file.metadata().is_ok_and(|m| m.is_file()) {
        let _ = file.take(FILE_LIMIT).read_to_string(&mut text);
    }
    text
}

/// Whether a member or key of that name holds a credential.
fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "token",
        "secret",
        "password",
        "passwd",
        "auth",
        "key",
        "credential",
        "private",
        "session",
        "cookie",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// The values in the text of the store shown as `shown`.
pub fn store_values(shown: &str, text: &str) -> Values {
    let name = |what: &str| format!("{what} in {shown}");
    let mut values: Values = from_text(shown, text)
        .into_iter()
        .filter(|(key, _)| key.starts_with("a key in ") || secret_name(key))
        .collect();
    values.extend(url_credentials(text));
    if let Ok(json) = serde_json::from_str::<Value>(text) {
        json_values(&json, false, &name("a credential"), &mut values);
    }
    let file = shown.rsplit('/').next().unwrap_or(shown);
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if file == ".pgpass" {
            // host:port:database:user:password, `\:` escaping a colon.
            if let Some(password) = nth_unescaped(line, 4) {
                values.push((name("a password"), password));
            }
            continue;
        }
        if file == ".netrc" {
            let words: Vec<&str> = line.split_whitespace().collect();
            for pair in words.windows(2) {
                if let [key, value] = pair
                    && matches!(*key, "password" | "passwd" | "account")
                {
                    values.push((name("a password"), (*value).to_string()));
                }
            }
            continue;
        }
        // YAML's `key: value` (gh's hosts.yml, a kube config).
        if let Some((key, value)) = line.split_once(':')
            && secret_name(key.trim().trim_start_matches("- "))
        {
            let value = value.trim().trim_matches(['"', '\'']);
            if !value.is_empty() && !value.contains(char::is_whitespace) {
                values.push((name("a credential"), value.to_string()));
            }
        }
    }
    // A store that is one token (`.vault-token`, huggingface's `token`).
    let whole = text.trim();
    if !whole.is_empty() && !whole.contains(char::is_whitespace) && !whole.contains(['=', '{']) {
        values.push((name("the token"), whole.to_string()));
    }
    values
}

/// The strings of members whose own name says credential (`named`),
/// anywhere in `json`: `auth`, `accessToken`, `refresh_token`, ... but not
/// the scopes or the e-mail beside them.
fn json_values(json: &Value, named: bool, name: &str, values: &mut Values) {
    match json {
        Value::String(text) if named => values.push((name.to_string(), text.clone())),
        Value::Array(items) => {
            for item in items {
                json_values(item, false, name, values);
            }
        }
        Value::Object(members) => {
            for (key, value) in members {
                json_values(value, secret_name(key), name, values);
            }
        }
        _ => {}
    }
}

/// The `n`th (from 0) `:`-separated field of `line` and all after it,
/// where `\:` and `\\` are escapes.
fn nth_unescaped(line: &str, n: usize) -> Option<String> {
    let mut field = 0;
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next()?;
                if field >= n {
                    out.push(next);
                }
            }
            ':' if field < n => field += 1,
            c if field >= n => out.push(c),
            _ => {}
        }
    }
    (field >= n && !out.is_empty()).then_some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn has(values: &Values, value: &str) -> bool {
        values.iter().any(|(_, v)| v == value)
    }

    #[test]
    fn each_store_is_read_in_its_own_format() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let write = |rel: &str, text: &str| {
            let path = h.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(".pgpass", "db.example:5432:*:app:pg-pa\\:ss-7781\n");
        write(
            ".netrc",
            "machine api.example login me password netrc-pass-5521\n",
        );
        write(
            ".git-credentials",
            "https://bot:ghp_cred_77123@github.com\n",
        );
        write(".vault-token", "hvs.vault-token-0042\n");
        write(
            ".docker/config.json",
            r#"{"auths":{"r.example":{"auth":"ZG9ja2VyOnB3ZDQ0"}}}"#,
        );
        write(
            ".config/gh/hosts.yml",
            "github.com:\n    oauth_token: gho_hosts_991\n    user: someone-long\n",
        );
        write(
            ".aws/credentials",
            "[default]\naws_secret_access_key = aws-secret-6612\nregion = eu-west-1a\n",
        );
        write(
            ".ssh/id_ed25519",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
        );
        write(
            ".ssh/id_ed25519.pub",
            "ssh-ed25519 AAAAC3NzaPUBLICPUBLIC me@host\n",
        );
        write(".gnupg/secring.gpg", "not read at all 12345678");
        write(
            ".claude/.credentials.json",
            r#"{"claudeAiOauth":{"accessToken":"sk-ant-oat-0099","scopes":["user:inference"]}}"#,
        );
        let values = home_values(h);
        for secret in [
            "pg-pa:ss-7781",
            "netrc-pass-5521",
            "ghp_cred_77123",
            "hvs.vault-token-0042",
            "ZG9ja2VyOnB3ZDQ0",
            "gho_hosts_991",
            "aws-secret-6612",
            "b3BlbnNzaC1rZXktdjEAAAAA",
            "sk-ant-oat-0099",
        ] {
            assert!(has(&values, secret), "{secret}: {values:?}");
        }
        // Ordinary settings beside them are no secret.
        for plain in [
            "eu-west-1a",
            "someone-long",
            "AAAAC3NzaPUBLICPUBLIC",
            "not read at all 12345678",
            "user:inference",
        ] {
            assert!(!has(&values, plain), "{plain}: {values:?}");
        }
        assert!(
            values.iter().any(|(n, _)| n.contains("~/.pgpass")),
            "{values:?}"
        );
    }

    #[test]
    fn a_linked_store_is_read_and_a_fifo_is_not_waited_on() {
        let home = tempfile::tempdir().unwrap();
        let elsewhere = home.path().join("elsewhere");
        std::fs::write(&elsewhere, "linked-token-value-1234").unwrap();
        std::os::unix::fs::symlink(&elsewhere, home.path().join(".vault-token")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            home.path().join(".pgpass"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let values = home_values(home.path());
        assert_eq!(values.len(), 1, "{values:?}");
        assert!(has(&values, "linked-token-value-1234"));
    }
}
