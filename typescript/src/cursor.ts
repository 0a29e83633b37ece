// Pagination cursors ([CG-CUR-1] .. [CG-CUR-4]): a payload binding the revision, the filters and
// the position, authenticated with HMAC-SHA-256 truncated to 128 bits under a key derived from
// the canonical host configuration, base64url without padding. The MAC is verified before the
// payload is parsed.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson } from "./json/canonical.js";

const MAC_BYTES = 16;
const PAYLOAD_VERSION = 1;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface CursorFilters {
  readonly providers: readonly string[] | undefined;
  readonly tags: readonly string[] | undefined;
}

/** The filters as sets: order and repeats do not matter ([CG-LIST-2]). */
export function filterKey(filters: CursorFilters): string {
  const asSet = (items: readonly string[] | undefined) =>
    items === undefined ? null : [...new Set(items)].sort();
  const canonical = canonicalJson({
    providers: asSet(filters.providers),
    tags: asSet(filters.tags),
  });
  return createHash("sha256").update(canonical).digest("hex").slice(0, 16);
}

function mac(key: Buffer, payload: Buffer): Buffer {
  return createHmac("sha256", key).update(payload).digest().subarray(0, MAC_BYTES);
}

export function issueCursor(
  key: Buffer,
  revision: string,
  filters: string,
  offset: number,
): string {
  const payload = Buffer.from(
    JSON.stringify({ v: PAYLOAD_VERSION, r: revision, f: filters, o: offset }),
    "utf8",
  );
  return Buffer.concat([mac(key, payload), payload]).toString("base64url");
}

/**
 * The offset a cursor points at, or undefined for any cursor this graph did not issue for this
 * revision and these filters, or whose position is not inside the selection.
 */
export function readCursor(
  key: Buffer,
  cursor: string,
  revision: string,
  filters: string,
  selected: number,
): number | undefined {
  if (!BASE64URL.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, "base64url");
  // Buffer's decoder skips what it cannot decode; only a canonical encoding is accepted.
  if (bytes.toString("base64url") !== cursor || bytes.length <= MAC_BYTES) return undefined;
  const payload = bytes.subarray(MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(0, MAC_BYTES), mac(key, payload))) return undefined;
  let fields: unknown;
  try {
    fields = JSON.parse(payload.toString("utf8"));
  } catch {
    return undefined;
  }
  if (fields === null || typeof fields !== "object" || Array.isArray(fields)) return undefined;
  const { v, r, f, o } = fields as Record<string, unknown>;
  if (Object.keys(fields).length !== 4 || v !== PAYLOAD_VERSION || r !== revision || f !== filters)
    return undefined;
  if (typeof o !== "number" || !Number.isInteger(o) || o <= 0 || o >= selected) return undefined;
  return o;
}
