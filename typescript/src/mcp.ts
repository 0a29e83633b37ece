// The MCP server ([CG-MCP-1] .. [CG-MCP-5]): the five tools of the operation table served over
// stdio on the official @modelcontextprotocol/sdk. The server only projects: a result becomes
// `structuredContent` plus one text item holding it as JSON; a GraphError becomes `isError: true`
// with exactly one text item holding the error object as JSON and no `structuredContent`.
//
// The transport is our own line reader over stdin/stdout rather than the SDK's
// StdioServerTransport, for one reason: a request text must keep one meaning ([CG-CONV-4],
// [CG-CONV-6], [CG-MSG-13]). A JSON parser that keeps the last of two duplicate members, or rounds
// a long integer literal, would hide the fault, so the server hands the graph the raw text of each
// `tools/call` `arguments` member, and the graph judges it like any other request text.
import type { Readable, Writable } from "node:stream";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { OPERATIONS } from "./_generated/operations.js";
import { GraphError } from "./errors.js";
import type { CapabilityGraph, JsonObject } from "./graph.js";
import { memberText } from "./json/spans.js";
import { toolDefinitions } from "./tools.js";
import { packageVersion } from "./version.js";

/** The server name every client sees ([CG-MCP-1]). */
export const SERVER_NAME = "capability-graph";

/** The `instructions` of the `initialize` result, verbatim ([CG-MCP-10]). */
export const INSTRUCTIONS =
  "Capability Graph: discover what the configured products and services can do. " +
  "Call describe_graph first, then list_capabilities or match_capabilities to find " +
  "capabilities, resolve_capabilities for their details, relations and documents, and " +
  "read_document for a local document's text. A failed call returns isError with a JSON " +
  "error object whose nextAction says what to do next.";

/** Exit status when a standard stream the server needs fails ([CG-CLI-7]). */
const EXIT_STREAM_FAILED = 74;

const TOOL_NAMES = new Set(OPERATIONS.map((operation) => operation.tool));

/**
 * The text of the value at `params.arguments` inside one JSON-RPC message text, or undefined
 * when the message has no such member. The text already passed JSON.parse, so it is well-formed;
 * like JSON.parse, the last of repeated `params` or `arguments` members wins, so the text found is
 * the one the parsed message carries.
 */
export function argumentsText(line: string): string | undefined {
  return memberText(line, ["params", "arguments"]);
}

/**
 * MCP over one pair of byte streams, one JSON-RPC message per line. It remembers the raw
 * `arguments` text of each `tools/call` request by request id until the handler takes it.
 */
class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #pending = new Map<RequestId, string>();
  #buffer = "";
  #closed = false;
  /** Set when stdout failed: the client went away or the stream is broken. */
  outputFailed = false;

  constructor(input: Readable, output: Writable) {
    this.#input = input;
    this.#output = output;
  }

  async start(): Promise<void> {
    this.#input.setEncoding("utf8");
    this.#input.on("data", (chunk: string) => this.#receive(chunk));
    this.#input.on("end", () => void this.close());
    this.#input.on("error", () => void this.close());
    this.#output.on("error", () => {
      this.outputFailed = true;
      void this.close();
    });
  }

  #receive(chunk: string): void {
    this.#buffer += chunk;
    let newline = this.#buffer.indexOf("\n");
    while (newline !== -1) {
      const line = this.#buffer.slice(0, newline).replace(/\r$/, "");
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line.trim() !== "") this.#deliver(line);
      newline = this.#buffer.indexOf("\n");
    }
  }

  #deliver(line: string): void {
    let data: unknown;
    let message: JSONRPCMessage;
    try {
      data = JSON.parse(line);
      message = JSONRPCMessageSchema.parse(toolsCallForSdk(data) ?? data);
    } catch {
      // Not a JSON-RPC message: the MCP layer's fault, reported like the SDK's own transport
      // does (to onerror, never on stdout).
      this.onerror?.(new Error("a line of stdin is not a JSON-RPC message"));
      return;
    }
    if (isToolsCall(data)) {
      const name = isObject(data.params) ? data.params.name : undefined;
      if (typeof name !== "string" || !TOOL_NAMES.has(name)) {
        // A name that is no tool's, whatever its type ([CG-MCP-8]): answered before the SDK's
        // own validation could put its dump of the request into the error.
        void this.send({ jsonrpc: "2.0", id: data.id, error: UNKNOWN_TOOL });
        return;
      }
      const text = argumentsText(line);
      if (text !== undefined) this.#pending.set(data.id, text);
    }
    this.onmessage?.(message);
  }

  /** The raw `arguments` text of the `tools/call` request `id`, once. */
  takeArguments(id: RequestId): string | undefined {
    const text = this.#pending.get(id);
    this.#pending.delete(id);
    return text;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // A request the SDK answered without running the handler (invalid params) leaves its text.
    if ("id" in message && !("method" in message) && message.id !== undefined) {
      this.#pending.delete(message.id);
    }
    if (this.#closed || this.outputFailed) return;
    const text = `${JSON.stringify(message)}\n`;
    await new Promise<void>((resolve) => {
      this.#output.write(text, (error) => {
        if (error) this.outputFailed = true;
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.pause();
    this.onclose?.();
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A `tools/call` request ([CG-MCP-6]): answered whatever its `params` hold; `params` that are
 * not an object name no tool ([CG-MCP-8]).
 */
function isToolsCall(
  value: unknown,
): value is { jsonrpc: "2.0"; id: RequestId; method: "tools/call"; params?: unknown } {
  return (
    isObject(value) &&
    value.jsonrpc === "2.0" &&
    value.method === "tools/call" &&
    (typeof value.id === "string" || Number.isSafeInteger(value.id))
  );
}

/**
 * What the SDK sees of a `tools/call` of a known tool: the name and a well-formed `_meta`
 * only. The graph judges the arguments text, an object or not ([CG-MCP-7]), and no other
 * member of `params` changes the outcome ([CG-MCP-8]). Undefined for any other message.
 */
function toolsCallForSdk(value: unknown): unknown {
  if (!isToolsCall(value)) return undefined;
  const params = isObject(value.params) ? value.params : {};
  const name = params.name;
  if (typeof name !== "string" || !TOOL_NAMES.has(name)) {
    return { jsonrpc: "2.0", id: value.id, method: "tools/call", params: { name: "" } };
  }
  const request: Record<string, unknown> = { name, arguments: {} };
  const meta = params._meta;
  const metaParsed = CallToolRequestSchema.safeParse({
    method: "tools/call",
    params: { name, _meta: meta },
  });
  if (meta !== undefined && metaParsed.success) request._meta = meta;
  return { jsonrpc: "2.0", id: value.id, method: "tools/call", params: request };
}

/** The JSON-RPC error of a `tools/call` naming no tool, exactly ([CG-MCP-8]). */
const UNKNOWN_TOOL = { code: ErrorCode.InvalidParams, message: "Unknown tool" };

/**
 * An error the SDK sends as it is: its `code` and `message`, no `data` (an McpError would prefix
 * the message with its code).
 */
function protocolError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

function toolResult(result: JsonObject) {
  return {
    content: [{ type: "text" as const, text: JSON.stringify(result) }],
    structuredContent: result,
  };
}

function toolError(error: GraphError) {
  return {
    content: [{ type: "text" as const, text: JSON.stringify(error.toJSON()) }],
    isError: true,
  };
}

/** An MCP server (not yet connected) serving the tools of `graph`. */
function createServer(graph: CapabilityGraph, transport: LineTransport): Server {
  const server = new Server(
    { name: SERVER_NAME, version: packageVersion() },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolDefinitions() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const raw = transport.takeArguments(extra.requestId);
    const { name } = request.params;
    if (!TOOL_NAMES.has(name)) {
      // A protocol error, never an isError result ([CG-MCP-4]); the name is not repeated.
      throw protocolError(UNKNOWN_TOOL.code, UNKNOWN_TOOL.message);
    }
    try {
      const result = await graph.call(name, raw ?? {}, {
        signal: extra.signal,
      });
      return toolResult(result);
    } catch (error) {
      if (error instanceof GraphError) return toolError(error);
      // A defect: the contract has no code for it, and its text must not reach the wire.
      throw protocolError(ErrorCode.InternalError, "Internal error");
    }
  });
  return server;
}

export interface McpStreams {
  stdin: Readable;
  stdout: Writable;
}

/**
 * Serve `graph` over MCP on the given streams until the client closes stdin (exit status 0) or
 * stops reading stdout (exit status 74). The graph is closed before this resolves.
 */
export async function serveMcp(graph: CapabilityGraph, streams: McpStreams): Promise<number> {
  const transport = new LineTransport(streams.stdin, streams.stdout);
  const server = createServer(graph, transport);
  const ended = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  // A fault of the MCP layer (a line that is not a message) never ends the session and never
  // reaches stdout.
  server.onerror = () => {};
  await server.connect(transport);
  await ended;
  await graph.close();
  return transport.outputFailed ? EXIT_STREAM_FAILED : 0;
}
