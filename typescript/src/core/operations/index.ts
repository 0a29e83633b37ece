// The operations as modules ([CG-OP-1]): one handler per tool of the generated operation table,
// keyed by its tool name. `satisfies` holds the record to the table: a tool without a handler,
// a handler without a tool, or a handler whose types are not its tool's is a compile error
// (test/operations-table.test.ts pins the module names against the table).
import type { ToolName } from "../../_generated/operations.js";
import type { Handler } from "./common.js";
import { describeGraph } from "./describe.js";
import { listCapabilities } from "./list.js";
import { matchCapabilities } from "./match.js";
import { readDocument } from "./read-document.js";
import { resolveCapabilities } from "./resolve.js";

export type { Handler, OperationContext } from "./common.js";

/** Every tool's handler, keyed by tool name; each entry typed by its own tool. */
export type HandlerRecord = { readonly [T in ToolName]: Handler<T> };

/** The handler of each tool. */
export const HANDLERS: HandlerRecord = {
  describe_graph: describeGraph,
  list_capabilities: listCapabilities,
  resolve_capabilities: resolveCapabilities,
  match_capabilities: matchCapabilities,
  read_document: readDocument,
} satisfies HandlerRecord;
