#!/usr/bin/env node
// The command's start-up bundle (run by `npm run build`, after tsc): the CLI
// (dist/src/surfaces/cli/main.js and everything it imports, dependencies included) bundled by
// esbuild into dist/src/bin/, one entry file and the chunks its lazy `import()`s load, so that a
// graph command reads a handful of files instead of ~55 modules, each resolved, read and compiled
// by the ESM loader one by one (docs/benchmarks.md: the CLI's cold start). bin/capability-graph
// runs dist/src/bin/capability-graph.js; the unbundled modules stay the library's and the tests'.
//
// The bundle lies three folders below the package root, as every compiled module does, so that a
// URL relative to import.meta.url (the package's version: ../../../package.json) means the same
// in both. The output is a build product, never committed.
//
//   node scripts/bundle.mjs
import { rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(packageRoot, "dist", "src", "bin");

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: {
    "capability-graph": join(packageRoot, "dist", "src", "surfaces", "cli", "main.js"),
  },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // ES module builds first: jsonc-parser's UMD build `require`s its parts by computed names.
  mainFields: ["module", "main"],
  legalComments: "none",
  logLevel: "warning",
});
