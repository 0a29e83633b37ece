// Real files for the surface tests: a configuration with one provider file and one document in a
// fresh temporary folder, and the paths of the built CLI and of the contract's tools.json.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** typescript/ (the compiled tests live in typescript/dist/test/). */
export const PACKAGE_ROOT = resolve(fileURLToPath(import.meta.url), "..", "..", "..");
export const CLI = join(PACKAGE_ROOT, "dist", "src", "surfaces", "cli", "main.js");
/** The package's `capability-graph` command: the POSIX launcher in front of the CLI. */
export const LAUNCHER = join(PACKAGE_ROOT, "bin", "capability-graph");
export const TOOLS_JSON = join(PACKAGE_ROOT, "..", "spec", "capability-graph", "tools.json");

export function contractTools(): Array<Record<string, unknown>> {
  return JSON.parse(readFileSync(TOOLS_JSON, "utf8")).tools;
}

export const PROVIDER = {
  providerId: "acme",
  name: "Acme",
  version: "1",
  capabilities: [
    {
      id: "route.validation",
      name: "Request validation",
      description: "Validate input before a route handler runs.",
      tags: ["http", "validation"],
      documents: [{ id: "guide", title: "Guide", path: "guide.md" }],
    },
    {
      id: "route.handler",
      name: "Route handler",
      description: "Run code for a matched HTTP route.",
      tags: ["http"],
    },
  ],
};

export const GUIDE_TEXT = "# Guide\n\nValidate the body first.\n";

/** A folder holding capability-graph.json (with `model` when given); returns the config path. */
export function graphFolder(model?: Record<string, unknown>): string {
  const folder = mkdtempSync(join(tmpdir(), "cg-surfaces-"));
  mkdirSync(join(folder, "providers", "docs"), { recursive: true });
  writeFileSync(join(folder, "providers", "acme.json"), JSON.stringify(PROVIDER));
  writeFileSync(join(folder, "providers", "docs", "guide.md"), GUIDE_TEXT);
  const config: Record<string, unknown> = {
    providers: [{ path: "providers/acme.json", documentRoot: "providers/docs" }],
    documents: { bodies: ["acme"] },
  };
  if (model !== undefined) config.model = model;
  const path = join(folder, "capability-graph.json");
  writeFileSync(path, JSON.stringify(config));
  return path;
}
