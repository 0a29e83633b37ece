// `mcp`: serve the graph over MCP on this process's stdin and stdout ([CG-MCP-1] .. [CG-MCP-5]).
// The one command of a surface that starts another surface (the MCP server), imported when it
// runs.
import { GraphError } from "../../core/errors.js";
import type { CapabilityGraph } from "../../core/graph.js";
import { CONFIG_OPTION, type CommandSpec, commandHelp, parseCommand } from "./arguments.js";
import { failure, openGraph } from "./graph.js";
import { EXIT, type Io } from "./io.js";

export const MCP_SPEC: CommandSpec = {
  name: "mcp",
  help: "Serve the graph over MCP on stdin/stdout.",
  options: [CONFIG_OPTION],
  positionals: [],
  examples: ["mcp --config graph/capability-graph.json"],
};

/** `mcp [--config FILE]`. */
export async function mcpCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseCommand(MCP_SPEC, args);
  if (parsed.help) {
    await io.out(commandHelp(MCP_SPEC));
    return EXIT.ok;
  }
  // A stdout closed when the server starts ends it at once with exit 74, before the configuration
  // is read and whether or not a client ever asks anything ([CG-CLI-7]): the package's launcher
  // leaves such a descriptor open read-only, where even an empty write fails.
  await io.out("");
  let graph: CapabilityGraph;
  try {
    graph = await openGraph(parsed);
  } catch (error) {
    // Nothing on stdout, the envelope on stderr, exit 1 ([CG-MCP-3]).
    if (error instanceof GraphError) return failure(io, error);
    throw error;
  }
  const { serveMcp } = await import("../mcp.js");
  return serveMcp(graph, { stdin: io.stdin, stdout: io.stdout });
}
