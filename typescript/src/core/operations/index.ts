// The operations as modules ([CG-OP-1]): one handler per tool of the generated operation table,
// keyed by its tool name in the record generated beside them (handlers.ts, from the table).
// `satisfies` holds the record to the table: a tool without a handler, a handler without a tool,
// or a handler whose types are not its tool's is a compile error (test/operations-table.test.ts
// pins the module names against the table).
export type { Handler, HandlerRecord, OperationContext } from "./common.js";
export { HANDLERS } from "./handlers.js";
