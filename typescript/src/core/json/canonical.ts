// RFC 8785 (JSON Canonicalization Scheme) serialization and the revisions built on it ([CG-REV-1],
// [CG-REV-2]). Strings and numbers are written by JSON.stringify, whose escapes (only `"`, `\`
// and C0 controls, lowercase hex) and number form (ECMAScript Number::toString) are exactly
// RFC 8785's; members are sorted by their UTF-16 code units, which is the default string order.
// The `canonicalize` package is the reference this serializer is tested against; it is not used
// here because it is several times slower on large definitions (revisions are computed on open).
import { createHash } from "node:crypto";

/** The canonical serialization of a pure JSON value (section 1.2). */
export function canonicalJson(value: unknown): string {
  // Fastest path: JSON.stringify with the sorted list of every member name in the value as its
  // property list, which writes each object's members in the list's order (skipping those it
  // lacks) without calling back into JavaScript per value.
  const names = sortedMemberNames(value);
  if (names !== undefined) return JSON.stringify(value, names);
  // Fast path: JSON.stringify over copies whose members were inserted in sorted order. JavaScript
  // enumerates integer-like member names ("10") first whatever the insertion order, so a value
  // holding one takes the general writer.
  try {
    const text = JSON.stringify(value, sortedMembers);
    if (text !== undefined) return text;
  } catch (error) {
    if (error !== INTEGER_LIKE_NAME) throw error;
  }
  return write(value, new Map());
}

/** Deeper values (never pure JSON, whose depth is at most 32) take the paths below. */
const NAMES_MAX_DEPTH = 64;

/**
 * Every member name of a pure JSON value, sorted by UTF-16 code units (RFC 8785's order, the
 * default string order), or undefined when the value holds anything else than strings, finite
 * numbers, booleans, null, arrays and plain objects (the paths below judge it as before), a
 * member named `__proto__` (which a property list would read from the prototype of the objects
 * that lack it), or is deeper than NAMES_MAX_DEPTH.
 */
function sortedMemberNames(root: unknown): string[] | undefined {
  const names = new Set<string>();
  const collect = (value: unknown, depth: number): boolean => {
    switch (typeof value) {
      case "string":
      case "boolean":
        return true;
      case "number":
        return Number.isFinite(value);
      case "object": {
        if (value === null) return true;
        if (depth > NAMES_MAX_DEPTH) return false;
        if (Array.isArray(value)) {
          for (let index = 0; index < value.length; index += 1) {
            if (!collect(value[index], depth + 1)) return false;
          }
          return true;
        }
        const prototype = Object.getPrototypeOf(value);
        if (prototype !== Object.prototype && prototype !== null) return false;
        const record = value as Record<string, unknown>;
        for (const key of Object.keys(record)) {
          names.add(key);
          if (!collect(record[key], depth + 1)) return false;
        }
        return true;
      }
      default:
        return false;
    }
  };
  if (!collect(root, 0) || names.has("__proto__")) return undefined;
  // A name that objects inherit with a value (only if Object.prototype was changed) would be
  // written for the objects that lack it.
  const inherited = Object.prototype as Record<string, unknown>;
  for (const name of names) {
    if (name in inherited && typeof inherited[name] !== "function") return undefined;
  }
  return [...names].sort();
}

const INTEGER_LIKE = /^(?:0|[1-9][0-9]*)$/;
const INTEGER_LIKE_NAME = new Error("integer-like member name");

function sortedMembers(this: unknown, _key: string, value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) throw new Error("not JSON data");
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort()) {
    if (INTEGER_LIKE.test(key) || key === "__proto__") throw INTEGER_LIKE_NAME;
    sorted[key] = record[key];
  }
  return sorted;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what needs escaping
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function scalar(value: unknown): string {
  if (typeof value === "string")
    return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
  if (typeof value === "number" && !Number.isFinite(value)) throw new Error("not JSON data");
  const text = JSON.stringify(value);
  if (text === undefined) throw new Error("not JSON data");
  return text;
}

/** Member names repeat across a definition: their `"name":` prefix is computed once. */
function write(value: unknown, names: Map<string, string>): string {
  if (value === null || typeof value !== "object") return scalar(value);
  if (Array.isArray(value)) {
    let out = "[";
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) out += ",";
      out += write(value[index], names);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = "{";
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    let prefix = names.get(key);
    if (prefix === undefined) {
      prefix = `${JSON.stringify(key)}:`;
      names.set(key, prefix);
    }
    out += index > 0 ? `,${prefix}` : prefix;
    out += write(record[key], names);
  }
  return `${out}}`;
}

/** `r:` + the first 16 lowercase hex digits of SHA-256 over the canonical UTF-8 bytes. */
export function revisionOf(value: unknown): string {
  const hash = createHash("sha256");
  const names = sortedMemberNames(value);
  if (names === undefined || value === null || typeof value !== "object" || Array.isArray(value)) {
    hash.update(canonicalJson(value), "utf8");
  } else {
    // A definition: its canonical text hashed a piece at a time (the members of the root, the
    // items of its arrays by batches), never built whole, so that a large definition's text and its UTF-8
    // copy are never in memory. The bytes are those of canonicalJson: the same property list.
    const pieces = new HashPieces(hash);
    const record = value as Record<string, unknown>;
    let first = true;
    pieces.add("{");
    for (const name of names) {
      if (!Object.hasOwn(record, name)) continue;
      pieces.add(`${first ? "" : ","}${JSON.stringify(name)}:`);
      first = false;
      const member = record[name];
      if (Array.isArray(member)) {
        // Items in batches: one JSON.stringify per item costs more than the writing itself.
        pieces.add("[");
        for (let start = 0; start < member.length; start += HASH_BATCH) {
          const batch = JSON.stringify(member.slice(start, start + HASH_BATCH), names);
          pieces.add(`${start > 0 ? "," : ""}${batch.slice(1, -1)}`);
        }
        pieces.add("]");
      } else pieces.add(JSON.stringify(member, names));
    }
    pieces.add("}");
    pieces.flush();
  }
  return `r:${hash.digest("hex").slice(0, 16)}`;
}

/** The items of a definition's array written by one JSON.stringify when hashing. */
const HASH_BATCH = 1024;

/** Text handed to a hash in pieces of about a megabyte (fewer calls than one per piece). */
class HashPieces {
  #pending = "";
  constructor(private readonly hash: ReturnType<typeof createHash>) {}

  add(text: string): void {
    this.#pending += text;
    if (this.#pending.length >= 1 << 20) this.flush();
  }

  flush(): void {
    if (this.#pending.length > 0) this.hash.update(this.#pending, "utf8");
    this.#pending = "";
  }
}

/** Unicode code point order (ids are ASCII, where it equals UTF-16 order; names may not be). */
export function compareCodePoints(left: string, right: string): number {
  // UTF-16 order equals code point order except where a surrogate meets a unit from U+E000 up.
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index += 1) {
    const a = left.charCodeAt(index);
    const b = right.charCodeAt(index);
    if (a === b) continue;
    const aSurrogate = a >= 0xd800 && a <= 0xdfff;
    const bSurrogate = b >= 0xd800 && b <= 0xdfff;
    if (aSurrogate && !bSurrogate && b >= 0xe000) return 1;
    if (bSurrogate && !aSurrogate && a >= 0xe000) return -1;
    return a - b;
  }
  return left.length - right.length;
}
