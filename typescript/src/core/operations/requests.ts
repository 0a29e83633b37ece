// What a call does around a handler ([CG-OP-1], section 5.1): judge the request's shape (an
// object, the pure-JSON rules, the request schema) so that the handler receives its typed request,
// the context rules of match, and the parse of a request text a surface judges before a graph is
// open ([CG-MSG-13]).
import {
  OPERATIONS,
  type Operation,
  type RequestOf,
  type ToolName,
} from "../../_generated/operations.js";
import {
  SCHEMA_VALIDATORS,
  validateContextKey,
  validateContextValue,
} from "../../_generated/validators.js";
import { type GraphError, pointerError } from "../errors.js";
import type { ContextValue } from "../executors/protocol.js";
import { firstPureFault, hasLoneSurrogate, isPlainObject } from "../json/pure.js";
import { type JsonPath, parseJsonBytes, parseJsonText, REQUEST_TEXT } from "../json/text.js";
import { pureFaultMessage, schemaFaultMessage, textFaultMessage } from "../schemas.js";

/** Rows "shape" of section 5.1: an object, the pure-JSON rules (not inside `context`), the request schema. */
export function checkRequestShape<T extends ToolName>(
  operation: Operation & { readonly tool: T },
  request: unknown,
  outOfRangeInteger: (path: () => JsonPath, value: number) => boolean,
): asserts request is RequestOf<T> {
  const phase = operation.phase;
  if (!isPlainObject(request)) throw pointerError("CG_INPUT_INVALID", phase, "/ must be an object");
  const isMatch = operation.tool === "match_capabilities";
  const pure = firstPureFault(request, {
    skip: (path) => (isMatch && path.length === 1 && path[0] === "context" ? "inside" : undefined),
    outOfRangeInteger,
  });
  if (pure !== undefined)
    throw pointerError("CG_INPUT_INVALID", phase, pureFaultMessage(request, pure));
  const validate = SCHEMA_VALIDATORS[operation.request];
  if (validate === undefined) throw new Error(`no validator for ${operation.request}`);
  if (!validate(request))
    throw pointerError(
      "CG_INPUT_INVALID",
      phase,
      schemaFaultMessage(request, validate.errors ?? [], validate),
    );
}

/** The context rules ([CG-CTX-1], [CG-CTX-2], [CG-MSG-11]): first failure wins, key before value. */
export function checkContext(
  context: unknown,
  outOfRangeInteger: (path: () => JsonPath, value: number) => boolean,
): Record<string, ContextValue> {
  const fault = (message: string): GraphError =>
    pointerError("CG_CONTEXT_INVALID", "match", message);
  if (!isPlainObject(context)) throw fault("/context must be an object");
  const keys = Object.keys(context);
  if (keys.length > 64) throw fault("/context must have at most 64 keys");
  for (const key of keys) {
    if (!validateContextKey(key))
      throw fault("/context keys must match ^[A-Za-z][A-Za-z0-9_.-]{0,63}$");
    const value = context[key];
    if (typeof value === "string") {
      if (!validateContextValue(value))
        throw fault("/context values must be strings of at most 1024 characters");
      if (hasLoneSurrogate(value))
        throw fault("/context values must be strings of valid Unicode text");
    } else if (typeof value === "number" && Number.isFinite(value)) {
      if (outOfRangeInteger(() => ["context", key], value)) {
        throw fault("/context values must be integers between -2^53 and 2^53");
      }
    } else if (typeof value !== "boolean") {
      throw fault("/context values must be strings, finite numbers or booleans");
    }
  }
  return structuredClone(context) as Record<string, ContextValue>;
}

/**
 * How a request text is parsed ([CG-MSG-13]): integer literals of at most 400 digits, and a
 * container at depth 33 skipped and reported as the text's depth fault ([CG-CONV-15]).
 */
export type RequestTextOutcome =
  | { readonly kind: "parsed"; readonly text: string; readonly value: unknown }
  | { readonly kind: "not-json"; readonly reason: "syntax" | "utf8" | "bom" };

/**
 * Judge a request text the way `call` does when it is given one ([CG-CONV-4], [CG-MSG-13]),
 * for a surface that must judge it before a graph is open (CLI `--arguments`). Throws the
 * GraphError of a duplicate member name or an over-long integer literal (in the tool's phase;
 * `query` for an unknown tool); a text that is not JSON or not UTF-8 is returned as `not-json`
 * (a usage error of the CLI). Pass the returned `text` to `call`, which keeps the literals.
 */
export function parseRequestText(tool: string, text: string | Uint8Array): RequestTextOutcome {
  const phase = OPERATIONS.find((operation) => operation.tool === tool)?.phase ?? "query";
  const parsed =
    typeof text === "string"
      ? parseJsonText(text, REQUEST_TEXT)
      : parseJsonBytes(text, REQUEST_TEXT);
  if (parsed.ok) {
    return {
      kind: "parsed",
      text: typeof text === "string" ? text : new TextDecoder().decode(text),
      value: parsed.value,
    };
  }
  const fault = parsed.fault;
  if (fault.kind === "syntax" || fault.kind === "utf8" || fault.kind === "bom") {
    return { kind: "not-json", reason: fault.kind };
  }
  throw pointerError("CG_INPUT_INVALID", phase, textFaultMessage(fault, "request"));
}
