// What every command that opens the graph shares: where the configuration is ([CG-CLI-1]),
// opening it, calling one tool with the interrupt rule of [CG-CLI-4], and reporting a failure.
import { resolve } from "node:path";
import type { Operation } from "../../_generated/operations.js";
import { GraphError } from "../../core/errors.js";
import type { CapabilityGraph } from "../../core/graph.js";
import { CONFIG_OPTION, type ParsedCommand } from "./arguments.js";
import { EXIT, type Io } from "./io.js";

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
  const { CapabilityGraph } = await import("../../core/graph.js");
  return CapabilityGraph.open(configPath(parsed));
}

/**
 * The interrupt rule of a match ([CG-CLI-4]): from the moment the command knows it will run a
 * match, SIGINT aborts the signal the match runs under (an interrupt that arrives while the graph
 * is still opening cancels the match as it starts), the match ends with CG_MODEL_CANCELLED and the
 * command exits 130. Other commands keep the default SIGINT behaviour.
 */
export class Interrupt {
  readonly #controller = new AbortController();
  readonly #listening: boolean;
  readonly #onSignal = () => this.#controller.abort();

  constructor(operation: Operation | undefined) {
    this.#listening = operation?.phase === "match";
    if (this.#listening) process.on("SIGINT", this.#onSignal);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  dispose(): void {
    if (this.#listening) process.off("SIGINT", this.#onSignal);
  }
}

/** Call one tool of an open graph under the command's interrupt signal. */
export async function callTool(
  graph: CapabilityGraph,
  tool: string,
  request: unknown,
  interrupt: Interrupt,
): Promise<{ result: Record<string, unknown> } | { error: GraphError }> {
  try {
    return { result: await graph.call(tool, request, { signal: interrupt.signal }) };
  } catch (error) {
    if (error instanceof GraphError) return { error };
    throw error;
  }
}

/**
 * Report a failed call: the envelope on stderr, exit 1 — 130 for a cancelled match
 * ([CG-CLI-2], [CG-CLI-4]; the suite holds every CG_MODEL_CANCELLED of the CLI to 130, whoever
 * cancelled).
 */
export async function failure(io: Io, error: GraphError): Promise<number> {
  await io.envelope(error.toJSON());
  return error.code === "CG_MODEL_CANCELLED" ? EXIT.interrupted : EXIT.graphError;
}
