// The npm package as a user gets it: `npm pack` (which builds first), the tarball's file list,
// then a fresh project that installs the tarball and runs the README's "Use it" steps as
// written — its shell commands and its SDK example — and type-checks a strict TypeScript program
// against the package's declarations. Exit 1 with the failing step named; every step is bounded.
//
//   node scripts/check-package.mjs            (npm run check-package)
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_ROOT = path.resolve(fileURLToPath(import.meta.url), "..", "..");
const QUICKSTART = path.join(PACKAGE_ROOT, "..", "examples", "quickstart");
const MANIFEST = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8"));
const STEP_TIMEOUT_MS = 300_000;

/** Files every tarball must hold, and prefixes none may. */
const REQUIRED = [
  "LICENSE",
  "README.md",
  "package.json",
  "bin/capability-graph",
  "dist/src/index.js",
  "dist/src/index.d.ts",
  "dist/src/surfaces/cli/main.js",
  "dist/src/bin/capability-graph.js",
];
const FORBIDDEN = ["dist/test/", "dist/conformance/", "src/", "test/", "node_modules/"];

/** A strict program against the declarations: the SDK (typed configuration), diagnose, the Tool Adapter and GraphError. */
const TYPED_PROGRAM = `import { CapabilityGraph, diagnose, GraphError, type HostConfig, ToolAdapter } from "capability-graph";

const inline: HostConfig = { providers: [], model: { executor: "lexical" } };
const report = await diagnose(inline);
if (report.status !== "ok") throw new Error(report.checks.map((check) => check.message).join("; "));
const graph = await CapabilityGraph.open("capability-graph.json");
try {
  const described = await graph.describe();
  const adapter = new ToolAdapter(graph);
  const names: string[] = adapter.openAIChatTools().map((tool) => tool.function.name);
  const outcome = await adapter.call("list_capabilities", { limit: 1 });
  console.log(JSON.stringify({ revision: described.revision, names, ok: outcome.ok }));
} catch (error) {
  if (error instanceof GraphError) console.error(error.code, error.nextAction);
  throw error;
} finally {
  await graph.close();
}
`;

function fail(step, detail) {
  console.error(`check-package: ${step}: ${detail}`);
  process.exit(1);
}

function run(step, program, args, cwd) {
  try {
    return execFileSync(program, args, {
      cwd,
      encoding: "utf8",
      timeout: STEP_TIMEOUT_MS,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CAPABILITY_GRAPH_CONFIG: "", npm_config_update_notifier: "false" },
    });
  } catch (error) {
    fail(
      step,
      `${[program, ...args].join(" ")} failed\n${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
  }
}

/** The fenced blocks of one language in the README's "Use it" section. */
function readmeBlocks(language) {
  const readme = readFileSync(path.join(PACKAGE_ROOT, "README.md"), "utf8");
  const section = readme.split(/^## /m).find((part) => part.startsWith("Use it\n"));
  if (section === undefined) fail("README", 'no "## Use it" section');
  const blocks = [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)];
  return blocks.filter((block) => block[1] === language).map((block) => block[2]);
}

const work = mkdtempSync(path.join(tmpdir(), "cg-check-package-"));
try {
  // 1. The tarball and what it holds.
  const packed = JSON.parse(
    run("npm pack", "npm", ["pack", "--json", "--pack-destination", work], PACKAGE_ROOT),
  )[0];
  const files = packed.files.map((file) => file.path);
  for (const required of REQUIRED) {
    if (!files.includes(required)) fail("tarball", `${required} is missing`);
  }
  const stray = files.filter((file) => FORBIDDEN.some((prefix) => file.startsWith(prefix)));
  if (stray.length > 0) fail("tarball", `holds ${stray.slice(0, 5).join(", ")}`);
  const tarball = path.join(work, packed.filename);
  console.log(`check-package: ${packed.filename}: ${files.length} files, ${packed.size} bytes`);

  // 2. A fresh project that installs it (dependencies from the npm cache when they are there).
  const project = path.join(work, "project");
  cpSync(QUICKSTART, project, { recursive: true });
  writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  const devTools = ["typescript", "@types/node"].map(
    (name) => `${name}@${MANIFEST.devDependencies[name]}`,
  );
  run(
    "npm install",
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, ...devTools],
    project,
  );

  // 3. The README's shell steps, the tarball's name as built (shell steps run one by one).
  const commands = readmeBlocks("sh")
    .join("")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .filter((line) => !line.startsWith("npm install "));
  for (const command of commands) {
    const output = run("README", "sh", ["-c", command], project);
    if (!output.startsWith("{")) fail("README", `${command} printed ${JSON.stringify(output)}`);
  }

  // 4. The README's SDK example as a module of the project.
  const [example] = readmeBlocks("js");
  if (example === undefined) fail("README", "no js example");
  writeFileSync(path.join(project, "example.mjs"), example);
  const listed = run("README example", "node", ["example.mjs"], project);
  if (!listed.includes("acme::")) fail("README example", `printed ${JSON.stringify(listed)}`);

  // 5. A strict TypeScript program against the declarations, compiled and run.
  writeFileSync(path.join(project, "typed.ts"), TYPED_PROGRAM);
  const tsconfig = {
    compilerOptions: {
      strict: true,
      target: "es2022",
      module: "nodenext",
      moduleResolution: "nodenext",
      skipLibCheck: false,
      outDir: "out",
    },
    files: ["typed.ts"],
  };
  writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify(tsconfig));
  run("tsc --strict", "npx", ["--no-install", "tsc", "-p", "."], project);
  const typed = JSON.parse(run("typed program", "node", ["out/typed.js"], project));
  if (typed.names.length !== 5 || typed.ok !== true) fail("typed program", JSON.stringify(typed));
  console.log(
    `check-package: ok (${commands.length} README commands, the SDK example, tsc --strict)`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
