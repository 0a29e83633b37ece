// Over 400 lines: the schema validation and the message wording of every fault it reports belong together ([CG-MSG-*]).
// Pointer messages (spec messages.md, CG-MSG): where a fault is and what the contract expects,
// never the offending value nor a member name the caller chose.
import { CONTRACT_MEMBER_NAMES } from "../_generated/member-names.js";
import {
  type ContractValidationError,
  type ContractValidator,
  DISCRIMINATED_UNIONS,
  type DiscriminatedUnion,
} from "../_generated/validators.js";
import { compareCodePoints } from "./json/canonical.js";
import type { PureFault } from "./json/pure.js";
import type { JsonPath, TextFault } from "./json/text.js";

const MAX_MESSAGE = 300;
const MAX_POINTER = 160;

/** The `<format>` of a pattern fault, by the title of the definition holding the pattern ([CG-MSG-6]). */
const FORMATS: Readonly<Record<string, string>> = {
  CapabilityId: "provider::capability",
  ProviderId: "a-z, then up to 63 of a-z 0-9 . _ -",
  LocalCapabilityId: "a-z, then up to 127 of a-z 0-9 . _ -",
  DocumentId: "A-Z or a-z, then up to 127 of A-Z a-z 0-9 . _ -",
  Cursor: "the nextCursor of a previous page",
  ExecutorName: "a-z, then up to 63 of a-z 0-9 . _ -",
  DocumentRole: "a-z, then up to 63 of a-z 0-9 _ -",
  Locale: "a language tag such as en or zh-CN",
  DocumentPath: "a relative path of plain names joined by /",
  Tag: "text without spaces or control characters",
  DisplayName: "text without control characters",
  VersionLabel: "text without control characters",
  Text: "text without control characters other than tab, newline and carriage return",
  HttpUrl: "an absolute http or https URL",
  BaseUrl: "an absolute http or https URL without query or fragment",
  EnvVarName: "an environment variable name: A-Z a-z _, then up to 127 of A-Z a-z 0-9 _",
  LocalPath: "a path without NUL characters",
};

/**
 * The JSON Pointer of a path inside `root`, cut before the first token that is neither an array
 * index nor a member name of the contract, and before a token that would make it longer than
 * 160 characters ([CG-MSG-3]); `/` when nothing is left.
 */
export function pointerOf(root: unknown, path: JsonPath): string {
  let pointer = "";
  let node: unknown = root;
  for (const token of path) {
    const isIndex = Array.isArray(node) && typeof token === "number";
    const isMember =
      !Array.isArray(node) && typeof token === "string" && CONTRACT_MEMBER_NAMES.has(token);
    if (!isIndex && !isMember) break;
    const next = `${pointer}/${String(token).replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (next.length > MAX_POINTER) break;
    pointer = next;
    node =
      node !== null && typeof node === "object"
        ? (node as Record<string | number, unknown>)[token]
        : undefined;
  }
  return pointer === "" ? "/" : pointer;
}

/** `pointer phrase (hint)`, the hint left out when the whole would exceed 300 characters ([CG-MSG-2]). */
export function composeMessage(pointer: string, phrase: string, hint?: string): string {
  const bare = `${pointer} ${phrase}`;
  if (hint === undefined) return bare;
  const full = `${bare} (${hint})`;
  return full.length > MAX_MESSAGE ? bare : full;
}

const PURE_PHRASES: Readonly<Record<PureFault["kind"], string>> = {
  null: "must not be null (omit the key instead)",
  "integer-range": "integers must stay within +/-2^53",
  "non-finite": "NaN and Infinity are not JSON",
  depth: "nesting deeper than 32",
  "lone-surrogate": "a string has a lone surrogate",
  "not-json": "is not JSON data",
};

/** The message of a pure-JSON fault ([CG-MSG-9]). */
export function pureFaultMessage(root: unknown, fault: PureFault): string {
  if (fault.kind === "not-json") return "/ not well-formed JSON";
  return composeMessage(pointerOf(root, fault.path), PURE_PHRASES[fault.kind]);
}

/**
 * The message of a fault found while parsing a text ([CG-MSG-9], [CG-MSG-13]). A request text
 * names the object with the duplicate key; a definition file reports it at `/` ([CG-MSG-13]).
 */
export function textFaultMessage(fault: TextFault, source: "request" | "file"): string {
  switch (fault.kind) {
    case "utf8":
      return "/ not valid UTF-8";
    case "bom":
      return "/ a byte order mark is not JSON";
    case "syntax":
      return "/ not well-formed JSON";
    case "duplicate":
      return `${source === "file" ? "/" : pathPointer(fault.path)} an object has a duplicate key`;
    case "long-integer":
      return `${pathPointer(fault.path)} integers must stay within +/-2^53`;
    case "depth":
      return `${pathPointer(fault.path)} nesting deeper than 32`;
  }
}

/**
 * A pointer for a path of a text that could not be parsed into a value: numbers are indexes,
 * strings member names (kept only when they are the contract's).
 */
export function pathPointer(path: JsonPath): string {
  let pointer = "";
  for (const token of path) {
    if (typeof token === "string" && !CONTRACT_MEMBER_NAMES.has(token)) break;
    const next = `${pointer}/${String(token).replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (next.length > MAX_POINTER) break;
    pointer = next;
  }
  return pointer === "" ? "/" : pointer;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: "an object",
  array: "an array",
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "a boolean",
  null: "null",
};

/**
 * The message of a schema fault ([CG-MSG-4] .. [CG-MSG-7]) from every error Ajv reported
 * (allErrors). The error reported is chosen so: among the errors at the top,
 * the one highest in the instance; then, while it is a `oneOf` with a discriminator, the error
 * highest in the value among those of the branch its discriminator selects, or the fault of the
 * discriminator itself ([CG-MSG-21]); while it is another `oneOf`/`anyOf` ("no branch fits"),
 * the most relevant error of its branches (the deepest, a non-combinator before a combinator,
 * a value of the right type before one of the wrong type) unless two branches tie, in which
 * case the combinator itself ("does not match any allowed shape") is reported.
 */
export function schemaFaultMessage(
  root: unknown,
  errors: readonly ContractValidationError[],
  validate?: ContractValidator,
): string {
  const error = bestSchemaError(errors, root, validate);
  if (error === undefined) return "/ is invalid";
  return keywordMessage(root, error);
}

/**
 * The schema error to report among every error Ajv reported (see schemaFaultMessage). With the
 * value checked and its validator, a combinator whose one meant branch fails only by members it
 * does not allow reports that branch's unknown-key fault ([CG-MSG-17]).
 */
export function bestSchemaError(
  errors: readonly ContractValidationError[],
  root?: unknown,
  validate?: ContractValidator,
): ContractValidationError | undefined {
  const meant =
    validate === undefined
      ? undefined
      : (node: ErrorNode) => branchFailingOnlyByUnknownMembers(node, root, validate);
  return bestMatch(errorTree(errors), meant);
}

interface ErrorNode {
  readonly error: ContractValidationError;
  readonly depth: number;
  readonly context: ErrorNode[];
}

const COMBINATORS = new Set(["oneOf", "anyOf"]);

/**
 * Ajv lists the errors of a combinator's branches before the combinator's own error; the branch
 * errors are the pending errors at or below the combinator's instance path.
 */
function errorTree(errors: readonly ContractValidationError[]): ErrorNode[] {
  const pending: ErrorNode[] = [];
  for (const error of errors) {
    const depth = instancePath(error.instancePath).length;
    const context: ErrorNode[] = [];
    if (COMBINATORS.has(error.keyword)) {
      const prefix = error.instancePath;
      while (pending.length > 0) {
        const last = pending.at(-1) as ErrorNode;
        const path = last.error.instancePath;
        if (path !== prefix && !path.startsWith(`${prefix}/`)) break;
        context.unshift(pending.pop() as ErrorNode);
      }
    }
    pending.push({ error, depth, context });
  }
  return pending;
}

/** How relevant an error is: deeper first, then earlier in the instance, then by keyword and type. */
interface Relevance {
  readonly depth: number;
  readonly path: JsonPath;
  readonly combinator: boolean;
  readonly matchesType: boolean;
}

function relevance(node: ErrorNode): Relevance {
  return {
    depth: node.depth,
    path: instancePath(node.error.instancePath),
    combinator: COMBINATORS.has(node.error.keyword),
    matchesType: matchesType(node.error),
  };
}

/**
 * Negative when `left` is the more specific error: the deeper one; at equal depth the one
 * earlier in the instance (member names in code point order, indexes by number); then a
 * combinator before another keyword, and a value of the schema's type before one of another.
 */
function compareRelevance(left: Relevance, right: Relevance): number {
  if (left.depth !== right.depth) return right.depth - left.depth;
  for (let index = 0; index < Math.min(left.path.length, right.path.length); index += 1) {
    const a = left.path[index] as string | number;
    const b = right.path[index] as string | number;
    if (a === b) continue;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return compareCodePoints(String(a), String(b));
  }
  if (left.path.length !== right.path.length) return left.path.length - right.path.length;
  if (left.combinator !== right.combinator) return left.combinator ? -1 : 1;
  if (left.matchesType !== right.matchesType) return left.matchesType ? -1 : 1;
  return 0;
}

function bestMatch(
  top: readonly ErrorNode[],
  meant?: (node: ErrorNode) => ContractValidationError | undefined,
): ContractValidationError | undefined {
  let best = highest(top);
  while (best !== undefined && best.context.length > 0) {
    // A oneOf with a discriminator: the fault of the branch it selects, or of the discriminator
    // ([CG-MSG-21]).
    const union = discriminatedUnion(best.error);
    if (union !== undefined) {
      const selected = selectedBranch(best.error, union);
      if (!Array.isArray(selected)) return selected;
      const next = highest(selected);
      if (next === undefined) break;
      best = next;
      continue;
    }
    // Inside another combinator: the one branch failing only by unknown members ([CG-MSG-17]),
    // else the most specific error of its branches, unless two tie.
    const unknownMembers = meant?.(best);
    if (unknownMembers !== undefined) return unknownMembers;
    const ranked = [...best.context].sort((left, right) =>
      compareRelevance(relevance(left), relevance(right)),
    );
    const [first, second] = ranked;
    if (first === undefined) break;
    if (second !== undefined && compareRelevance(relevance(first), relevance(second)) === 0) break;
    best = first;
  }
  return best?.error;
}

/**
 * The error highest in the instance (it says "more" is wrong). Of two equals, the one of the
 * keyword written first in the schema object both come from (an object's `additionalProperties`
 * before its `required` when the schema lists them so), as the reference walks a schema; else the
 * first reported.
 */
function highest(nodes: readonly ErrorNode[]): ErrorNode | undefined {
  let best: ErrorNode | undefined;
  for (const node of nodes) {
    if (best === undefined) {
      best = node;
      continue;
    }
    const order = compareRelevance(relevance(node), relevance(best));
    if (order > 0 || (order === 0 && writtenBefore(node.error, best.error))) best = node;
  }
  return best;
}

/** Whether `left`'s keyword comes before `right`'s in the one schema object holding both. */
function writtenBefore(left: ContractValidationError, right: ContractValidationError): boolean {
  const schema = left.parentSchema;
  if (schema === undefined || schema !== right.parentSchema) return false;
  const keywords = Object.keys(schema);
  return keywords.indexOf(left.keyword) < keywords.indexOf(right.keyword);
}

/** The discriminator of the failed `oneOf` an error reports (generated from the schemas), if any. */
function discriminatedUnion(error: ContractValidationError): DiscriminatedUnion | undefined {
  if (error.keyword !== "oneOf") return undefined;
  const title = error.parentSchema?.title;
  return typeof title === "string" && Object.hasOwn(DISCRIMINATED_UNIONS, title)
    ? DISCRIMINATED_UNIONS[title]
    : undefined;
}

/**
 * The fault of a value failing a `oneOf` with a discriminator that selects no branch (not an
 * object, no discriminator, an unknown one), else the errors of the branch it selects, as that
 * branch's own validator reports them, at their place in the value checked ([CG-MSG-21]).
 */
function selectedBranch(
  error: ContractValidationError,
  union: DiscriminatedUnion,
): ContractValidationError | ErrorNode[] {
  const value = (error as { data?: unknown }).data;
  const here = error.instancePath;
  const fault = (keyword: string, at: string, schema: unknown, params = {}) => ({
    keyword,
    instancePath: at,
    schemaPath: error.schemaPath,
    params,
    schema,
  });
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return fault("type", here, "object");
  const name = union.propertyName;
  if (!Object.hasOwn(value, name))
    return fault("required", here, [name], { missingProperty: name });
  const tag = (value as Record<string, unknown>)[name];
  const branch = union.branches.find((candidate) => jsonEqual(candidate.value, tag));
  if (branch === undefined) {
    const token = name.replaceAll("~", "~0").replaceAll("/", "~1");
    return fault(
      "enum",
      `${here}/${token}`,
      union.branches.map((candidate) => candidate.value),
    );
  }
  if (branch.validate(value)) return [];
  const errors = (branch.validate.errors ?? []).map((inner) => ({
    ...inner,
    instancePath: `${here}${inner.instancePath}`,
  }));
  return errorTree(errors);
}

/** Equality of two JSON values (member order aside). */
function jsonEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (left === null || right === null || typeof left !== "object" || typeof right !== "object")
    return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length &&
    keys.every(
      (key) =>
        Object.hasOwn(right, key) &&
        jsonEqual((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key]),
    )
  );
}

/**
 * The unknown-key error of the one branch of a failed combinator that the value fails only by
 * members that branch does not allow ([CG-MSG-17]), or undefined. A branch qualifies when it
 * reports such members on the value itself, the value has every member it requires and the
 * value of each of its `const` members, and the whole value checked, with the members the
 * branch does not define removed from this one, has no fault at or below it.
 */
function branchFailingOnlyByUnknownMembers(
  node: ErrorNode,
  root: unknown,
  validate: ContractValidator,
): ContractValidationError | undefined {
  const here = node.error.instancePath;
  const path = instancePath(here);
  const value = valueAt(root, path);
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const members = value as Record<string, unknown>;
  const branches = new Map<object, ContractValidationError>();
  for (const { error } of node.context) {
    if (error.keyword !== "additionalProperties" || error.instancePath !== here) continue;
    if (error.parentSchema !== undefined && !branches.has(error.parentSchema))
      branches.set(error.parentSchema, error);
  }
  const fitting: ContractValidationError[] = [];
  for (const [branch, error] of branches) {
    const properties = (branch as { properties?: Record<string, Record<string, unknown>> })
      .properties;
    const required = (branch as { required?: readonly string[] }).required ?? [];
    if (properties === undefined || !required.every((name) => Object.hasOwn(members, name)))
      continue;
    const trimmed = Object.fromEntries(
      Object.entries(members).filter(([name]) => Object.hasOwn(properties, name)),
    );
    const constantsHold = Object.entries(trimmed).every(
      ([name, member]) =>
        !Object.hasOwn(properties[name] ?? {}, "const") ||
        JSON.stringify(properties[name]?.const) === JSON.stringify(member),
    );
    if (!constantsHold) continue;
    const faults = validate(replaceAt(root, path, trimmed)) ? [] : (validate.errors ?? []);
    const below = faults.some(
      (fault) => fault.instancePath === here || fault.instancePath.startsWith(`${here}/`),
    );
    if (!below) fitting.push(error);
  }
  return fitting.length === 1 ? fitting[0] : undefined;
}

function valueAt(root: unknown, path: JsonPath): unknown {
  let node = root;
  for (const token of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string | number, unknown>)[token];
  }
  return node;
}

/** A copy of `root` with the value at `path` replaced (only the containers on the way are copied). */
function replaceAt(root: unknown, path: JsonPath, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const container = root as Record<string | number, unknown>;
  const copy: Record<string | number, unknown> | unknown[] = Array.isArray(root)
    ? [...root]
    : { ...container };
  (copy as Record<string | number, unknown>)[head] = replaceAt(container[head], rest, replacement);
  return copy;
}

/** Whether the value at the error has the type its schema declares (false without a `type`). */
function matchesType(error: ContractValidationError): boolean {
  const declared = error.parentSchema?.type;
  if (declared === undefined) return false;
  const types = Array.isArray(declared) ? declared : [declared];
  const value = (error as { data?: unknown }).data;
  return types.some((type) => {
    switch (type) {
      case "object":
        return value !== null && typeof value === "object" && !Array.isArray(value);
      case "array":
        return Array.isArray(value);
      case "string":
        return typeof value === "string";
      case "integer":
        return typeof value === "number" && Number.isInteger(value);
      case "number":
        return typeof value === "number";
      case "boolean":
        return typeof value === "boolean";
      case "null":
        return value === null;
      default:
        return false;
    }
  });
}

export function keywordMessage(root: unknown, error: ContractValidationError): string {
  const path = instancePath(error.instancePath);
  const pointer = pointerOf(root, path);
  const params = error.params;
  const parent = error.parentSchema ?? {};
  switch (error.keyword) {
    case "type": {
      const types = Array.isArray(error.schema) ? error.schema : [error.schema];
      return composeMessage(
        pointer,
        `must be ${types.map((type) => TYPE_NAMES[String(type)] ?? String(type)).join(" or ")}`,
      );
    }
    case "required":
      return composeMessage(pointer, `requires the key ${String(params.missingProperty)}`);
    case "additionalProperties": {
      const properties = parent.properties;
      const allowed =
        properties !== null && typeof properties === "object" ? Object.keys(properties) : [];
      return composeMessage(
        pointer,
        "has a key that is not allowed",
        `allowed: ${allowed.length === 0 ? "none" : allowed.join(", ")}`,
      );
    }
    case "enum":
      return composeMessage(
        pointer,
        `must be one of: ${(error.schema as unknown[]).map((value) => JSON.stringify(value)).join(", ")}`,
      );
    case "const":
      return composeMessage(pointer, `must be one of: ${JSON.stringify(error.schema)}`);
    case "pattern": {
      const title = typeof parent.title === "string" ? parent.title : undefined;
      const format =
        title !== undefined && Object.hasOwn(FORMATS, title) ? FORMATS[title] : undefined;
      return composeMessage(
        pointer,
        "does not have the required format",
        format === undefined ? undefined : `expected: ${format}`,
      );
    }
    case "minLength":
      return composeMessage(pointer, `must have at least ${String(params.limit)} characters`);
    case "maxLength":
      return composeMessage(pointer, `must have at most ${String(params.limit)} characters`);
    case "minItems":
      return composeMessage(pointer, `must have at least ${String(params.limit)} items`);
    case "maxItems":
      return composeMessage(pointer, `must have at most ${String(params.limit)} items`);
    case "minProperties":
      return composeMessage(pointer, `must have at least ${String(params.limit)} keys`);
    case "maxProperties":
      return composeMessage(pointer, `must have at most ${String(params.limit)} keys`);
    case "minimum":
      return composeMessage(pointer, `must be at least ${String(params.limit)}`);
    case "maximum":
      return composeMessage(pointer, `must be at most ${String(params.limit)}`);
    case "exclusiveMinimum":
      return composeMessage(pointer, `must be greater than ${String(params.limit)}`);
    case "exclusiveMaximum":
      return composeMessage(pointer, `must be less than ${String(params.limit)}`);
    case "uniqueItems":
      return composeMessage(pointer, "must not repeat items");
    case "propertyNames":
      return composeMessage(pointer, "has a key that does not have the required format");
    case "oneOf":
    case "anyOf":
      return composeMessage(pointer, "does not match any allowed shape");
    default:
      return composeMessage(pointer, "is invalid");
  }
}

/** Ajv's instancePath (a JSON Pointer) as tokens; indexes are told apart when the value is walked. */
export function instancePath(pointer: string): JsonPath {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((token) => (/^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : token));
}
