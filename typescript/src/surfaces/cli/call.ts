// `call TOOL [--arguments JSON | --arguments-file FILE]` ([CG-CLI-2], [CG-CLI-8], [CG-CLI-9],
// [CG-BUD-8]): a tool's exact JSON request, for scripts. An inline `--arguments` is checked to be
// JSON before the graph opens; an `--arguments-file` is read after it opens, at most
// maxInputBytes + 1 bytes, so an oversized file is CG_INPUT_TOO_LARGE without reading it whole.
import { constants, type FileHandle, open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { OPERATIONS } from "../../_generated/operations.js";
import { GraphError, graphError } from "../../core/errors.js";
import type { CapabilityGraph } from "../../core/graph.js";
import {
  CONFIG_OPTION,
  type CommandSpec,
  commandHelp,
  didYouMean,
  parseCommand,
  UsageError,
} from "./arguments.js";
import { callTool, failure, Interrupt, openGraph } from "./graph.js";
import { EXIT, type Io, StreamFailure } from "./io.js";

export const CALL_SPEC: CommandSpec = {
  name: "call",
  help: "Call a tool with its exact JSON request (for scripts).",
  options: [
    CONFIG_OPTION,
    {
      flag: "--arguments",
      metavar: "JSON",
      help: "the tool's request as JSON (default: {}); e.g. --arguments '{\"limit\": 5}'",
    },
    {
      flag: "--arguments-file",
      metavar: "FILE",
      help: "read the request from a regular FILE, or - for stdin; e.g. --arguments-file request.json",
    },
  ],
  positionals: [
    {
      name: "tool",
      metavar: "TOOL",
      help: `the tool to call, one of: ${OPERATIONS.map((operation) => operation.tool).join(", ")}; e.g. ${OPERATIONS[0]?.tool ?? ""}`,
    },
  ],
  examples: [
    `call ${OPERATIONS[0]?.tool ?? ""}`,
    'call resolve_capabilities --arguments \'{"ids": ["acme::route.validation"]}\'',
    "call match_capabilities --arguments-file request.json",
  ],
};

/**
 * Judge a request text with the core's `parseRequestText`, the one rule for request texts
 * ([CG-CLI-8], [CG-MSG-13]): a duplicate member name or an integer literal too long to convert
 * throws CG_INPUT_INVALID in the tool's phase (`query` for an unknown tool); a text that is not
 * JSON, not UTF-8 or starts with a byte order mark is a usage error naming the option.
 */
async function judgeText(tool: string, text: string | Uint8Array, option: string): Promise<string> {
  const { parseRequestText } = await import("../../core/graph.js");
  const outcome = parseRequestText(tool, text);
  if (outcome.kind === "parsed") return outcome.text;
  const reason =
    outcome.reason === "utf8"
      ? "not UTF-8 text"
      : outcome.reason === "bom"
        ? "a byte order mark is not JSON"
        : "not valid JSON";
  throw new UsageError(`argument ${option}: ${reason}`, CALL_SPEC.name);
}

/** Up to `limit` bytes of a readable stream (stdin for `--arguments-file -`). */
async function readStream(stream: Readable, limit: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
      chunks.push(buffer);
      size += buffer.length;
      if (size >= limit) break;
    }
  } catch {
    // stdin closed or failing: exit 74 ([CG-CLI-7]).
    throw new StreamFailure("stdin");
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

/** Up to `limit` bytes of an open file. */
async function readFile(handle: FileHandle, limit: number): Promise<Uint8Array> {
  const buffer = Buffer.alloc(limit);
  let size = 0;
  while (size < limit) {
    const { bytesRead } = await handle.read(buffer, size, limit - size, null);
    if (bytesRead === 0) break;
    size += bytesRead;
  }
  return buffer.subarray(0, size);
}

/** Open `--arguments-file FILE`: only a regular file is accepted ([CG-CLI-9]). */
async function openArgumentsFile(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a fifo must not wait for a writer; it is refused below anyway.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    throw new UsageError(
      "argument --arguments-file: not a readable regular file (use - for standard input)",
      CALL_SPEC.name,
    );
  }
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    throw new UsageError(
      "argument --arguments-file: not a readable regular file (use - for standard input)",
      CALL_SPEC.name,
    );
  }
  return handle;
}

/** The request text of `--arguments-file`, read from the open graph's point of view. */
async function fileRequest(
  graph: CapabilityGraph,
  tool: string,
  path: string,
  io: Io,
): Promise<string> {
  const describe = await graph.describe();
  const budgets = describe.budgets as { maxInputBytes: number };
  const limit = budgets.maxInputBytes + 1;
  let bytes: Uint8Array;
  if (path === "-") bytes = await readStream(io.stdin, limit);
  else {
    const handle = await openArgumentsFile(path);
    try {
      bytes = await readFile(handle, limit);
    } finally {
      await handle.close();
    }
  }
  if (bytes.length > budgets.maxInputBytes) {
    // An unknown tool is reported before the size of its arguments ([CG-PREC-2], [CG-BUD-8]).
    const operation = OPERATIONS.find((candidate) => candidate.tool === tool);
    if (operation === undefined) throw graphError("CG_INPUT_INVALID", "query", "unknownTool");
    throw graphError("CG_INPUT_TOO_LARGE", operation.phase);
  }
  return judgeText(tool, bytes, "--arguments-file");
}

export async function callCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseCommand(CALL_SPEC, args);
  if (parsed.help) {
    await io.out(commandHelp(CALL_SPEC));
    return EXIT.ok;
  }
  const tool = parsed.positionals.get("tool")?.[0] as string;
  const inline = parsed.options.get("--arguments")?.at(-1);
  const file = parsed.options.get("--arguments-file")?.at(-1);
  if (inline !== undefined && file !== undefined) {
    throw new UsageError(
      "argument --arguments-file: not allowed with argument --arguments",
      CALL_SPEC.name,
    );
  }
  const fail = (error: GraphError) => callFailure(io, error, tool);
  // An inline text is judged before the graph opens ([CG-CLI-8]).
  if (inline !== undefined) {
    try {
      await judgeText(tool, inline, "--arguments");
    } catch (error) {
      if (error instanceof GraphError) return fail(error);
      throw error;
    }
  }
  const operation = OPERATIONS.find((candidate) => candidate.tool === tool);
  const interrupt = new Interrupt(operation);
  try {
    let graph: CapabilityGraph;
    try {
      graph = await openGraph(parsed);
    } catch (error) {
      if (error instanceof GraphError) return fail(error);
      throw error;
    }
    try {
      let request: string;
      try {
        request = file === undefined ? (inline ?? "{}") : await fileRequest(graph, tool, file, io);
      } catch (error) {
        if (error instanceof GraphError) return fail(error);
        throw error;
      }
      const outcome = await callTool(graph, tool, request, interrupt);
      if ("error" in outcome) return fail(outcome.error);
      await io.out(`${JSON.stringify(outcome.result)}\n`);
      return EXIT.ok;
    } finally {
      await graph.close();
    }
  } finally {
    interrupt.dispose();
  }
}

/**
 * A failed `call`: the envelope ([CG-CLI-2]); for an unknown tool, when stderr is a terminal (a person is reading), a hint line listing the tools follows. A
 * program reading stderr through a pipe or a file gets the one-line envelope only ([CG-CLI-11]).
 */
async function callFailure(io: Io, error: GraphError, tool: string): Promise<number> {
  const status = await failure(io, error);
  const unknownTool = graphError("CG_INPUT_INVALID", "query", "unknownTool");
  const unknown = error.code === unknownTool.code && error.message === unknownTool.message;
  if (unknown && isTerminal(io.stderr)) {
    const tools = OPERATIONS.map((operation) => operation.tool);
    await io.err(`hint: the tools are ${tools.join(", ")}${didYouMean(tool, tools)}\n`);
  }
  return status;
}

function isTerminal(stream: unknown): boolean {
  return (stream as { isTTY?: unknown }).isTTY === true;
}
