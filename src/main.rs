//! The command line: parse, load settings, pick a front end. Nothing else.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

mod cli;
mod install;
use cli::{
    Cli, EvalFormat, GateCommand, HookFormatArg, PolicyCommand, RulesCommand, SandboxCommand, Sub,
};

use mino::agent::build::{Launch, Relaunch, launch, sandbox_planner};
use mino::agent::instructions_seen::Shown;
use mino::config::{CliOverrides, EnvOverrides, Settings};
use mino::eval::{EvalOptions, LiveModel};
use mino::frontend::check::{CheckRequest, check};
use mino::frontend::gate::{self, HookFormat};
use mino::frontend::line;
use mino::frontend::tui;
use mino::home::Home;
use mino::mcp::guard::{MCP_GUARD, guard_main as mcp_guard_main};
use mino::policy::{CanAsk, ProtectedPaths};
use mino::tools::bash::guard::{EXEC, GUARD, exec_main, guard_main};

/// `mino eval`: 0 when every run of every case passed, 1 when one failed,
/// 2 when eval could not run.
async fn eval(home: &Home, cli: &Cli) -> i32 {
    let Some(Sub::Eval {
        cases,
        repeat,
        live,
        mino: other,
        format,
        keep,
    }) = &cli.command
    else {
        return 2;
    };
    let mino = match other.clone() {
        Some(path) if path.is_file() => path,
        Some(path) => {
            eprintln!(
                "mino: --mino {}: no such file; give the path of a mino binary",
                path.display()
            );
            return 2;
        }
        None => match std::env::current_exe() {
            Ok(path) => path,
            Err(e) => {
                eprintln!("mino: cannot find the mino binary to run cases with: {e}");
                return 2;
            }
        },
    };
    let mut flags = Vec::new();
    for (flag, value) in [
        ("--provider", &cli.provider),
        ("--base-url", &cli.base_url),
        ("--model", &cli.model),
    ] {
        if let Some(value) = value {
            flags.extend([flag.to_string(), value.clone()]);
        }
    }
    let config = home.config_file();
    let soul = home.soul_file();
    let options = EvalOptions {
        cases: cases.clone(),
        repeat: *repeat,
        live: *live,
        mino,
        keep: keep.clone(),
        live_model: LiveModel {
            config: config.is_file().then_some(config),
            soul: soul.is_file().then_some(soul),
            flags,
        },
    };
    let mut progress = |line: &str| eprintln!("mino eval: {line}");
    match mino::eval::run(&options, &mut progress).await {
        Ok(report) => {
            match format {
                EvalFormat::Text => print!("{}", report.text()),
                EvalFormat::Json => println!("{}", report.json()),
            }
            if let Some(keep) = keep {
                eprintln!("mino eval: each run is kept in {}", keep.display());
            }
            if report.passed { 0 } else { 1 }
        }
        Err(e) => {
            eprintln!("mino: {e}");
            2
        }
    }
}

fn main() -> ExitCode {
    // The helpers a bash call runs under are this same binary (see
    // `tools::bash::guard`); they take their own arguments.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some((first, rest)) = args.split_first() {
        if first == GUARD {
            return exit_code(guard_main(rest));
        }
        if first == EXEC {
            return exit_code(exec_main(rest));
        }
        if first == MCP_GUARD {
            return exit_code(mcp_guard_main(rest));
        }
        if first == mino::sandbox::HELPER_ARG {
            return exit_code(mino::sandbox::helper_main(rest));
        }
    }
    mino::logging::mark_start();
    // Before anything else, so no child ever sees a dumpable mino.
    if let Err(e) = mino::process_guard::harden_at_start() {
        eprintln!("mino: {e}");
        return ExitCode::from(2);
    }
    // The built-in protected paths compile beside the parsing of the
    // arguments and the runtime's start; `run` checks them before anything
    // else (waiting for them if need be). Without the thread, `run`
    // compiles them itself.
    let _ = std::thread::Builder::new()
        .name("mino-warm".to_string())
        .spawn(ProtectedPaths::warm);
    let cli = Cli::parse();
    if let Some(code) = install::act(&cli) {
        return exit_code(code);
    }
    // One worker: the agent's tasks wait on the network, the screen runs
    // on this thread, and a second worker mostly woke up to find nothing
    // to do (a context switch for every piece of a streamed answer).
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("could not start the async runtime")
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&e),
    };
    let result = runtime.block_on(run(cli));
    // Leave without waiting for a stdin reader blocked on a terminal.
    runtime.shutdown_background();
    match result {
        Ok(code) => exit_code(code),
        Err(e) => fail(&e),
    }
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Says what stopped mino, each cause once, and exits 2.
fn fail(error: &anyhow::Error) -> ExitCode {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        // Most messages already name their cause; do not say it twice.
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    eprintln!("mino: {text}");
    ExitCode::from(2)
}

async fn run(mut cli: Cli) -> anyhow::Result<i32> {
    // Never run with fewer protected paths than the built-in ones.
    ProtectedPaths::check_builtin().context("the built-in protected paths do not compile")?;
    let home = Home::resolve()?;
    home.ensure()?;
    let _log = match mino::logging::init(&home) {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("mino: logging is off: {e}");
            None
        }
    };
    if matches!(cli.command, Some(Sub::Eval { .. })) {
        return Ok(eval(&home, &cli).await);
    }
    let mut overrides = CliOverrides {
        mode: cli.mode,
        yolo: cli.yolo,
        provider: cli.provider.take(),
        base_url: cli.base_url.take(),
        model: cli.model.take(),
        script: None,
    };
    let project_dir = if cli.demo {
        let demo = mino::demo::lay_out()?;
        eprintln!("mino: demo project laid out in {}", demo.project.display());
        overrides.provider = Some("scripted".into());
        overrides.model = Some("demo-script".into());
        overrides.script = Some(demo.script);
        demo.project
    } else {
        match cli.cd.clone() {
            Some(dir) => dir,
            None => std::env::current_dir().context("the current directory cannot be read")?,
        }
    };
    let env = EnvOverrides::from_process();
    let user_file = cli.settings.clone().unwrap_or_else(|| home.config_file());
    let settings =
        Settings::load_with_user_file(&home, &user_file, &project_dir, &env, &overrides)?;
    if let Some(Sub::Acp) = &cli.command {
        // Each editor session loads the settings for its own directory; the
        // ones loaded above only checked that the user's file is valid.
        return Ok(mino::frontend::acp::serve(home, user_file, env, overrides).await);
    }
    if let Some(Sub::Policy {
        command:
            PolicyCommand::Check {
                mode,
                tool,
                path,
                command,
                url,
                action,
            },
    }) = &cli.command
    {
        let req = CheckRequest {
            mode: *mode,
            tool,
            path: path.as_deref(),
            command: command.as_deref(),
            url: url.as_deref(),
            action: action.as_deref(),
        };
        println!("{}", check(&settings, &project_dir, &req).await?);
        return Ok(0);
    }
    if let Some(Sub::Rules {
        command:
            RulesCommand::Check {
                tool,
                command,
                path,
                url,
            },
    }) = &cli.command
    {
        let query = mino::frontend::rules_check::RulesQuery {
            tool: tool.as_deref(),
            command: command.as_deref(),
            path: path.as_deref(),
            url: url.as_deref(),
        };
        let answer = mino::frontend::rules_check::rules_check(&settings, &project_dir, &query)?;
        println!("{answer:#}");
        return Ok(0);
    }
    if let Some(Sub::Gate { command }) = &cli.command {
        return Ok(run_gate(&settings, &project_dir, command));
    }
    if let Some(Sub::Sandbox {
        command: SandboxCommand::Check,
    }) = &cli.command
    {
        let protected = std::sync::Arc::new(settings.protected());
        let root = std::fs::canonicalize(&project_dir).unwrap_or_else(|_| project_dir.clone());
        let (planner, support) = sandbox_planner(&settings, &home, &root, protected);
        let mut report = mino::sandbox::check::report(&planner, &support);
        report["checkpoints"] = mino::frontend::rewind::links_report(&home, &root);
        println!("{report:#}");
        return Ok(0);
    }
    if let Some(Sub::Rewind {
        session,
        list,
        to,
        code,
        conversation,
        force,
        ..
    }) = &cli.command
    {
        let what = match (code, conversation) {
            (true, _) => mino::checkpoint::rewind::What::Code,
            (_, true) => mino::checkpoint::rewind::What::Conversation,
            _ => mino::checkpoint::rewind::What::Both,
        };
        let request = mino::frontend::rewind::Request {
            session,
            list: *list,
            to: *to,
            what,
            force: *force,
        };
        return Ok(mino::frontend::rewind::run(
            &home,
            &settings,
            &project_dir,
            &request,
        ));
    }
    let question = match &cli.ask {
        Some(agent) => {
            let mut question = String::new();
            if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut question) {
                eprintln!("mino: --ask {agent}: the question could not be read from stdin: {e}");
                return Ok(2);
            }
            if question.trim().is_empty() {
                eprintln!(
                    "mino: --ask {agent}: no question on stdin; write it there, e.g. echo 'what changed?' | mino --ask {agent}"
                );
                return Ok(2);
            }
            Some((agent.clone(), question.trim().to_string()))
        }
        None => None,
    };
    if let Some(prompt) = cli.prompt.take() {
        cli.prompt = Some(match piped_input(settings.limits.prompt_bytes as u64)? {
            Some(piped) => format!("{}\n\n{prompt}", piped.trim_end()),
            None => prompt,
        });
    }
    let limit = settings.limits.prompt_bytes;
    let given = cli
        .prompt
        .as_deref()
        .map(|p| ("-p", p))
        .or(question.as_ref().map(|(_, q)| ("--ask", q.as_str())));
    if let Some((flag, text)) = given
        && text.len() > limit
    {
        eprintln!(
            "mino: {flag}: the prompt is {} bytes; [limits] prompt_bytes accepts at most {limit} (1024 to 16777216)",
            text.len()
        );
        return Ok(2);
    }
    if cli.continue_last {
        let store = mino::session::SessionStore::new(home.sessions_dir());
        match store.latest_in(&project_dir)? {
            Some(id) => cli.resume = Some(id.as_str().to_string()),
            None => {
                eprintln!(
                    "mino: --continue: no saved session of {} has a prompt yet; start one with mino (or list every project's with /sessions all)",
                    project_dir.display()
                );
                return Ok(2);
            }
        }
    }
    let interactive = std::io::stdin().is_terminal() && question.is_none();
    let full_screen =
        cli.prompt.is_none() && !cli.line && interactive && std::io::stdout().is_terminal();
    let can_ask = if cli.prompt.is_some() || !interactive {
        CanAsk::No
    } else {
        CanAsk::Yes
    };
    let start = launch(Launch {
        home: &home,
        settings: &settings,
        project_dir: &project_dir,
        can_ask,
        resume: cli.resume.as_deref(),
        editor: None,
        // The full screen starts the servers once its first frame is drawn.
        defer_mcp: full_screen,
        // The full screen and line mode show the banner to a person; -p
        // and --ask only print it among their logs.
        notices: if cli.prompt.is_none() && interactive {
            Shown::ToAPerson
        } else {
            Shown::ToNobody
        },
        never: Vec::new(),
    });
    if full_screen {
        // The full screen draws its first frame while the agent starts.
        let root = std::fs::canonicalize(&project_dir).unwrap_or_else(|_| project_dir.clone());
        let history = mino::prompt_history::file_for(&home, &root);
        let relaunch = Relaunch {
            home: home.clone(),
            user_file: user_file.clone(),
            env: env.clone(),
            overrides: overrides.clone(),
            can_ask,
        };
        let options = tui::Options {
            ui: settings.ui,
            relaunch: Some(relaunch),
            copy_file: Some(home.root().join("copied.txt")),
            history: Some(history),
            intro: cli.demo.then(|| {
                format!(
                    "Demo project: {} (a temporary copy; it stays there after mino exits, so you can look at what changed). Type: Summarize notes.md",
                    project_dir.display()
                )
            }),
        };
        return Ok(tui::run(start, &project_dir, options).await?);
    }
    let handle = start.await?;
    let mcp = handle.mcp.clone();
    let code = match (question, cli.prompt) {
        (Some((agent, question)), _) => line::run_ask(handle, agent, question).await,
        (None, Some(prompt)) => line::run_once(handle, prompt, cli.output_format).await,
        (None, None) => line::run_interactive(handle).await,
    };
    // The servers' process groups end with mino.
    if let Some(hub) = mcp {
        hub.shutdown();
    }
    Ok(code)
}

/// `mino gate check` and `mino gate hook`.
/// `-p`'s piped input: what standard input holds when it is a pipe or a
/// file (never a terminal, `/dev/null` or a socket), at most `limit`
/// bytes (`[limits] prompt_bytes`) of UTF-8 text; `None` when there is none.
fn piped_input(limit: u64) -> anyhow::Result<Option<String>> {
    use rustix::fs::FileType;
    use std::io::Read;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let Ok(stat) = rustix::fs::fstat(&stdin) else {
        return Ok(None);
    };
    if !matches!(
        FileType::from_raw_mode(stat.st_mode),
        FileType::Fifo | FileType::RegularFile
    ) {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .context("-p: standard input cannot be read")?;
    if bytes.len() as u64 > limit {
        anyhow::bail!(
            "-p: standard input is more than {limit} bytes, all a prompt may hold ([limits] prompt_bytes, 1024 to 16777216); save it in a file of the project and name the file in the prompt instead"
        );
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!(
            "-p: standard input is not UTF-8 text; -p puts piped text before the prompt"
        )
    })?;
    Ok((!text.trim().is_empty()).then_some(text))
}

fn run_gate(settings: &Settings, project_dir: &std::path::Path, command: &GateCommand) -> i32 {
    match command {
        GateCommand::Check { shell, command } => {
            let (json, status) = gate::check(settings, project_dir, shell, &command.join(" "));
            println!("{json}");
            status
        }
        GateCommand::Hook { format, unresolved } => {
            use std::io::Read;
            let mut event = String::new();
            let limit = u64::try_from(gate::MAX_EVENT_BYTES + 1).unwrap_or(u64::MAX);
            if let Err(e) = std::io::stdin().take(limit).read_to_string(&mut event) {
                eprintln!("mino: the hook event on stdin cannot be read: {e}");
                return 2;
            }
            let format = match format {
                HookFormatArg::ClaudeCode => HookFormat::ClaudeCode,
                HookFormatArg::Json => HookFormat::Json,
            };
            match gate::hook(settings, &event, format, unresolved.is_some()) {
                Ok(Some(answer)) => {
                    println!("{answer}");
                    0
                }
                Ok(None) => 0,
                Err(e) => {
                    // Exit 2: the other agent blocks the call and shows this.
                    eprintln!("mino: {e}");
                    2
                }
            }
        }
    }
}
