//! `[mcp.servers.NAME]` in the user's settings: the command that starts a
//! server, its arguments, environment (literal values or `$VAR` references),
//! working directory, timeouts, trust (of the server and of its tools'
//! annotations) and whether it is enabled. Checks the
//! shape only: it never reads a referenced variable and never starts anything.

use std::collections::BTreeMap;
use std::time::Duration;

use super::error::{ConfigError, KeyPath};
use super::raw::{RawMcp, RawMcpServer};
use super::settings::{EnvValue, McpServer};
use super::source::SourceFile;
use super::validate::{
    ABSOLUTE_ACCEPTED, ENV_NAME_ACCEPTED, absolute, check_server_name, is_env_name, ranged,
};

const ENV_VALUE_ACCEPTED: &str =
    "a literal value, or $NAME or ${NAME} to read the variable NAME from mino's environment";

/// Every server of the user's file, validated.
pub fn servers(src: &SourceFile, raw: &RawMcp) -> Result<BTreeMap<String, McpServer>, ConfigError> {
    let mut servers = BTreeMap::new();
    for (name, entry) in raw.servers.iter().flatten() {
        let key = KeyPath::of(&["mcp", "servers", name]);
        check_server_name(src, &key, name)?;
        servers.insert(name.clone(), server(src, &key, entry)?);
    }
    Ok(servers)
}

const COMMAND_ACCEPTED: &str =
    "the program that starts the server, or url = \"https://...\" for a streamable-HTTP server";

fn server(src: &SourceFile, key: &KeyPath, entry: &RawMcpServer) -> Result<McpServer, ConfigError> {
    let defaults = McpServer::default();
    if let Some(url) = &entry.url {
        return http_server(src, key, entry, url);
    }
    if entry.headers.is_some() {
        return Err(src.invalid(
            key.key("headers"),
            "headers without url",
            "headers only for a streamable-HTTP server given by url",
        ));
    }
    let command = match &entry.command {
        Some(command) if !command.trim().is_empty() => command.clone(),
        Some(_) => {
            return Err(src.invalid(key.key("command"), "an empty command", COMMAND_ACCEPTED));
        }
        None => {
            return Err(src.invalid(key.key("command"), "missing", COMMAND_ACCEPTED));
        }
    };
    let mut env = BTreeMap::new();
    for (variable, value) in entry.env.iter().flatten() {
        let at = key.key("env").key(variable);
        if !is_env_name(variable) {
            return Err(src.invalid(
                at,
                format!("{variable:?} is not an environment variable name"),
                ENV_NAME_ACCEPTED,
            ));
        }
        env.insert(variable.clone(), credential(src, at, value)?);
    }
    let cwd = match &entry.cwd {
        Some(dir) => {
            Some(absolute(dir).map_err(|p| src.invalid(key.key("cwd"), p, ABSOLUTE_ACCEPTED))?)
        }
        None => None,
    };
    Ok(McpServer {
        command,
        args: entry.args.clone().unwrap_or_default(),
        env,
        cwd,
        ..common(src, key, entry, defaults)?
    })
}

/// What every server has: enabled, trust and the timeouts.
fn common(
    src: &SourceFile,
    key: &KeyPath,
    entry: &RawMcpServer,
    defaults: McpServer,
) -> Result<McpServer, ConfigError> {
    let trust_ask = match entry.trust.as_deref() {
        None | Some("default") => false,
        Some("ask") => true,
        Some(other) => {
            return Err(src.invalid(
                key.key("trust"),
                format!("unknown trust {other:?}"),
                "\"default\" or \"ask\"",
            ));
        }
    };
    let seconds = |name: &str, value: Option<i64>, default: Duration, max: i64| match value {
        Some(secs) => ranged(src, key.key(name), secs, 1, max, " seconds").map(Duration::from_secs),
        None => Ok(default),
    };
    Ok(McpServer {
        enabled: entry.enabled.unwrap_or(true),
        trust_ask,
        trust_annotations: entry.trust_annotations.unwrap_or(false),
        startup_timeout: seconds(
            "startup_timeout_secs",
            entry.startup_timeout_secs,
            defaults.startup_timeout,
            600,
        )?,
        tool_timeout: seconds(
            "tool_timeout_secs",
            entry.tool_timeout_secs,
            defaults.tool_timeout,
            3600,
        )?,
        ..defaults
    })
}

/// A server given by `url`: no process, so none of the keys that start one.
fn http_server(
    src: &SourceFile,
    key: &KeyPath,
    entry: &RawMcpServer,
    url: &str,
) -> Result<McpServer, ConfigError> {
    let process_keys = [
        ("command", entry.command.is_some()),
        ("args", entry.args.is_some()),
        ("env", entry.env.is_some()),
        ("cwd", entry.cwd.is_some()),
    ];
    if let Some((field, _)) = process_keys.iter().find(|(_, present)| *present) {
        return Err(src.invalid(
            key.key(field),
            "given with url",
            "either command (with args, env, cwd) for a server mino starts, or url (with headers) for a streamable-HTTP server",
        ));
    }
    const URL_ACCEPTED: &str =
        "an http:// or https:// address without a user or password (put credentials in headers)";
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        src.invalid(
            key.key("url"),
            format!("{url:?} is not a URL ({e})"),
            URL_ACCEPTED,
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() {
        return Err(src.invalid(key.key("url"), format!("{url:?}"), URL_ACCEPTED));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(src.invalid(
            key.key("url"),
            "an address with a user or password",
            URL_ACCEPTED,
        ));
    }
    let mut headers = BTreeMap::new();
    for (name, value) in entry.headers.iter().flatten() {
        let at = key.key("headers").key(name);
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(src.invalid(
                at,
                format!("{name:?} is not an HTTP header name"),
                "letters, digits and !#$%&'*+-.^_`|~",
            ));
        }
        headers.insert(name.clone(), credential(src, at, value)?);
    }
    Ok(McpServer {
        url: Some(url.to_string()),
        headers,
        ..common(src, key, entry, McpServer::default())?
    })
}

/// An `env` or `headers` value: a literal or a reference.
fn credential(src: &SourceFile, at: KeyPath, value: &str) -> Result<EnvValue, ConfigError> {
    env_value(value).ok_or_else(|| {
        src.invalid(
            at,
            "a reference that does not name a variable",
            ENV_VALUE_ACCEPTED,
        )
    })
}

/// `$NAME` and `${NAME}` are references; any other text is a literal. A `$`
/// followed by something that is not a name is refused rather than guessed.
pub fn env_value(value: &str) -> Option<EnvValue> {
    let Some(rest) = value.strip_prefix('$') else {
        return Some(EnvValue::Literal(value.to_string()));
    };
    let name = match rest.strip_prefix('{') {
        Some(inner) => inner.strip_suffix('}')?,
        None => rest,
    };
    is_env_name(name).then(|| EnvValue::Variable(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_literals() {
        assert_eq!(
            env_value("$GITHUB_TOKEN"),
            Some(EnvValue::Variable("GITHUB_TOKEN".into()))
        );
        assert_eq!(env_value("${A_1}"), Some(EnvValue::Variable("A_1".into())));
        assert_eq!(env_value("plain"), Some(EnvValue::Literal("plain".into())));
        assert_eq!(env_value("a$B"), Some(EnvValue::Literal("a$B".into())));
        for bad in ["$", "${}", "${A", "$1A", "$A-B", "${A}x"] {
            assert_eq!(env_value(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_literal_is_never_printed_by_debug() {
        let text = format!("{:?}", EnvValue::Literal("s3cr3t".into()));
        assert!(!text.contains("s3cr3t"), "{text}");
    }
}
