//! Settings against real files in temporary directories: defaults, every
//! class of bad file, what a project file may and may not do, precedence of
//! the layers, the home's private modes, and `config.example.toml` kept in
//! step with the raw structs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mino::config::raw::RawFile;
use mino::config::{CliOverrides, ConfigError, EnvOverrides, ProviderKind, Settings};
use mino::home::{Home, create_private_file};
use mino::policy::{MODE_NAMES, Mode};
use tempfile::TempDir;

struct Fixture {
    _dir: TempDir,
    home: Home,
    project: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path().join("home")).unwrap();
        home.ensure().unwrap();
        let project = dir.path().join("project");
        fs::create_dir_all(project.join(".mino")).unwrap();
        Self {
            _dir: dir,
            home,
            project,
        }
    }

    fn user(&self, text: &str) -> &Self {
        fs::write(self.user_file(), text).unwrap();
        self
    }

    fn project(&self, text: &str) -> &Self {
        fs::write(self.project_file(), text).unwrap();
        self
    }

    fn user_file(&self) -> PathBuf {
        self.home.config_file()
    }

    fn project_file(&self) -> PathBuf {
        self.project.join(".mino/config.toml")
    }

    fn load_with(&self, env: &EnvOverrides, cli: &CliOverrides) -> Result<Settings, ConfigError> {
        Settings::load(&self.home, &self.project, env, cli)
    }

    fn load(&self) -> Result<Settings, ConfigError> {
        self.load_with(&EnvOverrides::default(), &CliOverrides::default())
    }

    fn error(&self) -> ConfigError {
        match self.load() {
            Ok(settings) => panic!("expected an error, loaded {settings:?}"),
            Err(e) => e,
        }
    }
}

fn yolo_env(value: &str) -> EnvOverrides {
    EnvOverrides {
        agent_yolo: Some(value.to_string()),
    }
}

/// The error's text names the file, the key and the line, and its fields
/// agree.
fn assert_names(err: &ConfigError, file: &Path, key: &str, line: usize) {
    let text = err.to_string();
    assert!(
        text.contains(&file.display().to_string()),
        "no file in: {text}"
    );
    assert!(text.contains(key), "no key {key} in: {text}");
    assert!(
        text.contains(&format!(":{line}:")),
        "no line {line} in: {text}"
    );
    assert_eq!(err.file(), Some(file), "{text}");
    assert_eq!(
        err.key().map(ToString::to_string).as_deref(),
        Some(key),
        "{text}"
    );
    assert_eq!(err.line(), Some(line), "{text}");
}

// ---- defaults and a valid user file -------------------------------------

#[test]
fn no_files_means_the_built_in_defaults() {
    let fx = Fixture::new();
    let s = fx.load().unwrap();
    assert_eq!(s.start_mode, Mode::Manual);
    assert_eq!(s.model.provider, ProviderKind::OpenAiResponses);
    assert_eq!(s.model.base_url, "https://api.openai.com/v1");
    assert_eq!(s.model.model, "gpt-5-mini");
    assert_eq!(s.model.api_key_env, "OPENAI_API_KEY");
    // gpt-5-mini's window, from the built-in table.
    assert_eq!(s.model.context_window, 400_000);
    assert_eq!(s.model.request_timeout, Duration::from_secs(60));
    assert_eq!(s.model.max_retries, 3);
    assert!(s.model.extra_body.is_empty());
    assert_eq!(s.model.script, None);
    assert!(s.tools.bash && s.tools.edit && s.tools.fetch);
    assert_eq!(s.limits.bash_timeout, Duration::from_secs(30));
    assert_eq!(s.limits.bash_output_bytes, 65_536);
    assert_eq!(s.limits.turn_requests, 8);
    assert_eq!(s.limits.turn_tool_calls, 16);
    assert!(s.protected_patterns.is_empty());
    assert!(s.shell_gate.trusted_executables.is_empty());
    assert_eq!(s.shell_gate.git, None);
    assert!(!s.shell_gate.judge.enabled);
    assert_eq!(s.shell_gate.judge.timeout, Duration::from_secs(10));
    assert_eq!(s.hooks.legacy, None);
    assert!(s.warnings.is_empty());
    assert!(s.mcp_servers.is_empty());
    assert!(s.sources.is_empty());
    assert!(s.protected().is_protected(".env"));
}

#[test]
fn a_full_user_file_is_read_and_typed() {
    let fx = Fixture::new();
    fx.user(
        r#"
default_mode = "auto"

[model]
provider = "anthropic"
context_window = 200000
extra_body = { thinking = { type = "enabled", budget_tokens = 1024 }, temperature = 0.5, stop = ["a", "b"] }
request_timeout_secs = 90
max_retries = 0

[tools]
fetch = false

[limits]
bash_timeout_secs = 5
bash_output_bytes = 4096
turn_requests = 3
turn_tool_calls = 4

[protected]
patterns = ["*.sqlite", "secrets/"]

[shell_gate]
trusted_executables = [{ path = "/usr/bin/ls" }, { path = "/usr/bin/git", sha256 = "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789" }]
git = "/usr/bin/git"

[shell_gate.judge]
enabled = true
timeout_secs = 4

[hooks]
pre_tool_call = ["/usr/local/bin/check", "--strict"]

[mcp.servers.docs]
command = "docs-server"
args = ["--stdio"]
env = { DOCS_TOKEN_FILE = "/tmp/t" }
trust = "ask"

[mcp.servers.plain]
command = "/usr/bin/plain"
"#,
    );
    let s = fx.load().unwrap();
    assert_eq!(s.start_mode, Mode::Auto);
    assert_eq!(s.model.provider, ProviderKind::Anthropic);
    assert_eq!(s.model.base_url, "https://api.anthropic.com/v1");
    assert_eq!(s.model.api_key_env, "ANTHROPIC_API_KEY");
    assert_eq!(s.model.context_window, 200_000);
    assert_eq!(
        serde_json::Value::Object(s.model.extra_body.clone()),
        serde_json::json!({
            "thinking": { "type": "enabled", "budget_tokens": 1024 },
            "temperature": 0.5,
            "stop": ["a", "b"],
        })
    );
    assert_eq!(s.model.request_timeout, Duration::from_secs(90));
    assert_eq!(s.model.max_retries, 0);
    assert!(s.tools.bash && s.tools.edit && !s.tools.fetch);
    assert_eq!(s.limits.bash_timeout, Duration::from_secs(5));
    assert_eq!(s.limits.bash_output_bytes, 4096);
    assert_eq!((s.limits.turn_requests, s.limits.turn_tool_calls), (3, 4));
    assert_eq!(s.protected_patterns, ["*.sqlite", "secrets/"]);
    assert!(s.protected().is_protected("data/app.sqlite"));
    assert!(s.protected().is_protected("secrets/x"));
    assert_eq!(s.shell_gate.trusted_executables.len(), 2);
    assert_eq!(
        s.shell_gate.trusted_executables[1].sha256.as_deref(),
        Some("abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
    );
    assert_eq!(s.shell_gate.git.as_deref(), Some(Path::new("/usr/bin/git")));
    assert!(s.shell_gate.judge.enabled);
    assert_eq!(s.shell_gate.judge.timeout, Duration::from_secs(4));
    assert!(s.warnings[0].contains("hooks.pre_tool_call is deprecated"));
    assert_eq!(
        s.hooks.legacy,
        Some(vec![
            "/usr/local/bin/check".to_string(),
            "--strict".to_string()
        ])
    );
    let docs = &s.mcp_servers["docs"];
    assert_eq!(docs.command, "docs-server");
    assert_eq!(docs.args, ["--stdio"]);
    assert_eq!(
        docs.env["DOCS_TOKEN_FILE"],
        mino::config::EnvValue::Literal("/tmp/t".into())
    );
    assert!(docs.trust_ask);
    assert!(!s.mcp_servers["plain"].trust_ask);
    assert_eq!(s.sources, [fx.user_file()]);
}

#[test]
fn a_script_path_is_relative_to_the_file_that_names_it() {
    let fx = Fixture::new();
    fx.user("[model]\nprovider = \"scripted\"\nscript = \"scripts/demo.script\"\n");
    let s = fx.load().unwrap();
    assert_eq!(s.model.provider, ProviderKind::Scripted);
    assert_eq!(
        s.model.script,
        Some(fx.home.root().join("scripts/demo.script"))
    );
}

#[test]
fn a_base_url_loses_its_trailing_slash() {
    let fx = Fixture::new();
    fx.user("[model]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:11434/v1/\"\nmodel = \"qwen3\"\n");
    let s = fx.load().unwrap();
    assert_eq!(s.model.base_url, "http://127.0.0.1:11434/v1");
    assert_eq!(s.model.model, "qwen3");
}

// ---- bad user files -----------------------------------------------------

#[test]
fn a_syntax_error_names_file_key_and_line() {
    let fx = Fixture::new();
    fx.user("yolo = false\n[model]\nprovider = \"openai-chat\n");
    let err = fx.error();
    assert!(matches!(err, ConfigError::Syntax { .. }), "{err}");
    assert_names(&err, &fx.user_file(), "model.provider", 3);
}

#[test]
fn an_unknown_key_names_the_keys_its_table_accepts() {
    let fx = Fixture::new();
    fx.user("[model]\nprovider = \"openai-chat\"\ntemperature = 0.2\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "model.temperature", 3);
    let text = err.to_string();
    assert!(text.contains("unknown key"), "{text}");
    for accepted in ["provider", "base_url", "context_window", "extra_body"] {
        assert!(text.contains(accepted), "{accepted} missing from: {text}");
    }
}

#[test]
fn an_unknown_table_and_an_unknown_nested_key_are_named() {
    let fx = Fixture::new();
    fx.user("yolo = false\n\n[modle]\nprovider = \"x\"\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "modle", 3);
    assert!(err.to_string().contains("default_mode"), "{err}");

    fx.user("[shell_gate]\ntrusted_executables = [\n  { path = \"/bin/ls\", sha = \"x\" },\n]\n");
    let err = fx.error();
    assert_names(
        &err,
        &fx.user_file(),
        "shell_gate.trusted_executables[0].sha",
        3,
    );
}

#[test]
fn a_wrong_type_names_the_type_accepted() {
    let fx = Fixture::new();
    fx.user("[limits]\nbash_timeout_secs = 30\nturn_requests = \"eight\"\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "limits.turn_requests", 3);
    assert!(err.to_string().contains("an integer"), "{err}");

    fx.user("[tools]\nbash = \"no\"\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "tools.bash", 2);
    assert!(err.to_string().contains("true or false"), "{err}");
}

#[test]
fn an_unknown_provider_names_the_providers() {
    let fx = Fixture::new();
    fx.user("# mine\n[model]\nprovider = \"openai\"\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "model.provider", 3);
    assert!(
        err.to_string()
            .contains("openai-responses, openai-chat, anthropic, scripted"),
        "{err}"
    );
}

#[test]
fn an_invalid_mode_name_names_the_modes() {
    let fx = Fixture::new();
    fx.user("\n\ndefault_mode = \"careful\"\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "default_mode", 3);
    assert!(err.to_string().contains(MODE_NAMES), "{err}");
}

#[test]
fn a_bad_protected_pattern_is_named() {
    let fx = Fixture::new();
    fx.user("[protected]\npatterns = [\n  \"*.sqlite\",\n  \"[unclosed\",\n]\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "protected.patterns[1]", 4);
    assert!(err.to_string().contains("[unclosed"), "{err}");
}

/// `[[hooks.EVENT]]`: an event mino does not know, a matcher that is not a
/// regular expression, a hook without a command or of another type, and a
/// timeout out of range are each named with the file, the key, the line and
/// what is accepted.
#[test]
fn bad_claude_code_hooks_are_named() {
    let fx = Fixture::new();
    fx.user("[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"true\" }]\n\n[[hooks.SubagentStop]]\nmatcher = \"\"\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "hooks.SubagentStop", 5);
    for accepted in [
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "SessionStart",
        "Notification",
        "PermissionRequest",
    ] {
        assert!(err.to_string().contains(accepted), "{err}");
    }

    fx.user("[[hooks.PreToolUse]]\nmatcher = \"Bash(\"\nhooks = [{ type = \"command\", command = \"true\" }]\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "hooks.PreToolUse[0].matcher", 2);
    assert!(err.to_string().contains("regular expression"), "{err}");
    assert!(err.to_string().contains("mcp__server__tool"), "{err}");

    fx.user("[[hooks.PostToolUse]]\nmatcher = \"*\"\n\n[[hooks.PostToolUse]]\nhooks = [{ type = \"command\", command = \"true\" }, { type = \"command\", timeout = 5 }]\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "hooks.PostToolUse[0].hooks", 1);
    fx.user("[[hooks.PostToolUse]]\nhooks = [{ type = \"command\", command = \"true\" }, { type = \"command\", timeout = 5 }]\n");
    let err = fx.error();
    assert_names(
        &err,
        &fx.user_file(),
        "hooks.PostToolUse[0].hooks[1].command",
        2,
    );
    assert!(err.to_string().contains("shell command"), "{err}");

    fx.user("[[hooks.Stop]]\nhooks = [{ type = \"prompt\", command = \"true\" }]\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "hooks.Stop[0].hooks[0].type", 2);
    assert!(err.to_string().contains("type = \"command\""), "{err}");

    fx.user("[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"true\", timeout = 0 }]\n");
    assert_names(
        &fx.error(),
        &fx.user_file(),
        "hooks.Stop[0].hooks[0].timeout",
        2,
    );

    fx.user("[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"true\", async = true }]\n");
    assert!(fx.error().to_string().contains("async"), "{}", fx.error());

    // A project's file names no hook, in the new form either.
    fx.user("yolo = false\n")
        .project("[[hooks.SessionStart]]\nhooks = [{ type = \"command\", command = \"true\" }]\n");
    let err = fx.error();
    assert!(matches!(err, ConfigError::Loosening { .. }), "{err}");
    assert_names(&err, &fx.project_file(), "hooks", 1);
}

#[test]
fn a_relative_hook_path_is_refused() {
    let fx = Fixture::new();
    fx.user("[hooks]\npre_tool_call = [\"hooks/check\", \"--strict\"]\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "hooks.pre_tool_call[0]", 2);
    assert!(err.to_string().contains("absolute path"), "{err}");

    fx.user("[hooks]\npre_tool_call = []\n");
    assert_names(&fx.error(), &fx.user_file(), "hooks.pre_tool_call", 2);
}

#[test]
fn bad_values_are_named_with_what_is_accepted() {
    let cases: &[(&str, &str, usize, &str)] = &[
        (
            "[model]\ncontext_window = 0\n",
            "model.context_window",
            2,
            "from 1 to",
        ),
        (
            "[model]\nbase_url = \"ftp://example.com\"\n",
            "model.base_url",
            2,
            "https://",
        ),
        (
            "[model]\nbase_url = \"not a url\"\n",
            "model.base_url",
            2,
            "https://",
        ),
        ("[model]\nmodel = \"\"\n", "model.model", 2, "model name"),
        (
            "[model]\napi_key_env = \"MY-KEY\"\n",
            "model.api_key_env",
            2,
            "environment variable",
        ),
        (
            "[model]\nmax_retries = 99\n",
            "model.max_retries",
            2,
            "from 0 to 10",
        ),
        (
            "[model]\nextra_body = { t = nan }\n",
            "model.extra_body.t",
            2,
            "finite",
        ),
        (
            "[model]\nmax_tokens_field = \"max_output_tokens\"\n",
            "model.max_tokens_field",
            2,
            "\"max_completion_tokens\", \"max_tokens\"",
        ),
        (
            "[model.prices.gpt-5]\ninput = -1\noutput = 10\n",
            "model.prices.gpt-5.input",
            2,
            "US dollars per million tokens",
        ),
        (
            "[model.prices.gpt-5]\ninput = 1.25\n",
            "model.prices.gpt-5.output",
            1,
            "US dollars per million tokens",
        ),
        (
            "[model]\nmodels = [\"gpt-5\", \"gpt 5\"]\n",
            "model.models[1]",
            2,
            "a model's name",
        ),
        (
            "[model]\nprovider = \"scripted\"\n",
            "model.script",
            1,
            "script file",
        ),
        (
            "[limits]\nbash_output_bytes = -1\n",
            "limits.bash_output_bytes",
            2,
            "from 1024",
        ),
        (
            "[limits]\nturn_tool_calls = 0\n",
            "limits.turn_tool_calls",
            2,
            "from 1",
        ),
        (
            "yolo = true\ndefault_mode = \"manual\"\n",
            "yolo",
            1,
            "both saying the same",
        ),
        (
            "[shell_gate]\ngit = \"git\"\n",
            "shell_gate.git",
            2,
            "absolute path",
        ),
        (
            "[shell_gate]\ntrusted_executables = [{ path = \"/usr/bin/git\", sha256 = \"abc\" }]\n",
            "shell_gate.trusted_executables[0].sha256",
            2,
            "64 hexadecimal",
        ),
        (
            "[shell_gate]\ntrusted_executables = [{ path = \"/usr/../bin/sh\" }]\n",
            "shell_gate.trusted_executables[0].path",
            2,
            "absolute path",
        ),
        (
            "[shell_gate.judge]\ntimeout_secs = 0\n",
            "shell_gate.judge.timeout_secs",
            2,
            "from 1 to 120",
        ),
        (
            "[shell_gate.judge]\nenabled = true\n",
            "shell_gate.judge.enabled",
            2,
            "shell_gate.git = an absolute path",
        ),
        (
            "[mcp.servers.docs]\nargs = []\n",
            "mcp.servers.docs.command",
            1,
            "starts the server",
        ),
        (
            "[mcp.servers.docs]\ncommand = \"d\"\ntrust = \"never\"\n",
            "mcp.servers.docs.trust",
            3,
            "\"ask\"",
        ),
        (
            "[mcp.servers.\"a b\"]\ncommand = \"d\"\n",
            "mcp.servers.\"a b\"",
            1,
            "server name",
        ),
    ];
    for (text, key, line, accepted) in cases {
        let fx = Fixture::new();
        fx.user(text);
        let err = fx.error();
        assert_names(&err, &fx.user_file(), key, *line);
        assert!(
            err.to_string().contains(accepted),
            "{accepted:?} missing from: {err}"
        );
    }
}

#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let fx = Fixture::new();
    fs::create_dir(fx.user_file()).unwrap();
    let err = fx.error();
    assert!(matches!(err, ConfigError::File(_)), "{err}");
    assert!(
        err.to_string()
            .contains(&fx.user_file().display().to_string()),
        "{err}"
    );
}

// ---- the project file ---------------------------------------------------

#[test]
fn a_project_file_cannot_loosen() {
    let cases: &[(&str, &str, usize)] = &[
        ("default_mode = \"bypass\"\n", "default_mode", 1),
        ("\nyolo = true\n", "yolo", 2),
        ("[hooks]\npre_tool_call = [\"/bin/true\"]\n", "hooks", 1),
        (
            "[shell_gate]\ntrusted_executables = [{ path = \"/bin/sh\" }]\n",
            "shell_gate",
            1,
        ),
        (
            "[model]\nbase_url = \"https://evil.example/v1\"\n",
            "model",
            1,
        ),
        ("[limits]\nturn_requests = 100\n", "limits", 1),
        (
            "[providers.evil]\nprovider = \"openai-chat\"\nbase_url = \"https://evil.example/v1\"\n",
            "providers",
            1,
        ),
    ];
    for (text, key, line) in cases {
        let fx = Fixture::new();
        fx.user("yolo = false\n").project(text);
        let err = fx.error();
        assert!(matches!(err, ConfigError::Loosening { .. }), "{err}");
        assert_names(&err, &fx.project_file(), key, *line);
        let text = err.to_string();
        assert!(
            text.contains("a project's settings can only tighten"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "is only accepted in the user settings {}",
                fx.user_file().display()
            )),
            "{text}"
        );
    }
}

#[test]
fn a_project_file_cannot_turn_a_tool_on_or_define_a_server() {
    let fx = Fixture::new();
    fx.user("[tools]\nbash = false\n[mcp.servers.docs]\ncommand = \"d\"\n");

    fx.project("[tools]\nedit = false\nbash = true\n");
    let err = fx.error();
    assert!(matches!(err, ConfigError::Loosening { .. }), "{err}");
    assert_names(&err, &fx.project_file(), "tools.bash", 3);
    assert!(err.to_string().contains("accepted here: false"), "{err}");

    fx.project("[mcp.servers.docs]\ntrust = \"ask\"\ncommand = \"/bin/evil\"\n");
    assert_names(
        &fx.error(),
        &fx.project_file(),
        "mcp.servers.docs.command",
        3,
    );

    fx.project("[mcp.servers.other]\ntrust = \"ask\"\n");
    let err = fx.error();
    assert_names(&err, &fx.project_file(), "mcp.servers.other", 1);
    assert!(err.to_string().contains("do not define"), "{err}");

    fx.project("[mcp.servers.docs]\ntrust = \"default\"\n");
    assert_names(&fx.error(), &fx.project_file(), "mcp.servers.docs.trust", 2);

    // Turning a server on, or changing how it runs, is the user's business.
    for (text, key) in [
        ("[mcp.servers.docs]\nenabled = true\n", "enabled"),
        ("[mcp.servers.docs]\ncwd = \"/tmp\"\n", "cwd"),
        ("[mcp.servers.docs]\nenv = { A = \"b\" }\n", "env"),
        (
            "[mcp.servers.docs]\ntool_timeout_secs = 9\n",
            "tool_timeout_secs",
        ),
    ] {
        fx.project(text);
        let err = fx.error();
        assert!(matches!(err, ConfigError::Loosening { .. }), "{err}");
        assert_names(
            &err,
            &fx.project_file(),
            &format!("mcp.servers.docs.{key}"),
            2,
        );
    }
}

#[test]
fn mcp_server_keys_are_checked() {
    let fx = Fixture::new();
    fx.user(
        "[mcp.servers.gh]\ncommand = \"gh-mcp\"\nenv = { TOKEN = \"$GITHUB_TOKEN\", PLAIN = \"x y\", BRACED = \"${B_1}\" }\ncwd = \"/srv\"\nenabled = false\nstartup_timeout_secs = 5\ntool_timeout_secs = 600\n",
    );
    let s = fx.load().unwrap();
    let gh = &s.mcp_servers["gh"];
    assert_eq!(
        gh.env["TOKEN"],
        mino::config::EnvValue::Variable("GITHUB_TOKEN".into())
    );
    assert_eq!(
        gh.env["PLAIN"],
        mino::config::EnvValue::Literal("x y".into())
    );
    assert_eq!(
        gh.env["BRACED"],
        mino::config::EnvValue::Variable("B_1".into())
    );
    assert_eq!(gh.cwd.as_deref(), Some(Path::new("/srv")));
    assert!(!gh.enabled);
    assert_eq!(gh.startup_timeout, Duration::from_secs(5));
    assert_eq!(gh.tool_timeout, Duration::from_secs(600));
    for (text, key, accepted) in [
        ("env = { T = \"$\" }", "mcp.servers.gh.env.T", "$NAME"),
        ("env = { T = \"${A\" }", "mcp.servers.gh.env.T", "$NAME"),
        ("cwd = \"relative\"", "mcp.servers.gh.cwd", "absolute path"),
        (
            "startup_timeout_secs = 0",
            "mcp.servers.gh.startup_timeout_secs",
            "from 1 to 600",
        ),
        (
            "tool_timeout_secs = 99999",
            "mcp.servers.gh.tool_timeout_secs",
            "from 1 to 3600",
        ),
    ] {
        let fx = Fixture::new();
        fx.user(&format!("[mcp.servers.gh]\ncommand = \"gh-mcp\"\n{text}\n"));
        let err = fx.error();
        assert_names(&err, &fx.user_file(), key, 3);
        assert!(
            err.to_string().contains(accepted),
            "{accepted:?} missing from: {err}"
        );
    }
}

/// Trusting a server's claim that a tool only reads loosens: the user's
/// settings say it, a project's may only say false.
#[test]
fn trust_annotations_is_the_users_word_only() {
    let fx = Fixture::new();
    fx.user("[mcp.servers.docs]\ncommand = \"d\"\ntrust_annotations = true\n[mcp.servers.web]\ncommand = \"w\"\n");
    let s = fx.load().unwrap();
    assert!(s.mcp_servers["docs"].trust_annotations);
    assert!(!s.mcp_servers["web"].trust_annotations);

    fx.project("[mcp.servers.web]\ntrust_annotations = true\n");
    let err = fx.error();
    assert!(matches!(err, ConfigError::Loosening { .. }), "{err}");
    assert_names(
        &err,
        &fx.project_file(),
        "mcp.servers.web.trust_annotations",
        2,
    );
    assert!(
        err.to_string().contains(&format!(
            "is only accepted in the user settings {}",
            fx.user_file().display()
        )),
        "{err}"
    );

    fx.project("[mcp.servers.docs]\ntrust_annotations = false\n");
    let s = fx.load().unwrap();
    assert!(!s.mcp_servers["docs"].trust_annotations);

    fx.user("[mcp.servers.docs]\ncommand = \"d\"\ntrust_annotations = \"yes\"\n");
    fx.project("");
    assert_names(
        &fx.error(),
        &fx.user_file(),
        "mcp.servers.docs.trust_annotations",
        3,
    );
}

#[test]
fn a_project_file_can_disable_a_server() {
    let fx = Fixture::new();
    fx.user("[mcp.servers.docs]\ncommand = \"d\"\n")
        .project("[mcp.servers.docs]\nenabled = false\n");
    let s = fx.load().unwrap();
    assert!(!s.mcp_servers["docs"].enabled);
}

#[test]
fn a_project_file_can_tighten() {
    let fx = Fixture::new();
    fx.user(
        "default_mode = \"accept-edits\"\n[protected]\npatterns = [\"*.sqlite\"]\n[mcp.servers.docs]\ncommand = \"d\"\n[mcp.servers.web]\ncommand = \"w\"\n",
    )
    .project(
        "[protected]\npatterns = [\"fixtures/\", \"*.sqlite\"]\n[tools]\nbash = false\nfetch = false\n[mcp.servers.docs]\ntrust = \"ask\"\n",
    );
    let s = fx.load().unwrap();
    assert_eq!(s.start_mode, Mode::AcceptEdits);
    assert_eq!(s.protected_patterns, ["*.sqlite", "fixtures/"]);
    assert!(s.protected().is_protected("fixtures/data.json"));
    assert!(s.protected().is_protected(".env"));
    assert!(!s.tools.bash && s.tools.edit && !s.tools.fetch);
    assert!(s.mcp_servers["docs"].trust_ask);
    assert!(!s.mcp_servers["web"].trust_ask);
    assert_eq!(s.sources, [fx.user_file(), fx.project_file()]);
}

#[test]
fn a_bad_project_pattern_names_the_project_file() {
    let fx = Fixture::new();
    fx.project("[protected]\npatterns = [\"a{b\"]\n");
    let err = fx.error();
    assert_names(&err, &fx.project_file(), "protected.patterns[0]", 2);
}

#[test]
fn a_project_file_alone_is_read_without_a_user_file() {
    let fx = Fixture::new();
    fx.project("[tools]\nedit = false\n");
    let s = fx.load().unwrap();
    assert!(!s.tools.edit);
    assert_eq!(s.sources, [fx.project_file()]);
}

// ---- precedence ---------------------------------------------------------

#[test]
fn environment_and_command_line_override_the_files_in_order() {
    let fx = Fixture::new();
    fx.user("default_mode = \"auto\"\n");
    let none = CliOverrides::default();
    assert_eq!(fx.load().unwrap().start_mode, Mode::Auto);
    assert_eq!(
        fx.load_with(&yolo_env("1"), &none).unwrap().start_mode,
        Mode::Bypass
    );
    assert_eq!(
        fx.load_with(&yolo_env("yes"), &none).unwrap().start_mode,
        Mode::Bypass
    );
    assert_eq!(
        fx.load_with(&yolo_env("0"), &none).unwrap().start_mode,
        Mode::Manual
    );
    assert_eq!(
        fx.load_with(&yolo_env("FALSE"), &none).unwrap().start_mode,
        Mode::Manual
    );

    let mode_flag = CliOverrides {
        mode: Some(Mode::AcceptEdits),
        ..CliOverrides::default()
    };
    assert_eq!(
        fx.load_with(&yolo_env("1"), &mode_flag).unwrap().start_mode,
        Mode::AcceptEdits
    );
    let yolo_flag = CliOverrides {
        yolo: true,
        ..CliOverrides::default()
    };
    assert_eq!(
        fx.load_with(&yolo_env("0"), &yolo_flag).unwrap().start_mode,
        Mode::Bypass
    );
}

#[test]
fn agent_yolo_zero_wins_over_a_yolo_user_file() {
    let fx = Fixture::new();
    fx.user("yolo = true\n");
    assert_eq!(fx.load().unwrap().start_mode, Mode::Bypass);
    let s = fx
        .load_with(&yolo_env("false"), &CliOverrides::default())
        .unwrap();
    assert_eq!(s.start_mode, Mode::Manual);
}

#[test]
fn a_bad_agent_yolo_names_the_variable_and_what_is_accepted() {
    let fx = Fixture::new();
    let err = fx
        .load_with(&yolo_env("maybe"), &CliOverrides::default())
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("AGENT_YOLO"), "{text}");
    assert!(text.contains("maybe"), "{text}");
    assert!(text.contains("1, true or yes"), "{text}");
    assert!(text.contains("0, false or no"), "{text}");
}

#[test]
fn the_command_line_overrides_the_model_and_is_checked() {
    let fx = Fixture::new();
    fx.user("[model]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"local\"\n");
    let env = EnvOverrides::default();
    let cli = CliOverrides {
        model: Some("other".into()),
        ..CliOverrides::default()
    };
    let s = fx.load_with(&env, &cli).unwrap();
    assert_eq!(
        (s.model.base_url.as_str(), s.model.model.as_str()),
        ("http://127.0.0.1:8080/v1", "other")
    );

    let cli = CliOverrides {
        provider: Some("anthropic".into()),
        ..CliOverrides::default()
    };
    let s = fx.load_with(&env, &cli).unwrap();
    assert_eq!(s.model.provider, ProviderKind::Anthropic);
    assert_eq!(s.model.base_url, "https://api.anthropic.com/v1");
    assert_eq!(s.model.api_key_env, "ANTHROPIC_API_KEY");

    for (cli, flag) in [
        (
            CliOverrides {
                provider: Some("gemini".into()),
                ..CliOverrides::default()
            },
            "--provider",
        ),
        (
            CliOverrides {
                base_url: Some("file:///etc/passwd".into()),
                ..CliOverrides::default()
            },
            "--base-url",
        ),
        (
            CliOverrides {
                mode: Some(Mode::Manual),
                yolo: true,
                ..CliOverrides::default()
            },
            "--mode",
        ),
    ] {
        let err = fx.load_with(&env, &cli).unwrap_err();
        assert!(matches!(err, ConfigError::CommandLine { .. }), "{err}");
        assert!(err.to_string().contains(flag), "{err}");
        assert!(err.to_string().contains("accepted"), "{err}");
    }
}

// ---- the home -----------------------------------------------------------

fn mode_of(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_home_is_created_private() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::at(dir.path().join("a/b/home")).unwrap();
    home.ensure().unwrap();
    for d in [
        home.root().to_path_buf(),
        home.sessions_dir(),
        home.logs_dir(),
    ] {
        assert!(d.is_dir(), "{}", d.display());
        assert_eq!(mode_of(&d), 0o700, "{}", d.display());
    }

    // An existing home open to others is closed again.
    fs::set_permissions(home.logs_dir(), fs::Permissions::from_mode(0o755)).unwrap();
    home.ensure().unwrap();
    assert_eq!(mode_of(&home.logs_dir()), 0o700);

    let session = home.sessions_dir().join("s.jsonl");
    let mut file = create_private_file(&session).unwrap();
    std::io::Write::write_all(&mut file, b"{}\n").unwrap();
    assert_eq!(mode_of(&session), 0o600);

    // Reopening appends and tightens a loosened file.
    fs::set_permissions(&session, fs::Permissions::from_mode(0o644)).unwrap();
    let mut file = create_private_file(&session).unwrap();
    std::io::Write::write_all(&mut file, b"{}\n").unwrap();
    assert_eq!(mode_of(&session), 0o600);
    assert_eq!(fs::read_to_string(&session).unwrap(), "{}\n{}\n");
}

#[test]
fn a_private_file_is_never_opened_through_a_symbolic_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    fs::write(&target, "").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(create_private_file(&link).is_err());
}

#[test]
fn logging_writes_to_a_private_file_under_the_home() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::at(dir.path().join("home")).unwrap();
    let guard = mino::logging::init(&home).unwrap();
    tracing::info!("settings test line");
    drop(guard);
    let log = mino::logging::log_file(&home);
    assert_eq!(mode_of(&log), 0o600);
    assert_eq!(mode_of(&home.logs_dir()), 0o700);
    assert!(
        fs::read_to_string(&log)
            .unwrap()
            .contains("settings test line")
    );
}

// ---- config.example.toml ------------------------------------------------

fn example() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml")).unwrap()
}

/// The example with its commented-out settings (`# key = ...`, `# [table]`)
/// turned on.
fn example_uncommented() -> String {
    example()
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest) if rest.starts_with('[') || is_setting(rest) => rest,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_setting(line: &str) -> bool {
    line.split_once(" = ").is_some_and(|(key, _)| {
        !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    })
}

#[test]
fn the_example_loads_cleanly_as_a_user_file() {
    for text in [example(), example_uncommented()] {
        let fx = Fixture::new();
        fx.user(&text);
        let s = fx.load().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.start_mode, Mode::Manual);
        assert_eq!(s.model.context_window, 400_000);
    }
    // As written (defaults only), it is the same as no file at all.
    let fx = Fixture::new();
    fx.user(&example());
    let from_example = fx.load().unwrap();
    let defaults = Fixture::new().load().unwrap();
    assert_eq!(from_example.model, defaults.model);
    assert_eq!(from_example.tools, defaults.tools);
    assert_eq!(from_example.limits, defaults.limits);
    assert_eq!(from_example.shell_gate, defaults.shell_gate);
    assert_eq!(from_example.start_mode, defaults.start_mode);
}

#[test]
fn every_raw_key_is_documented_in_the_example() {
    let documented = keys_in(&toml::from_str(&example_uncommented()).unwrap());
    let mut raw = probe::keys::<RawFile>();
    // Read only to be refused with the way that works (api_key_env).
    assert!(raw.remove("model.api_key"));
    assert!(raw.remove("providers.NAME.api_key"));
    assert!(raw.len() > 30, "the probe found only {raw:?}");
    // A preset's table takes [model]'s keys (the example says so): each is
    // documented where [model]'s is.
    let missing: Vec<_> = raw
        .difference(&documented)
        .filter(|key| {
            key.strip_prefix("providers.NAME.")
                .is_none_or(|rest| !documented.contains(&format!("model.{rest}")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "not in config.example.toml: {missing:?}"
    );
}

/// Dotted keys written in a TOML table; server names become `NAME` and array
/// entries share their array's key, as in the probe.
fn keys_in(table: &toml::Table) -> std::collections::BTreeSet<String> {
    fn walk(prefix: &str, value: &toml::Value, out: &mut std::collections::BTreeSet<String>) {
        match value {
            toml::Value::Table(table) => {
                for (k, v) in table {
                    let k = if prefix == "mcp.servers"
                        || prefix == "agents"
                        || prefix == "model.prices"
                        || prefix == "providers"
                        || prefix == "providers.NAME.prices"
                    {
                        "NAME"
                    } else {
                        k.as_str()
                    };
                    let path = if prefix.is_empty() {
                        k.to_string()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    out.insert(path.clone());
                    walk(&path, v, out);
                }
            }
            toml::Value::Array(items) => items.iter().for_each(|item| walk(prefix, item, out)),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk("", &toml::Value::Table(table.clone()), &mut out);
    out
}

/// A deserializer that records every struct field serde asks for, so the
/// raw structs' keys can be listed without a list kept by hand.
mod probe {
    use std::cell::RefCell;
    use std::collections::BTreeSet;
    use std::fmt;

    use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

    #[derive(Debug)]
    pub struct Error(String);

    impl fmt::Display for Error {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.0)
        }
    }

    impl std::error::Error for Error {}

    impl de::Error for Error {
        fn custom<T: fmt::Display>(msg: T) -> Self {
            Error(msg.to_string())
        }
    }

    pub fn keys<T: de::DeserializeOwned>() -> BTreeSet<String> {
        let keys = RefCell::new(BTreeSet::new());
        T::deserialize(Probe {
            path: String::new(),
            keys: &keys,
        })
        .unwrap();
        keys.into_inner()
    }

    struct Probe<'a> {
        path: String,
        keys: &'a RefCell<BTreeSet<String>>,
    }

    impl<'a> Probe<'a> {
        fn child(&self, key: &str) -> Probe<'a> {
            let path = if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            };
            Probe {
                path,
                keys: self.keys,
            }
        }
    }

    impl<'de> de::Deserializer<'de> for Probe<'_> {
        type Error = Error;

        fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_bool(false)
        }
        fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_bool(false)
        }
        fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_i64(1)
        }
        fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_f64(1.0)
        }
        fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_str("x")
        }
        fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_str("x")
        }
        fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_some(self)
        }
        fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_seq(One { probe: Some(self) })
        }
        fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            let value = self.child("NAME");
            v.visit_map(Fields {
                names: ["NAME"].iter(),
                parent: Probe {
                    path: self.path,
                    keys: self.keys,
                },
                next: None,
                map_value: Some(value),
            })
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            v: V,
        ) -> Result<V::Value, Error> {
            for field in fields {
                self.keys.borrow_mut().insert(self.child(field).path);
            }
            v.visit_map(Fields {
                names: fields.iter(),
                parent: self,
                next: None,
                map_value: None,
            })
        }

        serde::forward_to_deserialize_any! {
            i8 i16 i32 i128 u8 u16 u32 u64 u128 f32 char bytes byte_buf unit
            unit_struct newtype_struct tuple tuple_struct enum identifier ignored_any
        }
    }

    struct One<'a> {
        probe: Option<Probe<'a>>,
    }

    impl<'de> SeqAccess<'de> for One<'_> {
        type Error = Error;

        fn next_element_seed<T: DeserializeSeed<'de>>(
            &mut self,
            seed: T,
        ) -> Result<Option<T::Value>, Error> {
            self.probe.take().map(|p| seed.deserialize(p)).transpose()
        }
    }

    /// A struct's fields, or a map's one `NAME` entry.
    struct Fields<'a> {
        names: std::slice::Iter<'static, &'static str>,
        parent: Probe<'a>,
        next: Option<&'static str>,
        map_value: Option<Probe<'a>>,
    }

    impl<'de> MapAccess<'de> for Fields<'_> {
        type Error = Error;

        fn next_key_seed<K: DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, Error> {
            let Some(&name) = self.names.next() else {
                return Ok(None);
            };
            self.next = Some(name);
            let key: de::value::StrDeserializer<'_, Error> = name.into_deserializer();
            seed.deserialize(key).map(Some)
        }

        fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
            let probe = match self.map_value.take() {
                Some(probe) => probe,
                None => self.parent.child(self.next.unwrap_or_default()),
            };
            seed.deserialize(probe)
        }
    }
}

#[test]
fn asked_agents_come_from_the_user_file_only() {
    let fx = Fixture::new();
    fx.user("[agents.jan]\nconfig = \"jan.toml\"\nyolo = false\n\n[agents.homer]\nconfig = \"/etc/homer.toml\"\n");
    let s = fx.load().unwrap();
    let jan = &s.agents["jan"];
    assert_eq!(
        jan.config,
        fx.user_file().parent().unwrap().join("jan.toml")
    );
    assert_eq!(jan.yolo, Some(false));
    assert_eq!(s.agents["homer"].config, PathBuf::from("/etc/homer.toml"));
    assert_eq!(s.agents["homer"].yolo, None);

    let fx = Fixture::new();
    fx.user("[agents.\"a b\"]\nconfig = \"x.toml\"\n");
    let err = fx.error();
    assert!(
        err.to_string()
            .contains("\"a b\" is not an agent name; accepted: an agent name of 1 to 64"),
        "{err}"
    );

    let fx = Fixture::new();
    fx.user("[agents.jan]\nyolo = true\n");
    let err = fx.error();
    assert!(
        err.to_string().contains("agents.jan.config: missing"),
        "{err}"
    );

    let fx = Fixture::new();
    fx.project("[agents.jan]\nconfig = \"jan.toml\"\n");
    let err = fx.error();
    assert!(matches!(err, ConfigError::Loosening { .. }), "{err}");
}

#[test]
fn a_streamable_http_server_has_a_url_headers_and_nothing_that_starts_a_process() {
    let fx = Fixture::new();
    fx.user(
        "[mcp.servers.remote]\nurl = \"https://mcp.example.com/mcp\"\nheaders = { Authorization = \"$REMOTE_AUTH\", X-Team = \"blue\" }\ntrust = \"ask\"\n",
    );
    let s = fx.load().unwrap();
    let remote = &s.mcp_servers["remote"];
    assert_eq!(remote.url.as_deref(), Some("https://mcp.example.com/mcp"));
    assert_eq!(
        remote.headers["Authorization"],
        mino::config::EnvValue::Variable("REMOTE_AUTH".into())
    );
    assert_eq!(
        remote.headers["X-Team"],
        mino::config::EnvValue::Literal("blue".into())
    );
    assert!(remote.trust_ask);
    assert!(remote.command.is_empty() && remote.env.is_empty());
    for (text, key, line, accepted) in [
        (
            "url = \"https://h/mcp\"\ncommand = \"x\"",
            "mcp.servers.r.command",
            3,
            "either command",
        ),
        (
            "url = \"https://h/mcp\"\nenv = { A = \"b\" }",
            "mcp.servers.r.env",
            3,
            "either command",
        ),
        (
            "url = \"ftp://h/mcp\"",
            "mcp.servers.r.url",
            2,
            "http:// or https://",
        ),
        (
            "url = \"not a url\"",
            "mcp.servers.r.url",
            2,
            "http:// or https://",
        ),
        (
            "url = \"https://u:p@h/mcp\"",
            "mcp.servers.r.url",
            2,
            "without a user or password",
        ),
        (
            "url = \"https://h/mcp\"\nheaders = { H = \"$\" }",
            "mcp.servers.r.headers.H",
            3,
            "$NAME",
        ),
        (
            "command = \"x\"\nheaders = { H = \"v\" }",
            "mcp.servers.r.headers",
            3,
            "only for a streamable-HTTP server",
        ),
        ("args = []", "mcp.servers.r.command", 1, "url = "),
    ] {
        let fx = Fixture::new();
        fx.user(&format!("[mcp.servers.r]\n{text}\n"));
        let err = fx.error();
        assert_names(&err, &fx.user_file(), key, line);
        assert!(
            err.to_string().contains(accepted),
            "{accepted:?} missing from: {err}"
        );
    }
    // A project may not add or change the address.
    let fx = Fixture::new();
    fx.user("[mcp.servers.r]\nurl = \"https://h/mcp\"\n");
    fx.project("[mcp.servers.r]\nurl = \"https://evil.example/mcp\"\n");
    assert_names(&fx.error(), &fx.project_file(), "mcp.servers.r.url", 2);
}

// ---- [sandbox] ------------------------------------------------------------

#[test]
fn sandbox_settings_are_read_and_checked() {
    use mino::sandbox::{Network, SandboxSettings, UnsandboxedInBypass};
    let defaults = Fixture::new().load().unwrap().sandbox;
    assert_eq!(defaults, SandboxSettings::default());
    assert!(defaults.enabled && defaults.namespaces && !defaults.required);
    assert_eq!(defaults.network, Network::On);

    let fx = Fixture::new();
    fx.user(
        "[sandbox]\nnetwork = \"off\"\nnamespaces = false\nrequired = true\nunsandboxed_in_bypass = \"run\"\nwritable = [\"~/.m2\", \"/opt/cache\"]\n",
    );
    let s = fx.load().unwrap().sandbox;
    assert_eq!(s.network, Network::Off);
    assert!(!s.namespaces && s.required);
    assert_eq!(s.unsandboxed_in_bypass, UnsandboxedInBypass::Run);
    assert_eq!(
        s.writable,
        vec!["~/.m2".to_string(), "/opt/cache".to_string()]
    );
    let fx = Fixture::new();
    fx.user(
        "[sandbox]\nallow_private = [\"127.0.0.1:3141\", \"[::1]:5432\", \"db.internal:5432\"]\nallowed_domains = [\"*.crates.io\", \"pypi.org\"]\n",
    );
    let s = fx.load().unwrap().sandbox;
    assert_eq!(
        s.allow_private,
        vec!["127.0.0.1:3141", "[::1]:5432", "db.internal:5432"]
    );
    assert_eq!(
        s.allowed_domains,
        Some(vec!["*.crates.io".to_string(), "pypi.org".to_string()])
    );
    assert_eq!(SandboxSettings::default().allowed_domains, None);
    let fx = Fixture::new();
    fx.user("[sandbox]\npublish = [3000, 8080]\n[limits]\nbackground_shells = 2\n");
    let loaded = fx.load().unwrap();
    assert_eq!(loaded.sandbox.publish, vec![3000, 8080]);
    assert_eq!(loaded.limits.background_shells, 2);
    assert!(SandboxSettings::default().publish.is_empty());

    for (text, key, accepted) in [
        (
            "[sandbox]\nnetwork = \"maybe\"\n",
            "sandbox.network",
            "\"on\" or \"off\"",
        ),
        (
            "[sandbox]\nunsandboxed_in_bypass = \"yes\"\n",
            "sandbox.unsandboxed_in_bypass",
            "\"ask\" or \"run\"",
        ),
        (
            "[sandbox]\nwritable = [\"~/ok\", \"relative/dir\"]\n",
            "sandbox.writable",
            "an absolute directory path or one starting with ~/",
        ),
        (
            "[sandbox]\nwritable = [\"/a/../etc\"]\n",
            "sandbox.writable",
            "without . or .. components",
        ),
        (
            "[sandbox]\nallow_private = [\"127.0.0.1:8080\", \"127.0.0.1\"]\n",
            "sandbox.allow_private[1]",
            "an exact \"host:port\"",
        ),
        (
            "[sandbox]\nallow_private = [\"http://db:5432\"]\n",
            "sandbox.allow_private",
            "without a scheme",
        ),
        (
            "[sandbox]\nallow_private = [\"*.local:80\"]\n",
            "sandbox.allow_private",
            "a wildcard",
        ),
        (
            "[sandbox]\nallow_private = [\"db:70000\"]\n",
            "sandbox.allow_private",
            "a port from 1 to 65535",
        ),
        (
            "[sandbox]\nallowed_domains = [\"*.crates.io\", \"https://pypi.org\"]\n",
            "sandbox.allowed_domains[1]",
            "where * stands for any run of characters",
        ),
        (
            "[sandbox]\nallowed_domains = [\"\"]\n",
            "sandbox.allowed_domains",
            "a host name or a pattern of one",
        ),
        (
            "[sandbox]\npublish = [3000, 80]\n",
            "sandbox.publish[1]",
            "a TCP port from 1024 to 65535",
        ),
        (
            "[sandbox]\npublish = [3000, 3000]\n",
            "sandbox.publish[1]",
            "each at most once",
        ),
        (
            "[limits]\nbackground_shells = 0\n",
            "limits.background_shells",
            "1",
        ),
    ] {
        let fx = Fixture::new();
        fx.user(text);
        let err = fx.error().to_string();
        assert!(err.contains(key), "{err}");
        assert!(err.contains(accepted), "{err}");
    }
}

#[test]
fn a_project_may_only_tighten_the_sandbox() {
    use mino::sandbox::{Network, UnsandboxedInBypass};
    let fx = Fixture::new();
    fx.user("[sandbox]\nunsandboxed_in_bypass = \"run\"\n")
        .project(
            "[sandbox]\nnetwork = \"off\"\nrequired = true\nunsandboxed_in_bypass = \"ask\"\n",
        );
    let s = fx.load().unwrap().sandbox;
    assert_eq!(s.network, Network::Off);
    assert!(s.required);
    assert_eq!(s.unsandboxed_in_bypass, UnsandboxedInBypass::Ask);
    for (text, key) in [
        ("[sandbox]\nenabled = false\n", "sandbox.enabled"),
        ("[sandbox]\nnamespaces = false\n", "sandbox.namespaces"),
        ("[sandbox]\nwritable = [\"/\"]\n", "sandbox.writable"),
        (
            "[sandbox]\nallow_private = [\"127.0.0.1:5432\"]\n",
            "sandbox.allow_private",
        ),
        (
            "[sandbox]\nallowed_domains = [\"*.example.com\"]\n",
            "sandbox.allowed_domains",
        ),
        ("[sandbox]\npublish = [3000]\n", "sandbox.publish"),
        ("[sandbox]\nnetwork = \"on\"\n", "sandbox.network"),
        ("[sandbox]\nrequired = false\n", "sandbox.required"),
        (
            "[sandbox]\nunsandboxed_in_bypass = \"run\"\n",
            "sandbox.unsandboxed_in_bypass",
        ),
    ] {
        let fx = Fixture::new();
        fx.project(text);
        let err = fx.error();
        assert!(matches!(err, ConfigError::Loosening { .. }), "{err}");
        assert!(err.to_string().contains(key), "{text}: {err}");
    }
}

// ---- keys and windows --------------------------------------------------

#[test]
fn a_key_in_the_settings_is_refused_with_the_variable_to_use() {
    let fx = Fixture::new();
    fx.user("[model]\nprovider = \"anthropic\"\napi_key = \"sk-ant-REAL-KEY-1234\"\n");
    let err = fx.error();
    assert_names(&err, &fx.user_file(), "model.api_key", 3);
    let text = err.to_string();
    assert!(
        !text.contains("REAL-KEY"),
        "the value is never repeated: {text}"
    );
    assert!(
        text.contains("api_key_env = \"ANTHROPIC_API_KEY\""),
        "{text}"
    );
}

#[test]
fn a_well_known_hosted_model_gets_its_window_unless_the_settings_say() {
    let window = |text: &str| {
        let fx = Fixture::new();
        fx.user(text);
        fx.load().unwrap().model.context_window
    };
    assert_eq!(
        window("[model]\nprovider = \"anthropic\"\nmodel = \"claude-opus-4-1\"\n"),
        200_000
    );
    assert_eq!(
        window(
            "[model]\nprovider = \"openai-chat\"\nbase_url = \"https://openrouter.ai/api/v1\"\nmodel = \"qwen/qwen3-coder\"\n"
        ),
        262_144
    );
    // The settings win; a loopback server keeps the default; so does an
    // unknown model.
    assert_eq!(
        window("[model]\nmodel = \"gpt-5\"\ncontext_window = 128000\n"),
        128_000
    );
    assert_eq!(
        window(
            "[model]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"gpt-5\"\n"
        ),
        128_000
    );
    assert_eq!(window("[model]\nmodel = \"my-finetune\"\n"), 128_000);
}
