// The pure-JSON rules ([CG-CONV-2], [CG-CONV-6], [CG-CONV-7], [CG-CONV-9], [CG-CONV-11]) over a
// parsed value, and the size of its compact serialization ([CG-BUD-1], section 1.2).
import { type JsonPath, TooDeep } from "./text.js";

export type PureFaultKind =
  | "null"
  | "integer-range"
  | "non-finite"
  | "depth"
  | "lone-surrogate"
  | "not-json";

export interface PureFault {
  readonly kind: PureFaultKind;
  readonly path: JsonPath;
}

/** The deepest container allowed: the root is depth 0 ([CG-CONV-11]). */
export const MAX_DEPTH = 32;
const MAX_SAFE = 2 ** 53;

export interface PureCheckOptions {
  /**
   * Values the rules do not look at: `"inside"` for a match request's `context`, whose content
   * the context rules judge (a null context is still a fault, [CG-CONV-12]) but whose containers
   * the depth rule counts ([CG-CONV-15]); `"entirely"` for a configuration's inline definitions,
   * judged at load, null included ([CG-CFG-3], [CG-CONV-11]).
   */
  readonly skip?: (path: JsonPath) => "inside" | "entirely" | undefined;
  /**
   * Whether a number is an integer outside -2^53..2^53 ([CG-CONV-6]; files too, [CG-CONV-13]).
   * A value parsed from a text answers from its literals (`1e300` is a number,
   * `9007199254740993` an integer); a language value from the number alone.
   */
  readonly outOfRangeInteger?: (path: () => JsonPath, value: number) => boolean;
}

/**
 * The range rule for a number's value ([CG-CONV-6]): an integral number beyond 2^53 that RFC 8785
 * writes as an integer literal (below 10^21; from there on it writes `1e+21`, a number that meets
 * the schema's bounds). A text's integer literals beyond 2^53 are out of range besides.
 */
export const integralBeyondRange = (_path: () => JsonPath, value: number): boolean =>
  Number.isInteger(value) && Math.abs(value) > MAX_SAFE && Math.abs(value) < EXPONENT_FROM;

/** From this magnitude on, ECMAScript (so RFC 8785) writes a number with an exponent. */
const EXPONENT_FROM = 1e21;

interface Visit {
  readonly value: unknown;
  readonly parent: Visit | undefined;
  readonly key: string | number;
  readonly depth: number;
}

/** The path of a visited value, built only when it is needed (a fault, a skip decision). */
function pathOf(visit: Visit): JsonPath {
  const tokens: Array<string | number> = [];
  for (
    let current: Visit | undefined = visit;
    current?.parent !== undefined;
    current = current.parent
  ) {
    tokens.push(current.key);
  }
  return tokens.reverse();
}

/** Skips only concern shallow members (`context`, `providers/N/definition`). */
const SKIP_DEPTH = 3;

/**
 * The first violation of the pure-JSON rules in document order, or undefined. A container at
 * depth 33 is reported at its own pointer and not entered.
 */
export function firstPureFault(
  root: unknown,
  options: PureCheckOptions = {},
): PureFault | undefined {
  const stack: Visit[] = [{ value: root, parent: undefined, key: 0, depth: 0 }];
  // Values inside a member skipped "inside": only their depth is judged.
  const depthOnly = new Set<Visit>();
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value, depth } = visit;
    if (value instanceof TooDeep) return { kind: "depth", path: pathOf(visit) };
    if (depthOnly.has(visit)) {
      if (value === null || typeof value !== "object") continue;
      if (depth > MAX_DEPTH) return { kind: "depth", path: pathOf(visit) };
      for (const child of childVisits(visit)) {
        depthOnly.add(child);
        stack.push(child);
      }
      continue;
    }
    const skip =
      options.skip !== undefined && depth > 0 && depth <= SKIP_DEPTH
        ? options.skip(pathOf(visit))
        : undefined;
    if (skip === "entirely") continue;
    const fault = scalarFault(value);
    if (fault !== undefined) return { kind: fault, path: pathOf(visit) };
    if (typeof value === "number" && options.outOfRangeInteger?.(() => pathOf(visit), value)) {
      return { kind: "integer-range", path: pathOf(visit) };
    }
    if (value === null || typeof value !== "object") continue;
    if (depth > MAX_DEPTH) return { kind: "depth", path: pathOf(visit) };
    if (skip === "inside") {
      for (const child of childVisits(visit)) {
        depthOnly.add(child);
        stack.push(child);
      }
      continue;
    }
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) {
        const item: Visit = { value: value[index], parent: visit, key: index, depth: depth + 1 };
        if (!(index in value)) return { kind: "not-json", path: pathOf(item) };
        stack.push(item);
      }
      continue;
    }
    if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) {
      return { kind: "not-json", path: pathOf(visit) };
    }
    const keys = Object.keys(value);
    for (const key of keys) {
      if (hasLoneSurrogate(key)) return { kind: "lone-surrogate", path: pathOf(visit) };
    }
    for (let index = keys.length - 1; index >= 0; index -= 1) {
      const key = keys[index] as string;
      stack.push({ value: value[key], parent: visit, key, depth: depth + 1 });
    }
  }
  return undefined;
}

/** The members or items of a container, last first (the stack pops the first first). */
/**
 * The path of the first container at depth 33 in document order (the root at depth 0), or
 * undefined. Only the depth rule: it is judged before the input size on every surface
 * ([CG-CONV-15]), as a request text's parse finds such a container before its size is known.
 */
export function firstTooDeep(root: unknown): JsonPath | undefined {
  const stack: Visit[] = [{ value: root, parent: undefined, key: 0, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    if (visit.value instanceof TooDeep) return pathOf(visit);
    if (visit.value === null || typeof visit.value !== "object") continue;
    if (visit.depth > MAX_DEPTH) return pathOf(visit);
    stack.push(...childVisits(visit));
  }
  return undefined;
}

function childVisits(visit: Visit): Visit[] {
  const value = visit.value;
  const children: Visit[] = [];
  if (Array.isArray(value)) {
    for (let index = value.length - 1; index >= 0; index -= 1) {
      children.push({ value: value[index], parent: visit, key: index, depth: visit.depth + 1 });
    }
  } else if (isPlainObject(value)) {
    const keys = Object.keys(value);
    for (let index = keys.length - 1; index >= 0; index -= 1) {
      const key = keys[index] as string;
      children.push({ value: value[key], parent: visit, key, depth: visit.depth + 1 });
    }
  }
  return children;
}

function scalarFault(value: unknown): PureFaultKind | undefined {
  switch (typeof value) {
    case "string":
      return hasLoneSurrogate(value) ? "lone-surrogate" : undefined;
    case "number":
      return Number.isFinite(value) ? undefined : "non-finite";
    case "boolean":
      return undefined;
    case "object":
      return value === null ? "null" : undefined;
    default:
      // undefined, bigint, symbol, function: values JSON cannot carry ([CG-CONV-9]).
      return "not-json";
  }
}

/** A plain object: created by a literal, JSON.parse, Object.create(null) or a JSON text parse. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/**
 * The UTF-8 byte length of the compact serialization of a value (section 1.2: members in the
 * order the value holds them, RFC 8785 escapes and numbers), computed without building the text.
 * Stops counting once `limit` is exceeded and returns a value above it. Values JSON cannot carry
 * count as `null` (they are refused by the pure-JSON rules right after).
 */
export function compactByteLength(root: unknown, limit = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    if (total > limit) return total;
    const value = stack.pop();
    if (typeof value === "string") total += stringByteLength(value);
    else if (typeof value === "number")
      total += Number.isFinite(value) ? String(value === 0 ? 0 : value).length : 4;
    else if (typeof value === "boolean") total += value ? 4 : 5;
    else if (Array.isArray(value)) {
      total += 2 + Math.max(0, value.length - 1);
      for (let index = value.length - 1; index >= 0; index -= 1) stack.push(value[index]);
    } else if (value !== null && typeof value === "object") {
      const keys = Object.keys(value);
      total += 2 + Math.max(0, keys.length - 1) + keys.length;
      for (let index = keys.length - 1; index >= 0; index -= 1) {
        const key = keys[index] as string;
        total += stringByteLength(key);
        stack.push((value as Record<string, unknown>)[key]);
      }
    } else total += 4;
  }
  return total;
}

/** Bytes of a JSON string literal: quotes, RFC 8785 escapes, UTF-8, lone surrogates as \uXXXX. */
export function stringByteLength(text: string): number {
  let total = 2;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 0x22 || code === 0x5c) total += 2;
    else if (code < 0x20)
      total += code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6;
    else if (code < 0x80) total += 1;
    else if (code < 0x800) total += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        total += 4;
        index += 1;
      } else total += 6;
    } else if (code >= 0xdc00 && code <= 0xdfff) total += 6;
    else total += 3;
  }
  return total;
}
