// What every command that opens the graph shares: where the configuration is ([CG-CLI-1]),
// opening it, calling one tool with the interrupt rule of [CG-CLI-4], and reporting a failure.
import { resolve } from "node:path";
import type { Operation } from "../_generated/operations.js";
import { GraphError } from "../errors.js";
import type { CapabilityGraph } from "../graph.js";
import { EXIT, type Io } from "./io.js";
import { CONFIG_OPTION, type ParsedCommand } from "./parse.js";

/** The configuration file ([CG-CLI-1]): --config, else $CAPABILITY_GRAPH_CONFIG, else ./capability-graph.json. */
export function configPath(parsed: ParsedCommand, cwd = process.cwd()): string {
  const given = parsed.options.get(CONFIG_OPTION.flag);
  const chosen = given?.[given.length - 1];
  if (chosen !== undefined) return resolve(cwd, chosen);
  const fromEnvironment = process.env.CAPABILITY_GRAPH_CONFIG;
  if (fromEnvironment !== undefined && fromEnvironment !== "") return resolve(cwd, fromEnvironment);
  return resolve(cwd, "capability-graph.json");
}

/** Open the graph of the command's configuration; a GraphError is reported by the caller. */
export async function openGraph(parsed: ParsedCommand): Promise<CapabilityGraph> {
  const { CapabilityGraph } = await import("../graph.js");
  return CapabilityGraph.open(configPath(parsed));
}

/**
 * Call one tool of an open graph. A match ([CG-CLI-4]) listens for SIGINT while it runs: the
 * interrupt cancels it through the graph's cancel signal, and the command exits 130 with the
 * CG_MODEL_CANCELLED envelope.
 */
export async function callTool(
  graph: CapabilityGraph,
  operation: Operation | undefined,
  tool: string,
  request: unknown,
): Promise<{ result: Record<string, unknown> } | { error: GraphError; interrupted: boolean }> {
  const interruptible = operation?.phase === "match";
  const controller = new AbortController();
  let interrupted = false;
  const onInterrupt = () => {
    interrupted = true;
    controller.abort();
  };
  if (interruptible) process.on("SIGINT", onInterrupt);
  try {
    return { result: await graph.call(tool, request, { signal: controller.signal }) };
  } catch (error) {
    if (error instanceof GraphError) return { error, interrupted };
    throw error;
  } finally {
    if (interruptible) process.off("SIGINT", onInterrupt);
  }
}

/** Report a failed call: the envelope on stderr, exit 1 (130 for an interrupted match). */
export async function failure(
  io: Io,
  outcome: { error: GraphError; interrupted: boolean },
): Promise<number> {
  await io.envelope(outcome.error.toJSON());
  return outcome.interrupted && outcome.error.code === "CG_MODEL_CANCELLED"
    ? EXIT.interrupted
    : EXIT.graphError;
}
