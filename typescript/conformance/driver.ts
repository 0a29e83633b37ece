// The conformance driver of the TypeScript implementation (driver protocol 1.1,
// spec/conformance/driver-protocol.schema.json): `cg-conformance` drives the SDK and the Tool
// Adapter through it, one JSON message per line on stdin, one answer per line on stdout.
//
//   start  -> started (implementation, protocol, surfaces sdk and tool)
//   run    -> one observation of one step: open, call (with a handle: started at once), await,
//             cancel (the call's AbortSignal; of a call that has finished, nothing happens),
//             reload, close, tools (the Tool Adapter's definitions; unsupported on the sdk
//             surface). A handle names its call until its await or the next open: any other
//             handle is answered protocolError (spec/conformance/README.md, "Scenarios").
//   stop   -> stopped, then exit
//
// What the caller saw is `returned` (the JSON value) or `raised` (a GraphError as its toJSON();
// anything else by type name). `display` is the error's toString(). The protocol owns stdout:
// console output of anything else is sent to stderr.
import { createInterface } from "node:readline";
import { CONTRACT_VERSION } from "../src/_generated/taxonomy.js";
import type { HostConfig } from "../src/_generated/types/config.js";
import { GraphError } from "../src/core/errors.js";
import { CapabilityGraph } from "../src/core/graph.js";
import { memberText } from "../src/core/json/spans.js";
import { parseJsonText } from "../src/core/json/text.js";
import { packageVersion } from "../src/core/version.js";
import { ToolAdapter } from "../src/surfaces/tools.js";

const PROTOCOL = "1.1";
const SURFACES = ["sdk", "tool"] as const;
type Surface = (typeof SURFACES)[number];

type Observation =
  | { outcome: "returned"; value: unknown }
  | { outcome: "raised"; graphError: true; error: object; display: string }
  | { outcome: "raised"; graphError: false; errorType: string; display: string }
  | { outcome: "started" }
  | { outcome: "unsupported"; reason: string };

interface Step {
  op?: unknown;
  config?: unknown;
  tool?: unknown;
  arguments?: unknown;
  handle?: unknown;
  providers?: unknown;
}

function returned(value: unknown): Observation {
  return { outcome: "returned", value };
}

function raised(error: unknown): Observation {
  if (error instanceof GraphError) {
    return { outcome: "raised", graphError: true, error: error.toJSON(), display: String(error) };
  }
  const errorType =
    error instanceof Error
      ? error.constructor.name
      : typeof error === "object"
        ? "Object"
        : typeof error;
  return { outcome: "raised", graphError: false, errorType, display: String(error) };
}

class Driver {
  graph: CapabilityGraph | undefined;
  adapter: ToolAdapter | undefined;
  readonly calls = new Map<string, { done: Promise<Observation>; controller: AbortController }>();

  async run(surface: Surface, step: Step): Promise<Observation> {
    switch (step.op) {
      case "open": {
        await this.close();
        try {
          // The configuration as the harness sent it, unchecked by the type: the graph judges
          // it, and a bad one is the CG_CONFIG_INVALID the vector expects.
          this.graph = await CapabilityGraph.open(step.config as HostConfig);
        } catch (error) {
          return raised(error);
        }
        this.adapter = new ToolAdapter(this.graph);
        return returned(null);
      }
      case "call": {
        const controller = new AbortController();
        const done = this.call(surface, step, controller.signal);
        if (typeof step.handle === "string") {
          this.calls.set(step.handle, { done, controller });
          return { outcome: "started" };
        }
        return done;
      }
      case "await": {
        const call = this.started(step.handle);
        this.calls.delete(String(step.handle));
        return call.done;
      }
      case "cancel":
        // A call that has finished: aborting changes nothing, and its await answers its outcome.
        this.started(step.handle).controller.abort();
        return returned(null);
      case "reload":
        try {
          // The step's providers reach reload as given: the graph judges them ([CG-LIFE]).
          const request = (
            step.providers === undefined ? undefined : { providers: step.providers }
          ) as Parameters<CapabilityGraph["reload"]>[0] | undefined;
          return returned(await this.open().reload(request));
        } catch (error) {
          return raised(error);
        }
      case "close":
        await this.graph?.close();
        return returned(null);
      case "tools":
        if (surface === "tool") {
          this.open();
          return returned(this.adapter?.tools);
        }
        return { outcome: "unsupported", reason: "the SDK has no tool list; the Tool Adapter has" };
      default:
        return { outcome: "unsupported", reason: "unknown step op" };
    }
  }

  async call(surface: Surface, step: Step, signal: AbortSignal): Promise<Observation> {
    try {
      const graph = this.open();
      const tool = String(step.tool);
      if (surface === "tool") {
        return returned(await (this.adapter as ToolAdapter).call(tool, step.arguments, { signal }));
      }
      return returned(await graph.call(tool, step.arguments, { signal }));
    } catch (error) {
      return raised(error);
    }
  }

  started(handle: unknown): { done: Promise<Observation>; controller: AbortController } {
    const call = typeof handle === "string" ? this.calls.get(handle) : undefined;
    if (call === undefined) throw new UnknownHandle(handle);
    return call;
  }

  open(): CapabilityGraph {
    if (this.graph === undefined) {
      throw new Error("no graph is open (the scenario must start with an open step)");
    }
    return this.graph;
  }

  async close(): Promise<void> {
    for (const call of this.calls.values()) call.controller.abort();
    await Promise.allSettled([...this.calls.values()].map((call) => call.done));
    this.calls.clear();
    await this.graph?.close();
    this.graph = undefined;
    this.adapter = undefined;
  }
}

/** An await or cancel whose handle names no started call: the message is at fault, not the
 * implementation, so the answer is a protocolError, not an observation. */
class UnknownHandle extends Error {
  constructor(handle: unknown) {
    super(`no started call has the handle '${String(handle)}'`);
  }
}

function send(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/**
 * The step as the harness wrote it. JSON.parse rounds an integer literal beyond 2^53 to the
 * nearest double (2^53 + 1 becomes 2^53), which no JavaScript value can hold exactly: a call
 * whose arguments hold one is given to the implementation as the arguments' JSON text, which
 * `call` reads exactly ([CG-CONV-17]), so the request is the one the harness sent.
 */
function exactStep(line: string, step: Step): Step {
  if (step.op !== "call" || step.arguments === undefined) return step;
  const text = memberText(line, ["step", "arguments"]);
  if (text === undefined) return step;
  const parsed = parseJsonText(text);
  return parsed.ok && parsed.bigIntegers.size > 0 ? { ...step, arguments: text } : step;
}

async function serve(): Promise<void> {
  // The protocol owns stdout; anything the implementation logs goes to stderr.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  const driver = new Driver();
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let message: { type?: unknown; seq?: unknown; surface?: unknown; step?: unknown };
    try {
      message = JSON.parse(line);
      if (typeof message !== "object" || message === null) throw new Error("not an object");
    } catch {
      send({ type: "protocolError", message: "not a protocol message" });
      continue;
    }
    if (message.type === "start") {
      send({
        type: "started",
        protocol: PROTOCOL,
        implementation: {
          name: "typescript",
          language: "TypeScript",
          version: packageVersion(),
          contractVersion: CONTRACT_VERSION,
        },
        surfaces: [...SURFACES],
      });
    } else if (message.type === "run") {
      const { seq, surface, step } = message;
      if (
        typeof seq !== "number" ||
        !SURFACES.includes(surface as Surface) ||
        typeof step !== "object" ||
        step === null
      ) {
        send({ type: "protocolError", message: "run needs seq, surface and step" });
        continue;
      }
      let observation: Observation;
      try {
        observation = await driver.run(surface as Surface, exactStep(line, step as Step));
      } catch (error) {
        if (error instanceof UnknownHandle) {
          send({ type: "protocolError", seq, message: error.message });
          continue;
        }
        observation = raised(error);
      }
      send({ type: "observation", seq, observation });
    } else if (message.type === "stop") {
      await driver.close();
      send({ type: "stopped" });
      break;
    } else {
      send({ type: "protocolError", message: "unknown message type" });
    }
  }
  await driver.close();
}

await serve();
process.exit(0);
