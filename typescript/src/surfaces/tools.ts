// The Tool Adapter ([CG-TOOL-1] .. [CG-TOOL-4]): the five tools of the operation table as tool
// definitions for agent frameworks, and `call`, which projects the graph's outcome into the
// envelope `{ok: true, result}` / `{ok: false, error}` and never raises a GraphError. Every name,
// description and schema comes from the generated operation table; nothing here lists a tool.
import { OPERATIONS, type Operation } from "../_generated/operations.js";
import { type ErrorObject, GraphError } from "../core/errors.js";
import type { CallOptions, CapabilityGraph, JsonObject } from "../core/graph.js";
import { copy, type ToolDefinition, toolDefinitions } from "../core/tool-definitions.js";

export { type ToolDefinition, toolDefinitions };

/**
 * A tool's input schema in the function-calling forms: a JSON Schema for an object (every tool
 * takes an object). Its `type` is typed as the literal the vendors' SDK types require, so the
 * forms below pass to the official `openai` and `@anthropic-ai/sdk` clients with no cast.
 */
export interface ObjectSchema {
  type: "object";
  [keyword: string]: unknown;
}

/** The OpenAI Chat Completions form of a tool. */
export interface OpenAIChatTool {
  type: "function";
  function: { name: string; description: string; parameters: ObjectSchema };
}

/** The OpenAI Responses form of a tool (`strict: false`: the schemas are not strict-mode schemas). */
export interface OpenAIResponsesTool {
  type: "function";
  name: string;
  description: string;
  parameters: ObjectSchema;
  strict: false;
}

/** The Anthropic Messages form of a tool. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ObjectSchema;
}

/** What `ToolAdapter.call` returns: exactly these members ([CG-TOOL-1]). */
export type ToolOutcome = { ok: true; result: JsonObject } | { ok: false; error: ErrorObject };

/** A fresh copy of an operation's input schema, whose `type` the operation table says is "object". */
function objectSchema(operation: Operation): ObjectSchema {
  return { ...copy(operation.inputSchema), type: "object" };
}

/** The tools in the OpenAI Chat Completions `tools` format. */
export function openAIChatTools(): OpenAIChatTool[] {
  return OPERATIONS.map((operation) => ({
    type: "function",
    function: {
      name: operation.tool,
      description: operation.description,
      parameters: objectSchema(operation),
    },
  }));
}

/** The tools in the OpenAI Responses `tools` format. */
export function openAIResponsesTools(): OpenAIResponsesTool[] {
  return OPERATIONS.map((operation) => ({
    type: "function",
    name: operation.tool,
    description: operation.description,
    parameters: objectSchema(operation),
    strict: false,
  }));
}

/** The tools in the Anthropic Messages `tools` format. */
export function anthropicTools(): AnthropicTool[] {
  return OPERATIONS.map((operation) => ({
    name: operation.tool,
    description: operation.description,
    input_schema: objectSchema(operation),
  }));
}

/**
 * The Tool Adapter of one open graph. A model's tool call goes to `call(name, arguments)` as it
 * arrives (the arguments object, or the JSON text a model API hands over), and the envelope goes
 * back to the model as the tool's output.
 */
export class ToolAdapter {
  readonly #graph: CapabilityGraph;

  constructor(graph: CapabilityGraph) {
    this.#graph = graph;
  }

  /** The tool definitions ([CG-TOOL-3]); a fresh copy on every read. */
  get tools(): ToolDefinition[] {
    return toolDefinitions();
  }

  openAIChatTools(): OpenAIChatTool[] {
    return openAIChatTools();
  }

  openAIResponsesTools(): OpenAIResponsesTool[] {
    return openAIResponsesTools();
  }

  anthropicTools(): AnthropicTool[] {
    return anthropicTools();
  }

  /**
   * Call a tool and project the outcome: the result, or the error object of the GraphError the
   * graph raised (an unknown tool name included, [CG-TOOL-2]). Anything that is not a GraphError
   * is a defect of the implementation and propagates unchanged.
   */
  async call(name: string, args: unknown, options?: CallOptions): Promise<ToolOutcome> {
    try {
      const result = await this.#graph.call(name, args, options);
      return { ok: true, result };
    } catch (error) {
      if (error instanceof GraphError) return { ok: false, error: error.toJSON() };
      throw error;
    }
  }
}
