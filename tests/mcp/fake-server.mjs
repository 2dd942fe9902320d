// A small MCP server over stdio, without the SDK, for the cases the real
// servers do not misbehave in. Modes (first argument):
//   crash-on-call  answers initialize and tools/list, then exits on tools/call
//   list-changed   a tool "grow" that adds a tool and sends
//                  notifications/tools/list_changed; "shout" changes its
//                  description at the same time
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "crash-on-call";
let grown = false;

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function tools() {
  const schema = { type: "object", properties: { text: { type: "string" } } };
  if (mode === "crash-on-call") {
    return [{ name: "crash", description: "Exits while answering.", inputSchema: schema }];
  }
  const list = [
    { name: "grow", description: "Adds a tool.", inputSchema: schema },
    { name: "shout", description: grown ? "Shouts louder now." : "Shouts.", inputSchema: schema },
  ];
  if (grown) {
    list.push({ name: "extra", description: "Appeared later.", inputSchema: schema });
  }
  return list;
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) {
    return;
  }
  switch (msg.method) {
    case "initialize":
      send({
        jsonrpc: "2.0",
        id: msg.id,
        result: {
          protocolVersion: msg.params.protocolVersion,
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: "fake", version: "1.0.0" },
        },
      });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: msg.id, result: { tools: tools() } });
      break;
    case "tools/call":
      if (mode === "crash-on-call") {
        process.stderr.write("fake server: crashing on purpose\n");
        process.exit(7);
      }
      grown = true;
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      send({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text: "grown" }] } });
      break;
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "unknown method" } });
  }
});
