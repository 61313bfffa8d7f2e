// The official TypeScript MCP SDK client, driven line by line from a Python test: it starts the
// server command given as JSON in argv[2] over stdio, then reads one JSON command per stdin line
// and writes one JSON answer per stdout line.
//   {"list": true}                                   -> {"tools": [names]}
//   {"call": name, "arguments": {}, "timeoutMs": N,  -> {"result": CallToolResult, "progress": [...]}
//    "resetTimeoutOnProgress": bool}                    or {"error": message, "progress": [...]}
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "agentsurface-e2e", version: "0" });
await client.connect(transport);
const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");

for await (const line of createInterface({ input: process.stdin })) {
  const order = JSON.parse(line);
  if (order.list) {
    say({ tools: (await client.listTools()).tools.map((tool) => tool.name) });
    continue;
  }
  const progress = [];
  try {
    const result = await client.callTool({ name: order.call, arguments: order.arguments ?? {} }, CallToolResultSchema, {
      timeout: order.timeoutMs,
      resetTimeoutOnProgress: order.resetTimeoutOnProgress === true,
      onprogress: (note) => progress.push(note),
    });
    say({ result, progress });
  } catch (error) {
    say({ error: String(error?.message ?? error), progress });
  }
}
await client.close();
