// The baseline of the MCP benchmarks (python/capability-graph/bench/bench_typescript.py): a bare low-level
// @modelcontextprotocol/sdk server over the SDK's own stdio transport, serving the same tool
// definitions and answering tools/call with the same payload as `capability-graph mcp`, without a
// graph behind it. argv[2]: a JSON file {"tools": [...], "payload": {...}}.
import { readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const { tools, payload } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const server = new Server({ name: "bare", version: "1" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async () => ({
  content: [{ type: "text", text: JSON.stringify(payload) }],
  structuredContent: payload,
}));
await server.connect(new StdioServerTransport());
