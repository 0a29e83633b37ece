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
import { OPERATIONS } from "../_generated/operations.js";
import { GraphError } from "../core/errors.js";
import type { CapabilityGraph, JsonObject } from "../core/graph.js";
import { memberText } from "../core/json/spans.js";
import { toolDefinitions } from "../core/tool-definitions.js";
import { packageVersion } from "../core/version.js";

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

const TOOL_NAMES = new Set<string>(OPERATIONS.map((operation) => operation.tool));

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
 * The largest stdin line the server reads ([CG-MCP-11]): 65 MiB, room for a request of the
 * largest `maxInputBytes` ([CG-CFG-9], 64 MiB) and its envelope. A longer line is discarded as it
 * arrives, never held, and answered with {@link FRAME_TOO_LARGE}.
 */
export const MAX_FRAME_BYTES = 65 * 1024 * 1024;

/** The answer to a line over {@link MAX_FRAME_BYTES}: its id was never read ([CG-MCP-11]). */
const FRAME_TOO_LARGE = {
  jsonrpc: "2.0",
  error: { code: ErrorCode.InvalidRequest, message: "Request too large" },
} as const;

const NEWLINE = 0x0a;

/**
 * MCP over one pair of byte streams, one JSON-RPC message per line. It remembers the raw
 * `arguments` text of each `tools/call` request by request id until the handler takes it.
 *
 * Reading is linear and bounded: each chunk is searched for a newline once, the bytes of an
 * unfinished line are kept as a list of chunks (at most {@link MAX_FRAME_BYTES}), and a line is
 * decoded only when it is complete. Writing respects backpressure: while stdout is above its
 * high-water mark no further line is handed on and stdin is paused; both resume on 'drain'.
 */
class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #pending = new Map<RequestId, string>();
  /** The bytes of the unfinished line, already searched: no newline among them. */
  #parts: Buffer[] = [];
  #partsLength = 0;
  /** The current line is over the limit: its bytes are dropped until its newline. */
  #discarding = false;
  /** Bytes read but not yet searched (the rest of a chunk while stdout is full). */
  #unread: Buffer | undefined;
  #ended = false;
  #closed = false;
  /** Set when stdout failed: the client went away or the stream is broken. */
  outputFailed = false;

  constructor(input: Readable, output: Writable) {
    this.#input = input;
    this.#output = output;
  }

  async start(): Promise<void> {
    this.#input.on("data", (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      this.#unread = this.#unread === undefined ? bytes : Buffer.concat([this.#unread, bytes]);
      this.#pump();
    });
    this.#input.on("end", () => {
      this.#ended = true;
      this.#pump();
    });
    this.#input.on("error", () => void this.close());
    this.#output.on("error", () => {
      this.outputFailed = true;
      void this.close();
    });
    this.#output.on("drain", () => this.#pump());
  }

  /** stdout holds more than its high-water mark: the client is not reading. */
  #outputFull(): boolean {
    return this.#output.writableNeedDrain;
  }

  /** Hand on the complete lines read so far, as long as stdout takes the answers. */
  #pump(): void {
    while (this.#unread !== undefined && !this.#closed) {
      if (this.#outputFull()) {
        // Backpressure: stop reading until stdout drains; the rest of the chunk waits here.
        this.#input.pause();
        return;
      }
      const chunk = this.#unread;
      const newline = chunk.indexOf(NEWLINE);
      if (newline === -1) {
        this.#unread = undefined;
        this.#keep(chunk);
        break;
      }
      this.#unread = newline + 1 < chunk.length ? chunk.subarray(newline + 1) : undefined;
      this.#keep(chunk.subarray(0, newline));
      this.#lineEnded();
    }
    if (this.#closed) return;
    if (this.#ended) {
      if (this.#partsLength > 0 || this.#discarding) this.#lineEnded();
      void this.close();
      return;
    }
    if (this.#input.isPaused()) this.#input.resume();
  }

  /** Keep the bytes of the unfinished line, or drop them once it is over the limit. */
  #keep(bytes: Buffer): void {
    if (this.#discarding || bytes.length === 0) return;
    if (this.#partsLength + bytes.length > MAX_FRAME_BYTES + 1) {
      // One byte more than the limit may be a carriage return before the newline.
      this.#parts = [];
      this.#partsLength = 0;
      this.#discarding = true;
      return;
    }
    // A short read may be a slice of a much larger allocation: keep a copy, not the allocation.
    this.#parts.push(bytes.length * 2 < bytes.buffer.byteLength ? Buffer.from(bytes) : bytes);
    this.#partsLength += bytes.length;
  }

  #lineEnded(): void {
    if (this.#discarding) {
      this.#discarding = false;
      void this.send(FRAME_TOO_LARGE as JSONRPCMessage);
      return;
    }
    const bytes =
      this.#parts.length === 1 ? this.#parts[0] : Buffer.concat(this.#parts, this.#partsLength);
    this.#parts = [];
    this.#partsLength = 0;
    if (bytes === undefined) return;
    const end =
      bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    if (end > MAX_FRAME_BYTES) {
      void this.send(FRAME_TOO_LARGE as JSONRPCMessage);
      return;
    }
    const line = bytes.toString("utf8", 0, end);
    if (line.trim() !== "") this.#deliver(line);
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
