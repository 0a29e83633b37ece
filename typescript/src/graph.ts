// The SDK class CapabilityGraph ([CG-SDK-1]).
import type { Executor } from "./executors/protocol.js";

export interface OpenOptions {
  /** An executor object used for match instead of the configuration's model section. */
  executor?: Executor;
  /** The folder relative paths of a configuration value resolve against (default: process.cwd()). */
  cwd?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export type JsonObject = Record<string, unknown>;

export class CapabilityGraph {
  /** Open a graph from a configuration value (an object) or the path of a configuration file. */
  static async open(config: unknown, options?: OpenOptions): Promise<CapabilityGraph> {
    void config;
    void options;
    throw new Error("not implemented yet");
  }

  async describe(): Promise<JsonObject> {
    return this.call("describe_graph", {});
  }

  async list(request: JsonObject = {}): Promise<JsonObject> {
    return this.call("list_capabilities", request);
  }

  async resolve(request: JsonObject): Promise<JsonObject> {
    return this.call("resolve_capabilities", request);
  }

  async match(request: JsonObject, options?: CallOptions): Promise<JsonObject> {
    return this.call("match_capabilities", request, options);
  }

  async readDocument(request: JsonObject): Promise<JsonObject> {
    return this.call("read_document", request);
  }

  async reload(request?: JsonObject): Promise<JsonObject> {
    void request;
    throw new Error("not implemented yet");
  }

  async close(): Promise<void> {}

  /**
   * The JSON entry point: a tool name of the operation table and its arguments (a value or a
   * JSON text). Returns the result's JSON object or throws GraphError.
   */
  async call(tool: string, args: unknown, options?: CallOptions): Promise<JsonObject> {
    void tool;
    void args;
    void options;
    throw new Error("not implemented yet");
  }
}
