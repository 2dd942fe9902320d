//! Saved rules (`[[rules]]` in the settings): a tool, one matcher over what
//! the program established about the call (the command as the shell reader
//! parsed it, the project paths, the URL's parts), and a decision. They
//! match facts, never strings the model wrote: `cargo test` is the argv
//! words `cargo` and `test` at the start of a plainly literal command, not a
//! string prefix. Pure: the settings build them, `decide` reads them.

use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::Serialize;

use super::shell::list::{every_command, literal_list};
use super::{CallFacts, CallKind, PathTarget};

/// What a rule says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleDecision {
    Deny,
    Ask,
    Allow,
}

impl RuleDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleDecision::Deny => "deny",
            RuleDecision::Ask => "ask",
            RuleDecision::Allow => "allow",
        }
    }
}

/// A URL's parts, as the program parsed them (scheme and host lowercased,
/// the host in its ASCII form, the path percent-encoded with dot segments
/// removed); `port` is `None` for the scheme's default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    pub scheme: String,
    pub host: String,
    pub port: Option<u16>,
    pub path: String,
}

impl UrlParts {
    /// Whether `url` is at or below `self`: same scheme, host and port,
    /// and a path that starts with this path at a segment boundary
    /// (`/docs` covers `/docs` and `/docs/x`, never `/docsx`).
    fn covers(&self, url: &UrlParts) -> bool {
        if self.scheme != url.scheme || self.host != url.host || self.port != url.port {
            return false;
        }
        let prefix = self.path.as_str();
        match url.path.strip_prefix(prefix) {
            Some(rest) => prefix.ends_with('/') || rest.is_empty() || rest.starts_with('/'),
            None => false,
        }
    }
}

/// What a rule looks at.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Every call of the tool.
    Any,
    /// bash: these argv words first.
    Command(Vec<String>),
    /// File tools: every path the call touches matches one of the globs.
    Path {
        globs: Vec<String>,
        exact: GlobSet,
        folded: GlobSet,
    },
    /// fetch_content: the URL is at or below this one.
    Url(UrlParts),
}

impl Matcher {
    /// A path matcher over `globs` (`*` stays inside a component, `**`
    /// crosses them), or the glob globset refuses and why.
    pub fn paths(globs: Vec<String>) -> Result<Matcher, (String, String)> {
        let build = |fold: bool| {
            let mut set = GlobSetBuilder::new();
            for glob in &globs {
                let compiled = GlobBuilder::new(glob)
                    .literal_separator(true)
                    .case_insensitive(fold)
                    .build()
                    .map_err(|e| (glob.clone(), e.kind().to_string()))?;
                set.add(compiled);
            }
            set.build().map_err(|e| (String::new(), e.to_string()))
        };
        Ok(Matcher::Path {
            exact: build(false)?,
            folded: build(true)?,
            globs,
        })
    }

    /// The matcher as a person reads it, for record lines and reports.
    pub fn label(&self) -> String {
        match self {
            Matcher::Any => "any call".to_string(),
            Matcher::Command(words) => words.join(" "),
            Matcher::Path { globs, .. } => globs.join(", "),
            Matcher::Url(url) => {
                let port = url.port.map(|p| format!(":{p}")).unwrap_or_default();
                format!("{}://{}{port}{}", url.scheme, url.host, url.path)
            }
        }
    }
}

/// One `[[rules]]` entry, numbered from 1 in the order the settings give
/// them (the user's first, then the project's).
#[derive(Debug, Clone)]
pub struct Rule {
    pub number: usize,
    pub tool: String,
    tool_glob: GlobMatcher,
    pub matcher: Matcher,
    pub decision: RuleDecision,
    pub reason: Option<String>,
}

impl Rule {
    /// A rule for the tools `tool` names (a name or a glob), or globset's
    /// reason when the glob does not compile.
    pub fn new(
        number: usize,
        tool: &str,
        matcher: Matcher,
        decision: RuleDecision,
        reason: Option<String>,
    ) -> Result<Rule, String> {
        let tool_glob = Glob::new(tool)
            .map_err(|e| e.kind().to_string())?
            .compile_matcher();
        Ok(Rule {
            number,
            tool: tool.to_string(),
            tool_glob,
            matcher,
            decision,
            reason,
        })
    }

    /// `rule 3 (cargo test)`.
    pub fn label(&self) -> String {
        match self.matcher {
            Matcher::Any => format!("rule {} ({})", self.number, self.tool),
            _ => format!("rule {} ({})", self.number, self.matcher.label()),
        }
    }

    fn names(&self, facts: &CallFacts) -> bool {
        let key = facts.tool.as_str();
        // An asked agent's call is `agent/tool`; a private fetch is still
        // fetch_content to a rule.
        let tool = key.rsplit_once('/').map_or(key, |(_, t)| t);
        let tool = match facts.kind {
            CallKind::FetchPrivate => "fetch_content",
            _ => tool,
        };
        self.tool_glob.is_match(tool)
    }

    /// Whether this rule covers the call. An allow rule covers a bash call
    /// only when every command of its list starts with the rule's words
    /// (`allow_list`); deny and ask rules hold wherever their words start
    /// a command, nested ones included.
    fn covers(&self, facts: &CallFacts) -> bool {
        self.names(facts) && self.matches(facts)
    }

    /// The matcher's half of `covers`.
    fn matches(&self, facts: &CallFacts) -> bool {
        match &self.matcher {
            Matcher::Any => true,
            Matcher::Command(words) => {
                let Some(command) = facts.command.as_deref() else {
                    return false;
                };
                match self.decision {
                    RuleDecision::Allow => literal_list(command)
                        .is_some_and(|list| list.iter().all(|argv| argv.starts_with(words))),
                    _ => every_command(command).any_starts_with(words),
                }
            }
            Matcher::Path { exact, folded, .. } => {
                let set = match self.decision {
                    RuleDecision::Allow => exact,
                    _ => folded,
                };
                let mut relatives = facts.targets.iter().map(|t| match t {
                    PathTarget::Inside { relative, .. } => Some(relative.as_str()),
                    PathTarget::Outside { .. } => None,
                });
                match self.decision {
                    RuleDecision::Allow => {
                        !facts.targets.is_empty()
                            && relatives.all(|r| r.is_some_and(|r| set.is_match(r)))
                    }
                    _ => relatives.any(|r| r.is_some_and(|r| set.is_match(r))),
                }
            }
            // An allowed fetch saves nothing: a fetch with `output` is also a
            // write, which a URL does not speak for.
            Matcher::Url(rule) => {
                facts.url.as_ref().is_some_and(|url| rule.covers(url))
                    && (self.decision != RuleDecision::Allow || facts.targets.is_empty())
            }
        }
    }

    /// Whether this rule alone covers `example`, read as its matcher reads
    /// a call (a command line, a project-relative path or a URL's parts):
    /// what the settings check `match` and `not_match` with.
    pub fn covers_example(&self, example: &Example) -> bool {
        let mut facts = CallFacts::new(super::ToolKey::new(&self.tool), CallKind::Shell);
        match example {
            Example::Command(command) => facts.command = Some(command.clone()),
            Example::Path(relative) => {
                facts.targets.push(PathTarget::Inside {
                    relative: relative.clone(),
                    through_link: None,
                    hard_linked: false,
                });
            }
            Example::Url(url) => {
                facts.kind = CallKind::Fetch;
                facts.url = Some(Box::new(url.clone()));
            }
        }
        // The example names the rule's own tool, even when that is a glob.
        self.matches(&facts)
    }
}

/// A `match` or `not_match` example, read the way the rule's matcher reads
/// a call.
#[derive(Debug, Clone)]
pub enum Example {
    Command(String),
    Path(String),
    Url(UrlParts),
}

/// What the rules say about one call: the first deny, else the first ask,
/// else the first allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    pub decision: RuleDecision,
    pub number: usize,
    pub label: String,
    pub reason: Option<String>,
}

/// Every saved rule of the run.
#[derive(Debug, Clone, Default)]
pub struct SavedRules {
    rules: Vec<Rule>,
}

/// Two sets are the same when they hold the same rules in the same order.
impl PartialEq for SavedRules {
    fn eq(&self, other: &Self) -> bool {
        self.rules.len() == other.rules.len()
            && self.rules.iter().zip(&other.rules).all(|(a, b)| {
                (a.number, &a.tool, a.decision, &a.reason, a.matcher.label())
                    == (b.number, &b.tool, b.decision, &b.reason, b.matcher.label())
            })
    }
}

impl SavedRules {
    pub fn new(rules: Vec<Rule>) -> Self {
        Self { rules }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rule that decides `facts`: deny before ask before allow, the
    /// lowest number first within each. A bash list is allowed when each
    /// of its commands is allowed by a rule of its own.
    pub fn ruling(&self, facts: &CallFacts) -> Option<Ruling> {
        let ruling = |r: &Rule| Ruling {
            decision: r.decision,
            number: r.number,
            label: r.label(),
            reason: r.reason.clone(),
        };
        let refusing = self
            .rules
            .iter()
            .filter(|r| r.decision != RuleDecision::Allow && r.covers(facts))
            .min_by_key(|r| (r.decision, r.number));
        if let Some(rule) = refusing {
            return Some(ruling(rule));
        }
        let allowing = |r: &&Rule| r.decision == RuleDecision::Allow && r.names(facts);
        if let Some(rule) = self
            .rules
            .iter()
            .filter(allowing)
            .find(|r| !matches!(r.matcher, Matcher::Command(_)) && r.matches(facts))
        {
            return Some(ruling(rule));
        }
        let command_rules: Vec<(&Rule, &[String])> = self
            .rules
            .iter()
            .filter(allowing)
            .filter_map(|r| match &r.matcher {
                Matcher::Command(words) => Some((r, words.as_slice())),
                _ => None,
            })
            .collect();
        if command_rules.is_empty() {
            return None;
        }
        let list = literal_list(facts.command.as_deref()?)?;
        let mut used: Vec<&Rule> = Vec::new();
        for argv in &list {
            let (rule, _) = command_rules.iter().find(|(_, w)| argv.starts_with(w))?;
            if !used.iter().any(|u| u.number == rule.number) {
                used.push(rule);
            }
        }
        used.sort_by_key(|r| r.number);
        let first = used.first()?;
        if used.len() == 1 {
            return Some(ruling(first));
        }
        let numbers: Vec<String> = used.iter().map(|r| r.number.to_string()).collect();
        let words: Vec<String> = used.iter().map(|r| r.matcher.label()).collect();
        Some(Ruling {
            decision: RuleDecision::Allow,
            number: first.number,
            label: format!("rules {} ({})", numbers.join(", "), words.join("; ")),
            reason: None,
        })
    }
}

#[cfg(test)]
mod tests;
