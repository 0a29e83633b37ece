// RFC 8785 (JSON Canonicalization Scheme) serialization and the revisions built on it ([CG-REV-1],
// [CG-REV-2]), with the `canonicalize` package.
import { createHash } from "node:crypto";
import * as jcs from "canonicalize";

// The package is CommonJS (`module.exports = serialize`) while its types declare a default
// export; under NodeNext the import's `default` is the function at run time.
const serialize = jcs.default as unknown as (input: unknown) => string | undefined;

/** The canonical serialization of a pure JSON value (section 1.2). */
export function canonicalJson(value: unknown): string {
  const text = serialize(value);
  if (text === undefined) throw new Error("value has no canonical JSON form");
  return text;
}

/** `r:` + the first 16 lowercase hex digits of SHA-256 over the canonical UTF-8 bytes. */
export function revisionOf(value: unknown): string {
  return `r:${createHash("sha256").update(canonicalJson(value), "utf8").digest("hex").slice(0, 16)}`;
}
