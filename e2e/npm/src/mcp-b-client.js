// The MCP-B extension path, in the page: an MCP client (the official TypeScript SDK's) over
// @mcp-b/transports' TabClientTransport, talking to the MCP server that @mcp-b/global runs behind
// document.modelContext. Bundled at test time by esbuild (e2e/test_mcp_b.py) into e2e/npm/dist/
// (ignored). Two lines of the SDK: "sdk" is @modelcontextprotocol/sdk 1.x (what MCP clients ship
// today), "v2" is @modelcontextprotocol/client 2.x (the line @mcp-b 5.x itself is built on).
//
// window.mcpB:
//   connect(line)          -> the server's name, version and capabilities
//   listTools()            -> tools/list's tools
//   callTool(name, args)   -> tools/call's result (content, isError, ...)
//   listChanges()          -> how many notifications/tools/list_changed arrived so far
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { TabClientTransport } from "@mcp-b/transports";

const CONNECT_TIMEOUT_MS = 20_000;
const INFO = { name: "agentsurface-e2e-mcp-b", version: "0.1.0" };

let client = null;
let listChanged = 0;

function newClient(line) {
  const counted = () => {
    listChanged += 1;
  };
  if (line === "sdk") {
    const made = new ClientV1(INFO);
    made.setNotificationHandler(ToolListChangedNotificationSchema, counted);
    return made;
  }
  if (line === "v2") {
    const made = new ClientV2(INFO);
    made.setNotificationHandler("notifications/tools/list_changed", counted);
    return made;
  }
  throw new Error(`unknown MCP SDK line ${line}: "sdk" or "v2"`);
}

async function connect(line) {
  if (client === null) {
    const fresh = newClient(line);
    // Never hang a test: a server that never answers (not loaded, another origin) fails in time.
    let timer;
    const timeout = new Promise((_, reject) => {
      const error = new Error(`no MCP-B server answered within ${CONNECT_TIMEOUT_MS} ms`);
      timer = setTimeout(() => reject(error), CONNECT_TIMEOUT_MS);
    });
    try {
      await Promise.race([
        fresh.connect(new TabClientTransport({ targetOrigin: window.location.origin })),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
    client = fresh;
  }
  return {
    server: client.getServerVersion() ?? null,
    capabilities: client.getServerCapabilities() ?? null,
  };
}

function connected() {
  if (client === null) throw new Error("mcpB.connect() first");
  return client;
}

window.mcpB = {
  connect,
  listTools: async () => (await connected().listTools()).tools,
  callTool: (name, args) => connected().callTool({ name, arguments: args ?? {} }),
  listChanges: () => listChanged,
};
