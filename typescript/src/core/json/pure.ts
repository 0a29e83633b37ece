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
 *
 * A recursive walk (containers deeper than MAX_DEPTH are faults, never entered, so it recurses
 * at most 33 deep) that keeps the current path in one array and copies it only for a fault, a
 * skip decision or an integer's range: nothing is allocated per value. Each container's own
 * checks (an array's holes, last first; an object's prototype, symbols and names) come before
 * its members, as they always did.
 */
export function firstPureFault(
  root: unknown,
  options: PureCheckOptions = {},
): PureFault | undefined {
  return new PureWalk(options).value(root, 0);
}

class PureWalk {
  /** The path of the value being judged: member names and array indexes. */
  private readonly path: Array<string | number> = [];
  private readonly skip: PureCheckOptions["skip"];
  private readonly outOfRangeInteger: PureCheckOptions["outOfRangeInteger"];
  private readonly currentPath = (): JsonPath => [...this.path];

  constructor(options: PureCheckOptions) {
    this.skip = options.skip;
    this.outOfRangeInteger = options.outOfRangeInteger;
  }

  private fault(kind: PureFaultKind): PureFault {
    return { kind, path: [...this.path] };
  }

  value(value: unknown, depth: number): PureFault | undefined {
    if (value instanceof TooDeep) return this.fault("depth");
    const skip =
      this.skip !== undefined && depth > 0 && depth <= SKIP_DEPTH
        ? this.skip([...this.path])
        : undefined;
    if (skip === "entirely") return undefined;
    const fault = scalarFault(value);
    if (fault !== undefined) return this.fault(fault);
    if (typeof value === "number" && this.outOfRangeInteger?.(this.currentPath, value)) {
      return this.fault("integer-range");
    }
    if (value === null || typeof value !== "object") return undefined;
    if (depth > MAX_DEPTH) return this.fault("depth");
    if (skip === "inside") return this.depthOnlyChildren(value, depth);
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) {
        if (!(index in value)) {
          this.path.push(index);
          return this.fault("not-json");
        }
      }
      for (let index = 0; index < value.length; index += 1) {
        this.path.push(index);
        const found = this.value(value[index], depth + 1);
        if (found !== undefined) return found;
        this.path.pop();
      }
      return undefined;
    }
    if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) {
      return this.fault("not-json");
    }
    const keys = Object.keys(value);
    for (const key of keys) {
      if (hasLoneSurrogate(key)) return this.fault("lone-surrogate");
    }
    for (const key of keys) {
      this.path.push(key);
      const found = this.value(value[key], depth + 1);
      if (found !== undefined) return found;
      this.path.pop();
    }
    return undefined;
  }

  /** Values inside a member skipped "inside": only their depth is judged. */
  private depthOnly(value: unknown, depth: number): PureFault | undefined {
    if (value instanceof TooDeep) return this.fault("depth");
    if (value === null || typeof value !== "object") return undefined;
    if (depth > MAX_DEPTH) return this.fault("depth");
    return this.depthOnlyChildren(value, depth);
  }

  private depthOnlyChildren(value: object, depth: number): PureFault | undefined {
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) {
        this.path.push(index);
        const found = this.depthOnly(value[index], depth + 1);
        if (found !== undefined) return found;
        this.path.pop();
      }
    } else if (isPlainObject(value)) {
      for (const key of Object.keys(value)) {
        this.path.push(key);
        const found = this.depthOnly(value[key], depth + 1);
        if (found !== undefined) return found;
        this.path.pop();
      }
    }
    return undefined;
  }
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

/** String.prototype.isWellFormed (ES2024, in every Node this package supports; not in lib ES2022). */
const isWellFormed = (String.prototype as unknown as { isWellFormed: (this: string) => boolean })
  .isWellFormed;

/** Whether a string holds a surrogate that is not part of a pair (natively: several times faster than a regular expression). */
export function hasLoneSurrogate(text: string): boolean {
  return !isWellFormed.call(text);
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
