// The package's own version, read once from its package.json (three folders above the compiled
// module: dist/src/core/version.js -> package.json), so it is never written down twice.
import { readFileSync } from "node:fs";

let cached: string | undefined;

export function packageVersion(): string {
  if (cached === undefined) {
    const manifest: unknown = JSON.parse(
      readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
    );
    const version = (manifest as { version?: unknown }).version;
    cached = typeof version === "string" ? version : "0.0.0";
  }
  return cached;
}
