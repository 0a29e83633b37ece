// RFC 8785 (JSON Canonicalization Scheme) serialization and the revisions built on it ([CG-REV-1],
// [CG-REV-2]). Strings and numbers are written by JSON.stringify, whose escapes (only `"`, `\`
// and C0 controls, lowercase hex) and number form (ECMAScript Number::toString) are exactly
// RFC 8785's; members are sorted by their UTF-16 code units, which is the default string order.
// The `canonicalize` package is the reference this serializer is tested against; it is not used
// here because it is several times slower on large definitions (revisions are computed on open).
import { createHash } from "node:crypto";

/** The canonical serialization of a pure JSON value (section 1.2). */
export function canonicalJson(value: unknown): string {
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
  return `r:${createHash("sha256").update(canonicalJson(value), "utf8").digest("hex").slice(0, 16)}`;
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
