// A real ACP client (the official TypeScript SDK) driving one agent process
// through a plan the Rust test gives as JSON in argv[2]:
//
//   { "command": [...argv], "env": {...}, "cwd": "...", "rawStdout": "file",
//     "capabilities": {...clientCapabilities}, "files": {"/abs": "unsaved buffer text"},
//     "steps": [ {"new": "/abs/cwd"} | {"load": "ID", "cwd": "/abs"}
//              | {"prompt": "text", "blocks": [...more content blocks], "answers": [...], "cancelAfterMs": n,
//                 "beforeAnswer": {"write": "/abs", "content": "text"}}
//              | {"setMode": "bypass"}
//              | {"call": "session/list", "params": {...}} ] }
//
// A "call" step sends any request by its method name ("$session" in its
// params stands for the session in use; a session/resume makes its session
// the one in use) and logs {event: "result", method, response} or, when the
// agent answers with an error, {event: "error", method, code, message, data}.
//
// Each permission request takes the next answer of its prompt: an option
// kind (allow_once, allow_always, reject_once, reject_always) or an option's
// id, "cancelled",
// "cancel" (send session/cancel, then answer cancelled, as the protocol
// asks), or "close" (close the agent's stdin and never answer). What
// happened is printed as one JSON object on stdout; the agent's raw stdout
// is saved byte for byte to rawStdout.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { ClientApp, ndJsonStream } from "@agentclientprotocol/sdk";

const plan = JSON.parse(process.argv[2]);
const log = [];
const raw = [];
let stderr = "";

const child = spawn(plan.command[0], plan.command.slice(1), {
  cwd: plan.cwd,
  env: { ...process.env, ...plan.env },
  stdio: ["pipe", "pipe", "pipe"],
});
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
child.stderr.on("data", (d) => (stderr += d.toString()));
child.stdin.on("error", () => {});

const readable = new ReadableStream({
  start(controller) {
    child.stdout.on("data", (d) => {
      raw.push(Buffer.from(d));
      // The SDK may close its reader first (at the end of a run): what
      // arrives after that is still saved in raw, only not delivered.
      try {
        controller.enqueue(new Uint8Array(d));
      } catch {}
    });
    child.stdout.on("end", () => {
      try {
        controller.close();
      } catch {}
    });
  },
});
let closed = false;
const writable = new WritableStream({
  write(chunk) {
    if (closed) return;
    return new Promise((resolve) => child.stdin.write(chunk, () => resolve()));
  },
  close() {
    child.stdin.end();
  },
});

let answers = [];
let beforeAnswer = null;
let sessionId = null;
let agentRef = null;
let closeNow = null;
const gone = new Promise((resolve) => (closeNow = resolve));

const app = new ClientApp({ name: "mino-test-client" })
  .onNotification("session/update", ({ params }) => {
    log.push({ event: "update", update: params.update });
  })
  .onRequest("session/request_permission", async ({ params }) => {
    const answer = answers.shift() ?? "reject_once";
    if (beforeAnswer) {
      // Something else changes a file while the question is open.
      writeFileSync(beforeAnswer.write, beforeAnswer.content);
      beforeAnswer = null;
    }
    log.push({ event: "permission", toolCall: params.toolCall, options: params.options, answer });
    if (answer === "close") {
      closed = true;
      child.stdin.end();
      closeNow();
      return new Promise(() => {});
    }
    if (answer === "cancel") {
      await agentRef.notify("session/cancel", { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    if (answer === "cancelled") {
      return { outcome: { outcome: "cancelled" } };
    }
    // An option kind, or an option's own id (a rewind's choices).
    const option = params.options.find((o) => o.optionId === answer) ?? params.options.find((o) => o.kind === answer);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest("terminal/create", async ({ params }) => {
    // mino never has the client run a command; logged to be checked.
    log.push({ event: "terminal/create", params });
    throw new Error("this test client runs no commands");
  })
  .onRequest("fs/read_text_file", async ({ params }) => {
    log.push({ event: "read_text_file", params });
    // An open buffer (saved or not) wins; otherwise the file on disk, as an
    // editor reads it.
    const text = (plan.files ?? {})[params.path] ?? readFileSync(params.path, "utf8");
    return { content: text };
  })
  .onRequest("fs/write_text_file", async ({ params }) => {
    // As an editor does: the buffer takes the text and is saved.
    log.push({ event: "write_text_file", params });
    writeFileSync(params.path, params.content);
    return {};
  });

async function run(agent) {
  agentRef = agent;
  const init = await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: plan.capabilities ?? {},
  });
  log.push({ event: "initialized", response: init });
  for (const step of plan.steps) {
    if (step.new) {
      const r = await agent.request("session/new", { cwd: step.new, mcpServers: [] });
      sessionId = r.sessionId;
      log.push({ event: "session", sessionId, modes: r.modes, configOptions: r.configOptions });
    } else if (step.load) {
      const r = await agent.request("session/load", { sessionId: step.load, cwd: step.cwd, mcpServers: [] });
      sessionId = step.load;
      log.push({ event: "loaded", sessionId, modes: r?.modes });
    } else if (step.setMode) {
      await agent.request("session/set_mode", { sessionId, modeId: step.setMode });
      log.push({ event: "mode_set", modeId: step.setMode });
    } else if (step.call) {
      const params = JSON.parse(JSON.stringify(step.params ?? {}).replaceAll('"$session"', JSON.stringify(sessionId)));
      try {
        const response = await agent.request(step.call, params);
        log.push({ event: "result", method: step.call, response: response ?? null });
        if (step.call === "session/resume") sessionId = params.sessionId;
      } catch (e) {
        log.push({ event: "error", method: step.call, code: e?.code ?? null, message: String(e?.message ?? e), data: e?.data ?? null });
      }
    } else if (step.prompt !== undefined) {
      answers = [...(step.answers ?? [])];
      beforeAnswer = step.beforeAnswer ?? null;
      const prompt = agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: step.prompt }, ...(step.blocks ?? [])],
      });
      if (step.cancelAfterMs !== undefined) {
        setTimeout(() => agent.notify("session/cancel", { sessionId }), step.cancelAfterMs);
      }
      const outcome = await Promise.race([prompt.then((r) => ({ r }), (e) => ({ e })), gone.then(() => ({ gone: true }))]);
      if (outcome.gone) {
        log.push({ event: "closed" });
        return;
      }
      if (outcome.e) {
        log.push({ event: "prompt_error", message: String(outcome.e?.message ?? outcome.e), data: outcome.e?.data ?? null });
      } else {
        log.push({ event: "stop", stopReason: outcome.r.stopReason });
      }
    }
  }
}

let failure = null;
try {
  const stream = ndJsonStream(writable, readable);
  await Promise.race([app.connectWith(stream, run), gone]);
} catch (e) {
  failure = String(e?.stack ?? e) + (e?.data ? `\ndata: ${JSON.stringify(e.data)}` : "");
}
if (!closed) {
  closed = true;
  child.stdin.end();
}
const timer = setTimeout(() => child.kill("SIGKILL"), 15000);
const exit = await exited;
clearTimeout(timer);
if (plan.rawStdout) writeFileSync(plan.rawStdout, Buffer.concat(raw));
process.stdout.write(JSON.stringify({ log, exit, failure, stderr }) + "\n");
process.exit(0);
