// Drives `shiro acp` with the official TypeScript ACP SDK's client connection.
// Run by tests/acp/test_acp_node_client.py, which scripts the fake provider and checks the
// JSON summary this prints on stdout. Usage: node client.mjs <shiro executable> <workspace>
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [shiro, workspace] = process.argv.slice(2);
const child = spawn(shiro, ["acp"], { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });

const summary = { updates: [], permissions: [], reads: [], writes: [], stops: [], errors: {} };
const buffers = new Map();
let firstChunk = null;
const sawChunk = new Promise((resolve) => (firstChunk = resolve));

const conn = acp
  .client({ name: "shiro-neko-node-test" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    summary.permissions.push({ toolCallId: params.toolCall.toolCallId, options: params.options.map((o) => o.kind) });
    return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    summary.reads.push(params.path);
    if (buffers.has(params.path)) return { content: buffers.get(params.path) };
    const { readFile } = await import("node:fs/promises");
    return { content: await readFile(params.path, "utf8") };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    summary.writes.push([params.path, params.content]);
    buffers.set(params.path, params.content);
    return {};
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    summary.updates.push(params.update);
    if (params.update.sessionUpdate === "agent_message_chunk") firstChunk();
  })
  .connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));

async function expectError(name, promise) {
  try {
    await promise;
    summary.errors[name] = null;
  } catch (err) {
    summary.errors[name] = { code: err.code, message: String(err.message) };
  }
}

const agent = conn.agent;
const init = await agent.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
  clientInfo: { name: "node-test", version: "0" },
});
summary.initialize = init;
const { sessionId, modes } = await agent.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
summary.sessionId = sessionId;
summary.modes = modes;

const text = (t) => [{ type: "text", text: t }];
summary.stops.push((await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("edit hello.py") })).stopReason);

const updatesBefore = summary.updates.length;
const pending = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("go on forever") });
await sawChunk;
while (!summary.updates.slice(updatesBefore).some((u) => u.sessionUpdate === "agent_message_chunk")) {
  await new Promise((r) => setTimeout(r, 20));
}
await agent.notify(acp.methods.agent.session.cancel, { sessionId });
summary.stops.push((await pending).stopReason);

await expectError("unknownSession", agent.request(acp.methods.agent.session.prompt, { sessionId: "nope", prompt: text("hi") }));
await expectError("image", agent.request(acp.methods.agent.session.prompt, {
  sessionId, prompt: [{ type: "image", data: "aGk=", mimeType: "image/png" }],
}));
summary.list = await agent.request(acp.methods.agent.session.list, { cwd: workspace });

conn.close();
child.stdin.end();
const code = await new Promise((resolve) => child.on("exit", resolve));
summary.exitCode = code;
process.stdout.write(JSON.stringify(summary) + "\n");
