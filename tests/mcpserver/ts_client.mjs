// A client written with the official TypeScript SDK (@modelcontextprotocol/sdk), for
// tests/mcpserver/test_mcp_client_matrix.py.
//
//   node ts_client.mjs NODE_MODULES STEPS_JSON stdio COMMAND [ARG...]
//   node ts_client.mjs NODE_MODULES STEPS_JSON http URL
//
// STEPS_JSON is a list of {"tool": name, "arguments": {...}} or {"resource": uri}. The client
// connects once, runs the steps in order and prints one JSON object on stdout:
// {"protocolVersion", "tools": [names], "steps": [{"text", "isError", "structured"}]}.
// A `conversation` handle a result carries is passed back on later tool calls, as the tool
// descriptions ask a model to do. Server environment for stdio: this process's environment.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, stepsJson, transportName, ...target] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol/sdk/dist/esm", path)).href);
const { Client } = await sdk("client/index.js");

let transport;
if (transportName === "stdio") {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  transport = new StdioClientTransport({
    command: target[0],
    args: target.slice(1),
    env: { ...process.env },
    stderr: "ignore",
  });
} else if (transportName === "http") {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(target[0]));
} else {
  throw new Error(`unknown transport ${transportName}`);
}

const client = new Client({ name: "skillshelf-matrix-ts", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const steps = [];
let conversation;
for (const step of JSON.parse(stepsJson)) {
  if (step.resource !== undefined) {
    const result = await client.readResource({ uri: step.resource });
    steps.push({ text: result.contents.map((c) => c.text ?? "").join(""), isError: false });
    continue;
  }
  const args = conversation === undefined ? step.arguments : { ...step.arguments, conversation };
  const result = await client.callTool({ name: step.tool, arguments: args });
  const structured = result.structuredContent ?? null;
  if (structured?.conversation) conversation = structured.conversation;
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  steps.push({ text, isError: Boolean(result.isError), structured });
}
const protocolVersion = transport.protocolVersion ?? null;
await client.close();
process.stdout.write(JSON.stringify({ protocolVersion, tools, steps }) + "\n");
