// The layers of src/ (rule of the layout): _generated <- core <- surfaces and maintenance.
// _generated imports nothing hand-written; core imports core and _generated; maintenance imports
// maintenance, core and _generated; a surface (surfaces/tools.ts, surfaces/mcp.ts, surfaces/cli/)
// imports itself, core and _generated, never another surface, except that the CLI may import
// maintenance (its commands run it) and the MCP server (its `mcp` command starts it); index.ts may
// import anything. Every import counts: `import type`, re-exports and dynamic `import()`.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, posix, relative } from "node:path";
import { test } from "node:test";
import ts from "typescript";
import { packageRoot } from "./support.js";

const SOURCE_ROOT = join(packageRoot, "src");

/** The layer of a file, by its path relative to src/ (POSIX separators). */
function layerOf(file: string): string {
  if (file === "index.ts") return "index";
  if (file.startsWith("_generated/")) return "generated";
  if (file.startsWith("core/")) return "core";
  if (file.startsWith("maintenance/")) return "maintenance";
  if (file === "surfaces/tools.ts") return "surface:tools";
  if (file === "surfaces/mcp.ts") return "surface:mcp";
  if (file.startsWith("surfaces/cli/")) return "surface:cli";
  return "unknown";
}

const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  generated: ["generated"],
  core: ["core", "generated"],
  maintenance: ["maintenance", "core", "generated"],
  "surface:tools": ["surface:tools", "core", "generated"],
  "surface:mcp": ["surface:mcp", "core", "generated"],
  "surface:cli": ["surface:cli", "surface:mcp", "maintenance", "core", "generated"],
};

export interface Violation {
  readonly file: string;
  readonly imported: string;
  readonly reason: string;
}

/** The module specifiers a source text imports: static, type-only, re-exports and import(). */
export function importsOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((entry) => entry.fileName);
}

/** Every import of `files` (path relative to src/ -> source text) that breaks the layers. */
export function layerViolations(files: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  for (const [file, text] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const from = layerOf(file);
    for (const imported of importsOf(text)) {
      if (!imported.startsWith(".")) continue; // node: and packages are no layer
      const target = posix.normalize(posix.join(posix.dirname(file), imported));
      const to = layerOf(target.replace(/\.js$/, ".ts"));
      if (from === "index") continue;
      if (target.startsWith("../")) {
        violations.push({ file, imported, reason: "imports a file outside src/" });
      } else if (from === "unknown") {
        violations.push({ file, imported, reason: "the file is in no layer" });
      } else if (!(ALLOWED[from] ?? []).includes(to)) {
        violations.push({ file, imported, reason: `${from} may not import ${to}` });
      }
    }
  }
  return violations;
}

function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts"))
        files.set(relative(SOURCE_ROOT, full).split("\\").join("/"), readFileSync(full, "utf8"));
    }
  };
  walk(SOURCE_ROOT);
  return files;
}

const describeViolation = (v: Violation) => `src/${v.file} imports "${v.imported}": ${v.reason}`;

test("no import in src/ breaks the layers", () => {
  const files = sourceFiles();
  assert.ok(files.size > 50, "the sources were found");
  assert.deepEqual(layerViolations(files).map(describeViolation), []);
});

test("every TypeScript file name is kebab-case", () => {
  const names = [...sourceFiles().keys()].filter(
    (file) =>
      !/^[a-z0-9_/-]*?[a-z0-9-]+\.ts$/.test(file) ||
      /[A-Z_]/.test(file.replace(/^_generated\//, "")),
  );
  assert.deepEqual(names, []);
});

test("the checker finds every kind of import that breaks a layer", () => {
  const files = new Map([
    ["core/engine.ts", 'import { ToolAdapter } from "../surfaces/tools.js";\n'],
    ["core/typed.ts", 'import type { Report } from "../maintenance/report.js";\n'],
    ["core/lazy.ts", 'export async function f() { return import("../surfaces/cli/main.js"); }\n'],
    ["core/again.ts", 'export { x } from "../surfaces/mcp.js";\n'],
    ["_generated/table.ts", 'import { graphError } from "../core/errors.js";\n'],
    ["surfaces/mcp.ts", 'import { toolDefinitions } from "./tools.js";\n'],
    ["surfaces/tools.ts", 'import { x } from "./cli/main.js";\n'],
    ["maintenance/report.ts", 'import { parse } from "../surfaces/cli/arguments.js";\n'],
    [
      "surfaces/cli/mcp.ts",
      'import { serve } from "../mcp.js";\nimport "../../maintenance/x.js";\n',
    ],
    [
      "core/fine.ts",
      'import { a } from "./errors.js";\nimport b from "node:fs";\nimport c from "ajv";\n',
    ],
    ["index.ts", 'import { everything } from "./surfaces/cli/main.js";\n'],
  ]);
  assert.deepEqual(layerViolations(files).map(describeViolation), [
    'src/_generated/table.ts imports "../core/errors.js": generated may not import core',
    'src/core/again.ts imports "../surfaces/mcp.js": core may not import surface:mcp',
    'src/core/engine.ts imports "../surfaces/tools.js": core may not import surface:tools',
    'src/core/lazy.ts imports "../surfaces/cli/main.js": core may not import surface:cli',
    'src/core/typed.ts imports "../maintenance/report.js": core may not import maintenance',
    'src/maintenance/report.ts imports "../surfaces/cli/arguments.js": maintenance may not import surface:cli',
    'src/surfaces/mcp.ts imports "./tools.js": surface:mcp may not import surface:tools',
    'src/surfaces/tools.ts imports "./cli/main.js": surface:tools may not import surface:cli',
  ]);
});
