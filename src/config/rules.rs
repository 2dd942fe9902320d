//! `[[rules]]`: each entry checked and built into a saved rule, its
//! `match` and `not_match` examples tried against it at load. A rule that
//! cannot be read, or whose examples disagree with it, stops mino with the
//! file, the rule and the example named. A project's file may add rules
//! that ask or deny, never one that allows.

use reqwest::Url;

use super::error::{ConfigError, KeyPath};
use super::raw::RawRule;
use super::source::SourceFile;
use crate::policy::saved::{Example, Matcher, Rule, RuleDecision, UrlParts};
use crate::policy::shell::list::literal_list;

const DECISIONS: &str = "\"allow\", \"ask\" or \"deny\"";

/// The parts of `url` a rule compares; `None` without a host.
pub fn url_parts(url: &Url) -> Option<UrlParts> {
    Some(UrlParts {
        scheme: url.scheme().to_string(),
        // `docs.rs.` is `docs.rs`: a rule must not miss the same host.
        host: url.host_str()?.trim_end_matches('.').to_string(),
        port: url.port(),
        path: url.path().to_string(),
    })
}

/// The rules of `src`, numbered on from `first`. `user_file` is where an
/// allow rule refused in a project's file belongs.
pub(super) fn rules(
    src: &SourceFile,
    raw: &[RawRule],
    first: usize,
    project: Option<&std::path::Path>,
) -> Result<Vec<Rule>, ConfigError> {
    raw.iter()
        .enumerate()
        .map(|(i, r)| rule(src, r, KeyPath::of(&["rules"]).index(i), first + i, project))
        .collect()
}

fn rule(
    src: &SourceFile,
    raw: &RawRule,
    key: KeyPath,
    number: usize,
    project: Option<&std::path::Path>,
) -> Result<Rule, ConfigError> {
    let tool = match raw.tool.as_deref() {
        Some(tool) if !tool.trim().is_empty() => tool,
        _ => {
            return Err(src.invalid(
                key.key("tool"),
                "a rule needs the tool it is for",
                "a tool name (bash, write_file, fetch_content, ...) or a glob (mcp_github_*)",
            ));
        }
    };
    let decision = match raw.decision.as_deref() {
        Some("allow") => RuleDecision::Allow,
        Some("ask") => RuleDecision::Ask,
        Some("deny") => RuleDecision::Deny,
        Some(other) => {
            return Err(src.invalid(
                key.key("decision"),
                format!("{other:?} is not a decision"),
                DECISIONS,
            ));
        }
        None => {
            return Err(src.invalid(key.key("decision"), "a rule needs a decision", DECISIONS));
        }
    };
    if let (Some(user_file), RuleDecision::Allow) = (project, decision) {
        return Err(src.loosening(
            key.key("decision"),
            format!(
                "= \"allow\" would loosen; a project's rules may ask or deny, and rules that allow belong in the user settings {}",
                user_file.display()
            ),
        ));
    }
    let matcher = matcher(src, raw, &key, tool, decision)?;
    let rule = Rule::new(number, tool, matcher, decision, raw.reason.clone()).map_err(|why| {
        src.invalid(
            key.key("tool"),
            format!("{tool:?} is not a glob: {why}"),
            "a tool name or a glob (mcp_github_*)",
        )
    })?;
    check_examples(src, raw, &key, &rule)?;
    Ok(rule)
}

fn matcher(
    src: &SourceFile,
    raw: &RawRule,
    key: &KeyPath,
    tool: &str,
    decision: RuleDecision,
) -> Result<Matcher, ConfigError> {
    let given = [
        ("command", raw.command.is_some()),
        ("path", raw.path.is_some()),
        ("url", raw.url.is_some()),
    ];
    let named: Vec<&str> = given.iter().filter(|(_, g)| *g).map(|(k, _)| *k).collect();
    if named.len() > 1 {
        return Err(src.invalid(
            key.key(named[1]),
            format!(
                "a rule has one matcher, and this one has {}",
                named.join(" and ")
            ),
            "one of command (bash), path (file tools) or url (fetch_content)",
        ));
    }
    if let Some(words) = &raw.command {
        if tool != "bash" {
            return Err(src.invalid(
                key.key("command"),
                format!("command matches bash calls, and this rule is for {tool:?}"),
                "tool = \"bash\" with command, path for file tools, url for fetch_content",
            ));
        }
        return command(src, key, words).map(Matcher::Command);
    }
    if let Some(globs) = &raw.path {
        if matches!(tool, "bash" | "fetch_content") {
            return Err(src.invalid(
                key.key("path"),
                format!("path matches file tools' paths, and {tool} has none to match"),
                "command for bash, url for fetch_content",
            ));
        }
        let globs = globs.clone();
        if globs.is_empty() || globs.iter().any(|g| g.is_empty()) {
            return Err(src.invalid(
                key.key("path"),
                "an empty glob matches nothing",
                "project-relative globs (src/**, *.md)",
            ));
        }
        return Matcher::paths(globs).map_err(|(glob, why)| {
            src.invalid(
                key.key("path"),
                format!("{glob:?} is not a glob: {why}"),
                "project-relative globs (src/**, *.md)",
            )
        });
    }
    if let Some(url) = &raw.url {
        if tool != "fetch_content" {
            return Err(src.invalid(
                key.key("url"),
                format!("url matches fetch_content calls, and this rule is for {tool:?}"),
                "tool = \"fetch_content\" with url",
            ));
        }
        return rule_url(url)
            .map(Matcher::Url)
            .map_err(|why| src.invalid(key.key("url"), why, URL_ACCEPTED));
    }
    if tool == "bash" && decision == RuleDecision::Allow {
        return Err(src.invalid(
            key.key("command"),
            "a rule that allows bash needs the command it allows",
            "command = [\"cargo\", \"test\"]: the words a command starts with",
        ));
    }
    Ok(Matcher::Any)
}

const URL_ACCEPTED: &str =
    "an http or https URL with a host and an optional path prefix (https://docs.rs/serde)";

fn rule_url(text: &str) -> Result<UrlParts, String> {
    let url = Url::parse(text).map_err(|e| format!("{text:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("the scheme {:?} is never fetched", url.scheme()));
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(format!(
            "{text:?} has a query, a fragment or a user name; a rule matches scheme, host and path"
        ));
    }
    url_parts(&url).ok_or_else(|| format!("{text:?} has no host"))
}

/// A command rule's words: plain literal words, the first not an
/// assignment.
fn command(src: &SourceFile, key: &KeyPath, words: &[String]) -> Result<Vec<String>, ConfigError> {
    const ACCEPTED: &str = "the plain words a command starts with, as argv: [\"cargo\", \"test\"]";
    if words.is_empty() {
        return Err(src.invalid(
            key.key("command"),
            "an empty command matches everything",
            ACCEPTED,
        ));
    }
    for (i, word) in words.iter().enumerate() {
        let plain = literal_list(word).is_some_and(|l| l == [vec![word.clone()]]);
        if !plain || (i == 0 && word.contains('=')) {
            return Err(src.invalid(
                key.key("command").index(i),
                format!("{word:?} is not one plain word of a command"),
                ACCEPTED,
            ));
        }
    }
    Ok(words.to_vec())
}

fn check_examples(
    src: &SourceFile,
    raw: &RawRule,
    key: &KeyPath,
    rule: &Rule,
) -> Result<(), ConfigError> {
    let lists = [
        (
            "match",
            raw.match_examples.as_deref().unwrap_or_default(),
            true,
        ),
        (
            "not_match",
            raw.not_match.as_deref().unwrap_or_default(),
            false,
        ),
    ];
    for (name, examples, want) in lists {
        for (i, text) in examples.iter().enumerate() {
            let at = key.key(name).index(i);
            let example = match &rule.matcher {
                Matcher::Url(_) => Example::Url(
                    Url::parse(text)
                        .ok()
                        .as_ref()
                        .and_then(url_parts)
                        .ok_or_else(|| {
                            src.invalid(at.clone(), format!("{text:?} is not a URL"), URL_ACCEPTED)
                        })?,
                ),
                Matcher::Path { .. } => Example::Path(text.trim_start_matches("./").to_string()),
                Matcher::Command(_) | Matcher::Any => Example::Command(text.clone()),
            };
            if rule.covers_example(&example) != want {
                let problem = if want {
                    format!("the example {text:?} does not match {}", rule.label())
                } else {
                    format!("the example {text:?} matches {}", rule.label())
                };
                let accepted = if want {
                    "match examples that the rule covers"
                } else {
                    "not_match examples that the rule leaves alone"
                };
                return Err(src.invalid(at, problem, accepted));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_compared_in_one_form() {
        for text in [
            "https://Docs.RS./serde",
            "https://docs.rs:443/serde",
            "https://u@docs.rs/serde",
        ] {
            let parts = url_parts(&Url::parse(text).unwrap()).unwrap();
            assert_eq!(
                (parts.host.as_str(), parts.port),
                ("docs.rs", None),
                "{text}"
            );
        }
        assert!(rule_url("https://docs.rs/?q=1").is_err());
        assert!(rule_url("ftp://docs.rs/").is_err());
    }
}
