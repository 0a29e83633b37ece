// Pagination cursors ([CG-CUR-1] .. [CG-CUR-8]): the payload `{"v":2,"r":REV,"f":FILTERS,"o":N}`
// binding the revision, the filters and the position, authenticated with HMAC-SHA-256 truncated
// to 128 bits under a key derived from the configuration identity, base64url without padding.
// The layout and the key are normative, so a cursor crosses implementations. The length is
// checked before decoding and the MAC is verified before the payload is parsed.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
// Filters hold no lone surrogate (the pure-JSON rules refuse one first), so the code-point order
// of compareCodePoints is the order of their code points.
import { canonicalJson, compareCodePoints } from "./json/canonical.js";

const MAC_BYTES = 16;
const PAYLOAD_VERSION = 2;
/** A longer cursor is refused before it is decoded ([CG-CUR-5]). */
const MAX_CURSOR_CHARS = 256;
const KEY_LABEL = "capability-graph list cursor key";
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** An offset as the graph writes it: decimal, no sign, no leading zero, no fraction or exponent. */
const OFFSET = /^[1-9][0-9]*$/;
const CLOSING_BRACE = 0x7d;

export interface CursorFilters {
  readonly providers: readonly string[] | undefined;
  readonly tags: readonly string[] | undefined;
}

/**
 * The filters as sets ([CG-LIST-2]), sorted by code point: `providers` null when absent or
 * empty, `tags` [] when absent ([CG-CUR-5]).
 */
export function filterKey(filters: CursorFilters): string {
  const asSortedSet = (items: readonly string[]) => [...new Set(items)].sort(compareCodePoints);
  const providers =
    filters.providers === undefined || filters.providers.length === 0
      ? null
      : asSortedSet(filters.providers);
  const canonical = canonicalJson({
    providers,
    tags: asSortedSet(filters.tags ?? []),
  });
  return createHash("sha256").update(canonical).digest("hex").slice(0, 16);
}

/**
 * The MAC key ([CG-CUR-5]): SHA-256 of the label, one NUL byte and the JCS bytes of the
 * configuration identity — the configuration as written with every inline `definition` value
 * replaced by `true` (JCS writes whole numbers as integers).
 */
export function cursorKey(configuration: Readonly<Record<string, unknown>>): Buffer {
  const providers = configuration.providers;
  const identity = Array.isArray(providers)
    ? {
        ...configuration,
        providers: providers.map((source: unknown) =>
          source !== null &&
          typeof source === "object" &&
          !Array.isArray(source) &&
          Object.hasOwn(source, "definition")
            ? { ...(source as Record<string, unknown>), definition: true }
            : source,
        ),
      }
    : configuration;
  return createHash("sha256")
    .update(KEY_LABEL, "utf8")
    .update(Buffer.from([0]))
    .update(canonicalJson(identity))
    .digest();
}

function mac(key: Buffer, payload: Buffer): Buffer {
  return createHmac("sha256", key).update(payload).digest().subarray(0, MAC_BYTES);
}

/**
 * The payload [CG-CUR-5] writes, members in this order, the offset's digits as given. The revision
 * and the filter key are JSON strings (JSON.stringify writes them as Python's json.dumps does:
 * both are ASCII).
 */
function payloadText(revision: string, filters: string, offset: string): string {
  const head = JSON.stringify({ v: PAYLOAD_VERSION, r: revision, f: filters });
  return `${head.slice(0, -1)},"o":${offset}}`;
}

export function issueCursor(
  key: Buffer,
  revision: string,
  filters: string,
  offset: number,
): string {
  const payload = Buffer.from(payloadText(revision, filters, String(offset)), "utf8");
  return Buffer.concat([mac(key, payload), payload]).toString("base64url");
}

/**
 * The offset a cursor points at, or undefined for any cursor this graph did not issue for this
 * revision and these filters ([CG-CUR-2]): not the one base64url text of its bytes ([CG-CUR-6]),
 * a MAC that does not verify, a payload other than the exact bytes the graph writes with a
 * decimal offset ([CG-CUR-7]), or an offset where no selected item is ([CG-CUR-8]). The payload is
 * compared, never parsed: a forged payload with a valid MAC never reaches a JSON parser.
 */
export function readCursor(
  key: Buffer,
  cursor: string,
  revision: string,
  filters: string,
  selected: number,
): number | undefined {
  if (cursor.length > MAX_CURSOR_CHARS || !BASE64URL.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, "base64url");
  // Buffer's decoder skips what it cannot decode and ignores the unused bits of the last
  // character; only the text the graph writes for these bytes is accepted ([CG-CUR-6]).
  if (bytes.toString("base64url") !== cursor || bytes.length <= MAC_BYTES) return undefined;
  const payload = bytes.subarray(MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(0, MAC_BYTES), mac(key, payload))) return undefined;
  // Verified, yet untrusted ([CG-CUR-7]): anyone with the configuration can compute the key.
  const head = Buffer.from(payloadText(revision, filters, "").slice(0, -1), "utf8");
  if (!payload.subarray(0, head.length).equals(head)) return undefined;
  if (payload[payload.length - 1] !== CLOSING_BRACE) return undefined;
  const digits = payload.subarray(head.length, -1).toString("latin1");
  if (!OFFSET.test(digits)) return undefined;
  // A number of any size compares correctly with the count, even where it is not exact.
  const offset = Number(digits);
  return offset < selected ? offset : undefined;
}
