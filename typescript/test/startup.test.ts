// The start-up guard (docs/benchmarks.md: the CLI's cold start, <= 1.4x `node -e ""`): a graph
// command loads only the modules on the allowlists below. Each command runs in a subprocess with
// a preload (--import) that records every module the ES module loader resolves (a module.register
// resolve hook, in its own thread, appending to a file) and, at exit, the Node modules loaded
// (process.moduleLoadList, which also sees a `require`). An import that brings in more — the MCP
// SDK, the contract's every validator, an executor's HTTP or child-process module, a maintenance
// command — fails here with the module named, before it shows in the benchmark.
//
// Two runs per command: the compiled modules (dist/src/surfaces/cli/main.js, one file per module,
// so the allowlist names modules) and the start-up bundle that bin/capability-graph runs
// (dist/src/bin/, which must load no chunk of another command).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { packageRoot, repositoryRoot } from "./support.js";

const QUICKSTART = join(repositoryRoot, "examples", "quickstart", "capability-graph.json");

/** The graph commands guarded, as typed (the quickstart's lexical executor answers match). */
const COMMANDS: readonly (readonly string[])[] = [
  ["describe"],
  ["list"],
  ["match", "validate a request body"],
  ["call", "--arguments", "{}", "describe_graph"],
];

/**
 * The compiled modules a graph command may load (paths under dist/src/), by group, with the
 * reason each group is there. A pattern ending in `/` allows the folder.
 */
const ALLOWED_MODULES: ReadonlyArray<{ readonly paths: readonly string[]; readonly why: string }> =
  [
    {
      paths: [
        "surfaces/cli/main.js",
        "surfaces/cli/arguments.js",
        "surfaces/cli/argv.js",
        "surfaces/cli/io.js",
        "surfaces/cli/requests.js",
        "surfaces/cli/graph.js",
        "surfaces/cli/call.js",
      ],
      why: "the dispatcher, the argument grammar, the streams, and the graph commands themselves",
    },
    {
      paths: ["surfaces/cli/doctor.js", "surfaces/cli/explain.js", "surfaces/cli/mcp.js"],
      why: "the other commands' specs (names and help for the usage errors); their work is lazy",
    },
    {
      paths: ["maintenance/report.js", "maintenance/explain.js"],
      why: "the usage exit status and the explain texts the dispatcher names (no file is written)",
    },
    { paths: ["core/"], why: "the graph: opening, the operations, the executors' registry" },
    {
      paths: [
        "_generated/defaults.js",
        "_generated/explanations.js",
        "_generated/lexical-unicode.js",
        "_generated/member-names.js",
        "_generated/operations.js",
        "_generated/taxonomy.js",
        "_generated/validators.js",
      ],
      why: "the contract's tables and the run-time validators (not contract-validators.js: results are not checked at run time)",
    },
  ];

/** Packages a graph command may load, with the reason. */
const ALLOWED_PACKAGES: ReadonlyArray<{ readonly path: string; readonly why: string }> = [
  {
    path: "ajv/dist/runtime/ucs2length.js",
    why: "the compiled validators' string length (maxLength counts code points)",
  },
];

/**
 * The Node modules the implementation may import on a graph command's path (the specifiers of
 * its own imports, so the list does not depend on what Node loads for itself).
 */
const ALLOWED_NODE_IMPORTS: ReadonlyArray<{
  readonly names: readonly string[];
  readonly why: string;
}> = [
  { names: ["node:fs", "node:fs/promises", "node:path", "node:url"], why: "files and paths" },
  { names: ["node:crypto"], why: "revisions (SHA-256) and cursors (HMAC)" },
  { names: ["node:module"], why: "createRequire, for the executors' modules on first use" },
];

/**
 * The bundle's files a graph command loads, in bytes at most: the code of the allowlisted modules
 * (about 550 KB, most of it the run-time validators) with room to grow. A module outside the
 * allowlists is inlined into these files, not loaded as its own, so the bundle is held to the
 * size of its graph path instead: the MCP SDK alone is 600 KB, every schema's validator 680 KB.
 */
const BUNDLE_GRAPH_PATH_BYTES = 640_000;

/** Node modules that no graph command may load at all, however (a require included). */
const FORBIDDEN_NODE_MODULES = [
  "http",
  "https",
  "tls",
  "net",
  "child_process",
  "dgram",
  "os",
  "timers/promises",
  "worker_threads",
  "zlib",
];

/** The preload: the resolve hook (in the loader's thread) and the exit record. */
const PRELOAD = `
import { register } from "node:module";
import { appendFileSync, writeFileSync } from "node:fs";
const log = process.env.CG_STARTUP_LOG;
const hooks = \`
import { appendFileSync } from "node:fs";
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(log, resolved.url + "\\\\n");
  return resolved;
}
\`;
register("data:text/javascript," + encodeURIComponent(hooks), { data: { log: log + ".resolved" } });
// What the recorder itself loaded (the hooks' thread: worker_threads, net) is not the command's.
const before = new Set(process.moduleLoadList);
process.on("exit", () =>
  writeFileSync(log + ".loaded", process.moduleLoadList.filter((entry) => !before.has(entry)).join("\\n")),
);
`;

interface Loaded {
  /** Every URL the ES module loader resolved. */
  readonly resolved: readonly string[];
  /** Node's own modules loaded, by name (moduleLoadList's `NativeModule NAME`). */
  readonly nodeModules: readonly string[];
}

function runRecorded(script: string, args: readonly string[]): Loaded {
  const folder = mkdtempSync(join(tmpdir(), "cg-startup-"));
  try {
    const preload = join(folder, "preload.mjs");
    writeFileSync(preload, PRELOAD);
    const log = join(folder, "log");
    // Output to files, as the benchmark's: a pipe would make Node load net for process.stdout.
    const output = openSync(join(folder, "stdout"), "w");
    try {
      execFileSync(process.execPath, ["--import", preload, script, ...args], {
        env: { ...process.env, CG_STARTUP_LOG: log, CAPABILITY_GRAPH_CONFIG: "" },
        stdio: ["ignore", output, output],
        timeout: 60_000,
      });
    } finally {
      closeSync(output);
    }
    const printed = readFileSync(join(folder, "stdout"), "utf8");
    assert.ok(printed.startsWith("{"), `the command answered: ${printed.slice(0, 200)}`);
    const resolved = [...new Set(readFileSync(`${log}.resolved`, "utf8").split("\n"))].filter(
      (url) => url !== "" && !url.startsWith("data:"),
    );
    const nodeModules = readFileSync(`${log}.loaded`, "utf8")
      .split("\n")
      .filter((entry) => entry.startsWith("NativeModule "))
      .map((entry) => entry.slice("NativeModule ".length));
    return { resolved, nodeModules };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** What a run loaded outside the allowlists, one line each. */
export function outsideAllowlists(loaded: Loaded, bundle: boolean): string[] {
  const problems: string[] = [];
  const dist = join(packageRoot, "dist", "src");
  const nodeModulesRoot = join(packageRoot, "node_modules");
  const allowedNode = new Set(ALLOWED_NODE_IMPORTS.flatMap((group) => group.names));
  let bundleBytes = 0;
  for (const url of loaded.resolved) {
    if (url.startsWith("node:")) {
      if (!allowedNode.has(url)) problems.push(`imports ${url}`);
      continue;
    }
    const path = fileURLToPath(url);
    if (path.startsWith(`${nodeModulesRoot}/`)) {
      const inPackage = relative(nodeModulesRoot, path);
      if (!ALLOWED_PACKAGES.some((entry) => entry.path === inPackage)) {
        problems.push(`loads the package module ${inPackage}`);
      }
    } else if (!path.startsWith(`${dist}/`)) {
      problems.push(`loads ${path}`);
    } else if (bundle) {
      const name = relative(dist, path);
      if (!/^bin\/(capability-graph|chunk-[A-Z0-9]+|graph-[A-Z0-9]+)\.js$/.test(name)) {
        problems.push(`loads the bundle's ${name} (another command's chunk)`);
      }
      bundleBytes += statSync(path).size;
    } else {
      const name = relative(dist, path);
      const allowed = ALLOWED_MODULES.some((group) =>
        group.paths.some((entry) =>
          entry.endsWith("/") ? name.startsWith(entry) : name === entry,
        ),
      );
      if (!allowed) problems.push(`loads ${name}`);
    }
  }
  for (const name of loaded.nodeModules) {
    if (FORBIDDEN_NODE_MODULES.includes(name)) problems.push(`loads Node's ${name}`);
  }
  if (bundleBytes > BUNDLE_GRAPH_PATH_BYTES) {
    problems.push(`loads ${bundleBytes} bytes of the bundle (at most ${BUNDLE_GRAPH_PATH_BYTES})`);
  }
  return problems;
}

for (const command of COMMANDS) {
  const args = [...command, "--config", QUICKSTART];
  test(`${command[0]}: the compiled modules load only the allowlisted modules`, () => {
    const loaded = runRecorded(
      join(packageRoot, "dist", "src", "surfaces", "cli", "main.js"),
      args,
    );
    assert.ok(
      loaded.resolved.some((url) => url.endsWith("/core/graph.js")),
      "the recorder saw the graph open",
    );
    assert.deepEqual(outsideAllowlists(loaded, false), []);
  });

  test(`${command[0]}: the start-up bundle loads only its entry, the graph and shared chunks`, () => {
    const loaded = runRecorded(
      join(packageRoot, "dist", "src", "bin", "capability-graph.js"),
      args,
    );
    assert.ok(
      loaded.resolved.some((url) => /\/bin\/graph-[A-Z0-9]+\.js$/.test(url)),
      "the recorder saw the graph chunk",
    );
    assert.deepEqual(outsideAllowlists(loaded, true), []);
  });
}

test("the guard names what an unneeded import loads", () => {
  // What the recorder reports for a command whose path imports the MCP SDK, the contract's every
  // validator and node:http (as an `import` in main.ts would): each is named.
  const dist = join(packageRoot, "dist", "src");
  const loaded: Loaded = {
    resolved: [
      `file://${dist}/surfaces/cli/main.js`,
      `file://${dist}/_generated/contract-validators.js`,
      `file://${dist}/surfaces/mcp.js`,
      `file://${packageRoot}/node_modules/@modelcontextprotocol/sdk/dist/esm/server/index.js`,
      "node:http",
    ],
    nodeModules: ["fs", "http"],
  };
  assert.deepEqual(outsideAllowlists(loaded, false), [
    "loads _generated/contract-validators.js",
    "loads surfaces/mcp.js",
    "loads the package module @modelcontextprotocol/sdk/dist/esm/server/index.js",
    "imports node:http",
    "loads Node's http",
  ]);
});
