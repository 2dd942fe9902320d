//! ACP beyond prompt, cancel and permission, each method driven by the
//! official TypeScript SDK client (tests/node) against `mino acp` and a
//! loopback model service: session/list, resume, close and delete; the
//! mode and model configuration options; the advertised slash commands
//! (exactly the ones that work); the plan tool's `plan` updates; usage
//! updates with the service's counts; and authentication against the key
//! variable. A bash call in the client's terminal: acp_terminal.rs.

use serde_json::{Value, json};

use crate::support::llm::{text, tool};
use crate::support::world::World;

use super::acp::Run;

/// The text the agent said in the chat.
fn said(run: &Run) -> String {
    run.updates("agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect()
}

/// The answers to the run's `call` steps of `method`, in order: each an
/// `Ok(response)` or an `Err(error)`.
fn answers(run: &Run, method: &str) -> Vec<Result<Value, Value>> {
    run.log
        .iter()
        .filter(|e| e["method"] == method)
        .map(|e| match e["event"].as_str() {
            Some("result") => Ok(e["response"].clone()),
            _ => Err(e.clone()),
        })
        .collect()
}

fn call(method: &str, params: Value) -> Value {
    json!({"call": method, "params": params})
}

/// A session of `world` that got one prompt (answered by the world's
/// first reply); its id.
async fn saved_session(world: &World, prompt: &str) -> String {
    let run = world
        .client(json!([world.new_session(), {"prompt": prompt}]), json!({}))
        .await;
    run.events("session")[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

fn option<'a>(options: &'a Value, id: &str) -> &'a Value {
    options
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no option {id}: {options}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_list_shows_the_saved_sessions_with_their_titles_and_directories() {
    let world = World::with("openai-chat", vec![text("one"), text("two")], "").await;
    let first = saved_session(&world, "fix the   release notes").await;
    let second = saved_session(&world, "second prompt").await;
    let elsewhere = tempfile::TempDir::new().unwrap();
    let run = world
        .client(
            json!([
                call("session/list", json!({"cwd": world.project.path()})),
                call("session/list", json!({"cwd": elsewhere.path()})),
                call("session/list", json!({})),
            ]),
            json!({}),
        )
        .await;
    let caps =
        &run.events("initialized")[0]["response"]["agentCapabilities"]["sessionCapabilities"];
    for method in ["list", "delete", "resume", "close"] {
        assert!(caps[method].is_object(), "{method}: {caps}");
    }
    let lists = answers(&run, "session/list");
    let here = lists[0].as_ref().unwrap()["sessions"].as_array().unwrap();
    let ids: Vec<&str> = here
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{here:?}");
    assert!(ids.contains(&first.as_str()) && ids.contains(&second.as_str()));
    let one = here
        .iter()
        .find(|s| s["sessionId"] == first.as_str())
        .unwrap();
    assert_eq!(one["title"], "fix the release notes");
    assert_eq!(
        std::path::Path::new(one["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        world.project.path().canonicalize().unwrap()
    );
    assert!(one["updatedAt"].as_str().unwrap().ends_with('Z'), "{one}");
    let none = lists[1].as_ref().unwrap()["sessions"].as_array().unwrap();
    assert!(none.is_empty(), "{none:?}");
    let all = lists[2].as_ref().unwrap()["sessions"].as_array().unwrap();
    assert_eq!(all.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_resume_continues_a_session_without_replaying_it() {
    let world = World::with("openai-chat", vec![text("one"), text("two")], "").await;
    let id = saved_session(&world, "remember the word heron").await;
    let run = world
        .client(
            json!([
                call("session/resume", json!({"sessionId": id, "cwd": world.project.path(), "mcpServers": []})),
                {"prompt": "which word?"},
            ]),
            json!({}),
        )
        .await;
    let resumed = answers(&run, "session/resume");
    let resumed = resumed[0].as_ref().unwrap();
    assert_eq!(resumed["modes"]["currentModeId"], "manual", "{resumed}");
    assert!(
        run.updates("user_message_chunk").is_empty(),
        "{:#?}",
        run.log
    );
    assert_eq!(said(&run), "two");
    let stops: Vec<&Value> = run
        .events("stop")
        .iter()
        .map(|e| &e["stopReason"])
        .collect();
    assert_eq!(stops, [&json!("end_turn")]);
    // The second request carries the first turn: the session went on.
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies[1].contains("remember the word heron"),
        "{}",
        bodies[1]
    );
    assert!(bodies[1].contains("which word?"));
    let file = world
        .home
        .path()
        .join("sessions")
        .join(format!("{id}.jsonl"));
    assert!(
        std::fs::read_to_string(file)
            .unwrap()
            .contains("which word?")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_close_stops_the_session_and_keeps_its_file() {
    let world = World::with("openai-chat", vec![text("one")], "").await;
    let run = world
        .client(
            json!([
                world.new_session(),
                {"prompt": "hello"},
                call("session/close", json!({"sessionId": "$session"})),
                {"prompt": "still there?"},
                call("session/close", json!({"sessionId": "$session"})),
            ]),
            json!({}),
        )
        .await;
    let id = run.events("session")[0]["sessionId"].as_str().unwrap();
    let closes = answers(&run, "session/close");
    assert!(closes[0].is_ok(), "{:?}", closes[0]);
    let again = closes[1].as_ref().unwrap_err();
    assert!(
        again["data"].as_str().unwrap().contains("is not open"),
        "{again}"
    );
    let refused = run.events("prompt_error");
    assert_eq!(refused.len(), 1, "{:#?}", run.log);
    assert!(
        refused[0]["data"]
            .as_str()
            .unwrap()
            .contains("unknown session"),
        "{}",
        refused[0]
    );
    // Only the first prompt reached the model; the file stays to resume.
    assert_eq!(world.llm.bodies().len(), 1);
    assert!(
        world
            .home
            .path()
            .join("sessions")
            .join(format!("{id}.jsonl"))
            .is_file()
    );
    assert_eq!(run.exit_code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_delete_removes_its_file_and_refuses_paths_and_unknown_ids() {
    let world = World::with("openai-chat", vec![text("one"), text("two")], "").await;
    let doomed = saved_session(&world, "delete me").await;
    let kept = saved_session(&world, "keep me").await;
    let sessions = world.home.path().join("sessions");
    std::fs::write(world.home.path().join("bait.jsonl"), "not a session").unwrap();
    let run = world
        .client(
            json!([
                call("session/delete", json!({"sessionId": "../bait"})),
                call("session/delete", json!({"sessionId": doomed[..8]})),
                call(
                    "session/delete",
                    json!({"sessionId": "0123456789abcdef0123456789abcdef"})
                ),
                call("session/delete", json!({"sessionId": doomed})),
                call("session/list", json!({})),
            ]),
            json!({}),
        )
        .await;
    let deletes = answers(&run, "session/delete");
    for refused in &deletes[..2] {
        let e = refused.as_ref().unwrap_err();
        assert!(
            e["data"].as_str().unwrap().contains("invalid session id"),
            "{e}"
        );
    }
    let unknown = deletes[2].as_ref().unwrap_err();
    assert!(
        unknown["data"]
            .as_str()
            .unwrap()
            .contains("no saved session"),
        "{unknown}"
    );
    assert!(deletes[3].is_ok(), "{:?}", deletes[3]);
    assert!(!sessions.join(format!("{doomed}.jsonl")).exists());
    assert!(sessions.join(format!("{kept}.jsonl")).is_file());
    assert!(world.home.path().join("bait.jsonl").is_file());
    let listed = answers(&run, "session/list")[0].clone().unwrap();
    let ids: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [kept.as_str()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_options_change_the_mode_and_the_model_and_say_so() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": "echo hi > ran.txt"})),
            text("ran"),
        ],
        "models = [\"test-model\", \"other-model\"]\n",
    )
    .await;
    let run = world
        .client(
            json!([
                world.new_session(),
                call("session/set_config_option", json!({"sessionId": "$session", "configId": "mode", "value": "bypass"})),
                call("session/set_config_option", json!({"sessionId": "$session", "configId": "model", "value": "other-model"})),
                call("session/set_config_option", json!({"sessionId": "$session", "configId": "model", "value": "no-such-model"})),
                call("session/set_config_option", json!({"sessionId": "$session", "configId": "mode", "value": "sudo"})),
                {"prompt": "go"},
            ]),
            json!({}),
        )
        .await;
    // session/new offers both, at the start mode and the settings' model.
    let created = &run.events("session")[0]["configOptions"];
    assert_eq!(
        option(created, "mode")["currentValue"],
        "manual",
        "{created}"
    );
    assert_eq!(option(created, "model")["currentValue"], "test-model");
    let sets = answers(&run, "session/set_config_option");
    let after_mode = &sets[0].as_ref().unwrap()["configOptions"];
    let mode = option(after_mode, "mode");
    assert_eq!(mode["currentValue"], "bypass", "{mode}");
    assert_eq!(mode["category"], "mode");
    let values: Vec<&str> = mode["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["plan", "manual", "accept-edits", "auto", "bypass"]);
    let after_model = &sets[1].as_ref().unwrap()["configOptions"];
    let model = option(after_model, "model");
    assert_eq!(model["currentValue"], "other-model", "{model}");
    let models: Vec<&str> = model["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert!(
        models.contains(&"test-model") && models.contains(&"other-model"),
        "{models:?}"
    );
    let unknown = sets[2].as_ref().unwrap_err();
    assert!(
        unknown["data"].as_str().unwrap().contains("no-such-model"),
        "{unknown}"
    );
    let sudo = sets[3].as_ref().unwrap_err();
    assert!(
        sudo["data"]
            .as_str()
            .unwrap()
            .contains("unknown permission mode"),
        "{sudo}"
    );
    // Reflected: the editor was told, the call ran unasked in bypass, and
    // the requests went to the chosen model.
    assert_eq!(run.updates("current_mode_update").len(), 1);
    let told = run.updates("config_option_update");
    let last = told.last().unwrap();
    assert_eq!(
        option(&last["configOptions"], "model")["currentValue"],
        "other-model"
    );
    assert_eq!(
        option(&last["configOptions"], "mode")["currentValue"],
        "bypass"
    );
    assert!(run.permissions().is_empty(), "{:#?}", run.log);
    assert!(world.project.path().join("ran.txt").exists());
    for body in world.llm.bodies() {
        assert!(body.contains("\"model\":\"other-model\""), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_advertised_commands_are_exactly_the_ones_that_work_here() {
    let world = World::with(
        "openai-chat",
        vec![text("AGENTS.md is for you to review")],
        "",
    )
    .await;
    let run_steps = |names: &[String]| {
        let mut steps = vec![world.new_session()];
        for name in names {
            steps.push(json!({"prompt": format!("/{name}")}));
        }
        steps.push(json!({"prompt": "/new"}));
        steps.push(json!({"prompt": "/mode bypass"}));
        Value::Array(steps)
    };
    let advertised: Vec<String> = {
        let probe = world.client(json!([world.new_session()]), json!({})).await;
        let updates = probe.updates("available_commands_update");
        assert_eq!(updates.len(), 1, "{:#?}", probe.log);
        updates[0]["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        advertised,
        [
            "clear",
            "compact",
            "mcp",
            "permissions",
            "rewind",
            "shells",
            "model",
            "diff",
            "init"
        ]
    );
    let run = world.client(run_steps(&advertised), json!({})).await;
    // Each advertised command answered and ended its prompt; none said it
    // is not available, and none reached the model but /init's turn.
    let stops = run.events("stop");
    assert_eq!(stops.len(), advertised.len(), "{:#?}", run.log);
    for stop in &stops {
        assert_eq!(stop["stopReason"], "end_turn", "{:#?}", run.log);
    }
    let text = said(&run);
    assert!(!text.contains("not available"), "{text}");
    assert!(!text.contains("full-screen"), "{text}");
    for shown in [
        "No MCP servers are configured",
        "test-model",
        "History cleared",
        "There is no earlier history",
    ] {
        assert!(text.contains(shown), "{shown}: {text}");
    }
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert!(bodies[0].contains("Write an AGENTS.md file"));
    assert!(!bodies[0].contains("/diff"));
    // The others are refused with what to do instead.
    let refused = run.events("prompt_error");
    assert_eq!(refused.len(), 2, "{:#?}", run.log);
    assert!(
        refused[0]["data"]
            .as_str()
            .unwrap()
            .contains("/new is not available in an editor")
    );
    assert!(
        refused[1]["data"]
            .as_str()
            .unwrap()
            .contains("mode selector")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_tool_sends_plan_updates() {
    let world = World::with(
        "openai-chat",
        vec![
            tool(
                "plan",
                json!({"action": "set", "steps": ["read notes.md", "fix the title"]}),
            ),
            tool(
                "plan",
                json!({"action": "update", "step": 1, "status": "done"}),
            ),
            text("Planned."),
        ],
        "",
    )
    .await;
    let run = world
        .client(
            json!([world.new_session(), {"setMode": "accept-edits"}, {"prompt": "plan it"}]),
            json!({}),
        )
        .await;
    let plans = run.updates("plan");
    assert_eq!(plans.len(), 2, "{:#?}", run.log);
    let entries = |n: usize| -> Vec<(String, String)> {
        plans[n]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["content"].as_str().unwrap().to_string(),
                    e["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        entries(0),
        [
            ("read notes.md".to_string(), "pending".to_string()),
            ("fix the title".into(), "pending".into())
        ]
    );
    assert_eq!(
        entries(1)[0],
        ("read notes.md".to_string(), "completed".to_string())
    );
    let calls = run.updates("tool_call");
    assert!(calls.iter().all(|c| c["kind"] == "think"), "{calls:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_updates_carry_the_services_token_counts() {
    let world = World::with(
        "openai-chat",
        vec![text("counted")],
        "context_window = 32000\n",
    )
    .await;
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "count me"}]),
            json!({}),
        )
        .await;
    let usage = run.updates("usage_update");
    assert_eq!(usage.len(), 1, "{:#?}", run.log);
    // The loopback service says 100 tokens in and 10 out.
    assert_eq!(usage[0]["used"], 110, "{}", usage[0]);
    assert_eq!(usage[0]["size"], 32000, "{}", usage[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticate_checks_the_key_variable_and_names_it_when_unset() {
    let world = World::with("openai-chat", vec![], "").await;
    // A remote service (never reached: nothing here makes a request).
    std::fs::write(
        world.home.path().join("config.toml"),
        "[model]\nprovider = \"openai-chat\"\nbase_url = \"https://llm.example.invalid/v1\"\nmodel = \"m\"\napi_key_env = \"MINO_ACP_TEST_KEY\"\n",
    )
    .unwrap();
    let steps = json!([
        call("authenticate", json!({"methodId": "environment-key"})),
        call("authenticate", json!({"methodId": "oauth"})),
        call(
            "session/new",
            json!({"cwd": world.project.path(), "mcpServers": []})
        ),
    ]);
    let without = world.client(steps.clone(), json!({})).await;
    let methods = &without.events("initialized")[0]["response"]["authMethods"];
    assert_eq!(methods[0]["id"], "environment-key", "{methods}");
    assert!(
        methods[0]["description"]
            .as_str()
            .unwrap()
            .contains("MINO_ACP_TEST_KEY")
    );
    let tries = answers(&without, "authenticate");
    let unset = tries[0].as_ref().unwrap_err();
    assert_eq!(unset["code"], -32000, "{unset}");
    let why = unset["data"].as_str().unwrap();
    assert!(
        why.contains("MINO_ACP_TEST_KEY") && why.contains("config.toml"),
        "{why}"
    );
    assert!(
        tries[1].as_ref().unwrap_err()["data"]
            .as_str()
            .unwrap()
            .contains("environment-key")
    );
    let refused = answers(&without, "session/new");
    assert_eq!(refused[0].as_ref().unwrap_err()["code"], -32000);

    let with = world
        .client(steps, json!({"env": {"MINO_ACP_TEST_KEY": "sk-test", "MINO_HOME": world.home.path(), "AGENT_YOLO": ""}}))
        .await;
    let tries = answers(&with, "authenticate");
    assert!(tries[0].is_ok(), "{:?}", tries[0]);
    assert!(answers(&with, "session/new")[0].is_ok(), "{:#?}", with.log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_servers_prompts_are_advertised_and_run_as_commands() {
    let world = World::mcp(vec![text("sunny")], |_| {
        super::mcp::everything("everything", "")
    })
    .await;
    let run = world
        .client(
            json!([
                world.new_session(),
                {"prompt": "/everything:args-prompt state=Viken"},
                {"prompt": "/everything:args-prompt city=Oslo state=Viken"},
            ]),
            json!({}),
        )
        .await;
    let advertised = run.updates("available_commands_update");
    let last = advertised.last().unwrap()["availableCommands"]
        .as_array()
        .unwrap();
    let prompt = last
        .iter()
        .find(|c| c["name"] == "everything:args-prompt")
        .unwrap_or_else(|| panic!("not advertised: {advertised:#?}"));
    assert_eq!(
        prompt["input"]["hint"], "city=VALUE [state=VALUE]",
        "{prompt}"
    );
    let stops = run.events("stop");
    assert_eq!(stops.len(), 2, "{:#?}", run.log);
    let text = said(&run);
    assert!(text.contains("the argument city is required"), "{text}");
    assert!(text.contains("What's weather in Oslo, Viken?"), "{text}");
    assert!(text.contains("sunny"), "{text}");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert!(bodies[0].contains("What's weather in Oslo, Viken?"));
    assert!(!bodies[0].contains("/everything:"));
}
