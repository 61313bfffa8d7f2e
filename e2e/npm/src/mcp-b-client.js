// The MCP-B extension path, in the page: an MCP client (the official SDK's) over @mcp-b/transports'
// TabClientTransport, talking to the MCP server that @mcp-b/global runs behind
// document.modelContext. Bundled at test time by esbuild (e2e/test_mcp_b.py) into e2e/npm/dist/ (ignored).
//
// window.mcpB:
//   connect()              -> the server's name, version and capabilities
//   listTools()            -> tools/list's tools
//   callTool(name, args)   -> tools/call's result (content, isError, ...)
//   listChanges()          -> how many notifications/tools/list_changed arrived so far
import { Client } from "@modelcontextprotocol/client";
import { TabClientTransport } from "@mcp-b/transports";

const CONNECT_TIMEOUT_MS = 20_000;

let client = null;
let listChanged = 0;

async function connect() {
  if (client === null) {
    const fresh = new Client({ name: "agent-surface-e2e-mcp-b", version: "0.1.0" });
    fresh.setNotificationHandler("notifications/tools/list_changed", () => {
      listChanged += 1;
    });
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
