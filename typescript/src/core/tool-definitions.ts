// The tool definitions of every surface ([CG-TOOL-3], [CG-MCP-3]): the operation table's tools as
// `tools.json` writes them, read from the generated table, so that the Tool Adapter and the MCP
// server list the same tools without either importing the other.
import { OPERATIONS, type Operation } from "../_generated/operations.js";
import type { JsonObject } from "./graph.js";

/** A tool definition as `tools.json` writes it ([CG-TOOL-3]). */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema: JsonObject;
  annotations: {
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
}

/** A deep copy, so a caller that edits a definition cannot change the table or another copy. */
export function copy<T>(value: T): T {
  return structuredClone(value);
}

function definition(operation: Operation): ToolDefinition {
  return {
    name: operation.tool,
    title: operation.title,
    description: operation.description,
    inputSchema: copy(operation.inputSchema) as JsonObject,
    outputSchema: copy(operation.outputSchema) as JsonObject,
    annotations: { ...operation.annotations },
  };
}

/** The five tool definitions, in the table's order, every member of `tools.json` included. */
export function toolDefinitions(): ToolDefinition[] {
  return OPERATIONS.map(definition);
}
