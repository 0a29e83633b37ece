#!/usr/bin/env node
// Mutation testing of the TypeScript implementation, with the conformance suite as the oracle.
//
//   npm run mutation -- [MODULE ...] [--sample N] [--seed S] [--cg-conformance PATH]
//
// For each module (a file under src/, default: every module of ORACLES), StrykerJS instruments
// the TypeScript source with all its mutants, builds the sandbox (`npm run build`, so the suite
// runs the mutated code, not the dist/ of this checkout) and runs its command runner once per
// mutant: scripts/mutation-oracle.mjs, which runs `cg-conformance run` against the sandbox's
// build with the module's oracle (ORACLES: the surfaces and vector areas that can see it,
// --exit-first). A mutant is killed when the suite fails or times out, and survives when it
// passes.
//
// Each mutant costs a suite run, so `--sample N --seed S` judges a reproducible random sample of
// N mutants per module: the module's mutants are enumerated with Stryker's own instrumenter
// (the same ids Stryker gives them, checked after the run), drawn with a seeded generator, and
// the oracle exits at once (unjudged) for the others. StrykerJS 9 is pinned because version 10
// needs Node 22 and the package supports Node 20.
//
// Writes reports/mutation/<module>.json (every judged mutant with its status and change) and
// prints per module the figures and every surviving mutant. docs/conformance/mutation.md records
// them and classifies every survivor.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Stryker } from "@stryker-mutator/core";
import { Instrumenter } from "@stryker-mutator/instrumenter";

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const repositoryRoot = resolve(packageRoot, "..");

const CORE = { surfaces: ["sdk", "tool"], patterns: [] };
// Maintenance on the command line: doctor, init and mcp install/uninstall are CLI vectors of
// the cli area (cg.cli.*doctor*, cg.cli.*init-*, cg.cli.*mcp-*) and the seed area; no other
// vector runs their code.
const MAINTENANCE = { surfaces: ["cli"], patterns: ["cg.cli.*", "cg.seed.*"] };
const DOCTOR = { surfaces: ["cli"], patterns: ["cg.cli.*doctor*", "cg.seed.*"] };
const INSTALL = { surfaces: ["cli"], patterns: ["cg.cli.*mcp-*"] };
// module -> the part of the suite that can see it; the same choices as
// python/capability-graph/scripts/mutation.py.
export const ORACLES = {
  "src/core/graph.ts": CORE,
  // The operation handlers, one module each, and what runs around them (as Python's
  // _core/operations package).
  "src/core/operations/common.ts": CORE,
  "src/core/operations/requests.ts": CORE,
  "src/core/operations/describe.ts": CORE,
  "src/core/operations/list.ts": CORE,
  "src/core/operations/resolve.ts": CORE,
  "src/core/operations/match.ts": CORE,
  "src/core/operations/read-document.ts": CORE,
  "src/core/snapshot.ts": CORE,
  "src/core/load.ts": CORE,
  "src/core/config.ts": CORE,
  "src/core/cursor.ts": CORE,
  "src/surfaces/tools.ts": CORE,
  "src/surfaces/mcp.ts": { surfaces: ["sdk", "mcp"], patterns: [] },
  // Bodies are read by read_document (and doctor, through the same function); resolve and the
  // budgets name documents too.
  "src/core/documents.ts": {
    surfaces: ["sdk", "tool"],
    patterns: ["cg.document.*", "cg.load.*", "cg.budget.*", "cg.query.*"],
  },
  // The bounded read of the configuration file and of definition files.
  "src/core/files.ts": {
    surfaces: ["sdk", "tool"],
    patterns: ["cg.load.*", "cg.config.*", "cg.budget.*", "cg.lifecycle.*", "cg.document.*"],
  },
  // The lexical ranking runs only for a match whose configuration names it (outcome vectors).
  "src/core/executors/lexical.ts": {
    surfaces: ["sdk", "tool"],
    patterns: ["cg.outcome.*", "cg.model.*", "cg.config.*"],
  },
  // The configuration vectors reach the option checks; the cg.model.openai-* vectors call it
  // against the harness's scripted endpoint (its request, every row of its table).
  "src/core/executors/openai.ts": {
    surfaces: ["sdk", "tool"],
    patterns: ["cg.config.*", "cg.model.*"],
  },
  "src/maintenance/diagnose.ts": DOCTOR,
  "src/surfaces/cli/doctor.ts": DOCTOR,
  // What init, mcp-install and mcp-uninstall share: the report, the options, atomic writes.
  "src/maintenance/report.ts": MAINTENANCE,
  "src/maintenance/mcp-install.ts": INSTALL,
  "src/maintenance/client-files.ts": INSTALL,
  "src/surfaces/cli/mcp-install.ts": INSTALL,
};

function parseArguments(argv) {
  const options = { modules: [], sample: undefined, seed: 0, cgConformance: undefined };
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === "--sample") options.sample = Number.parseInt(argv[++index], 10);
    else if (argument === "--seed") options.seed = Number.parseInt(argv[++index], 10);
    else if (argument === "--cg-conformance") options.cgConformance = argv[++index];
    else if (argument.startsWith("--")) throw new Error(`unknown option ${argument}`);
    else options.modules.push(argument.startsWith("src/") ? argument : `src/${argument}`);
  }
  for (const module of options.modules) {
    if (!(module in ORACLES)) throw new Error(`no oracle for ${module}; add it to ORACLES`);
  }
  if (options.modules.length === 0) options.modules = Object.keys(ORACLES);
  return options;
}

// The suite's command: --cg-conformance, else the one on PATH (a nox session's), else this
// checkout's .venv.
function conformanceCommand(explicit) {
  if (explicit !== undefined) return explicit;
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    if (folder !== "" && existsSync(join(folder, "cg-conformance"))) {
      return join(folder, "cg-conformance");
    }
  }
  const local = join(repositoryRoot, ".venv", "bin", "cg-conformance");
  if (existsSync(local)) return local;
  throw new Error("cg-conformance not found: install conformance/harness or pass --cg-conformance");
}

function oracleArgv(command, module) {
  const { surfaces, patterns } = ORACLES[module];
  const argv = [command, "run", "--suite-root", repositoryRoot, "--no-progress"];
  argv.push("--no-expected-failures", "--exit-first", "--timeout", "20");
  argv.push("--report-dir", join(tmpdir(), `cg-mutation-report-${process.pid}`));
  for (const surface of surfaces) argv.push("-s", surface);
  for (const pattern of patterns) argv.push("-k", pattern);
  return argv;
}

const quietLogger = {
  isTraceEnabled: () => false,
  isDebugEnabled: () => false,
  isInfoEnabled: () => false,
  isWarnEnabled: () => false,
  isErrorEnabled: () => false,
  isFatalEnabled: () => false,
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
};

// The module's mutants (within `ranges`, if given) as Stryker numbers them when it mutates this
// file alone, with the same ranges.
async function enumerate(module, ranges = true) {
  const content = readFileSync(join(packageRoot, module), "utf8");
  const instrumenter = new Instrumenter(quietLogger);
  const { mutants } = await instrumenter.instrument([{ name: module, content, mutate: ranges }], {
    plugins: null,
    excludedMutations: [],
    ignorers: [],
  });
  return mutants.filter((mutant) => mutant.ignoreReason === undefined).map(describe);
}

function describe(mutant) {
  const { id, mutatorName, replacement, location } = mutant.toApiMutant?.() ?? mutant;
  return { id, mutatorName, replacement, location };
}

// mulberry32: a small seeded generator, so a sample is the same on every machine.
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function draw(mutants, size, seed) {
  if (size === undefined || mutants.length <= size) return mutants;
  const pool = [...mutants];
  const random = generator(seed);
  for (let index = pool.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [pool[index], pool[other]] = [pool[other], pool[index]];
  }
  return pool.slice(0, size).sort((a, b) => Number(a.id) - Number(b.id));
}

function originalText(source, location) {
  const lines = source.split("\n");
  const { start, end } = location;
  if (start.line === end.line) return lines[start.line].slice(start.column, end.column);
  const text = [lines[start.line].slice(start.column)];
  for (let line = start.line + 1; line < end.line; line += 1) text.push(lines[line]);
  text.push(lines[end.line].slice(0, end.column));
  return text.join("\n");
}

function clip(text, width = 90) {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > width ? `${flat.slice(0, width - 3)}...` : flat;
}

const identity = ({ mutatorName, location: { start, end }, replacement }) =>
  `${mutatorName} ${start.line}:${start.column}-${end.line}:${end.column} ${replacement}`;

async function mutateModule(module, options, command) {
  const all = await enumerate(module);
  let sample = draw(all, options.sample, options.seed);
  // Stryker is told to mutate only the sampled mutants' ranges, which saves it instrumenting
  // and starting the oracle for the whole file; a range also holds the mutants nested in it
  // (unjudged). The ids Stryker gives are those of the same ranges.
  let mutate = [module];
  if (sample.length < all.length) {
    const ranges = sample.map(({ location: { start, end } }) => ({ start, end }));
    const wanted = new Map(sample.map((mutant) => [identity(mutant), mutant]));
    sample = (await enumerate(module, ranges)).filter((mutant) => wanted.has(identity(mutant)));
    if (sample.length !== wanted.size) throw new Error(`${module}: a sampled mutant is lost`);
    mutate = ranges.map(
      ({ start, end }) =>
        `${module}:${start.line + 1}:${start.column}-${end.line + 1}:${end.column}`,
    );
  }
  const sampleIds = new Set(sample.map((mutant) => mutant.id));
  process.env.CG_MUTATION_ORACLE = JSON.stringify({
    argv: oracleArgv(command, module),
    sample: [...sampleIds],
  });
  const started = Date.now();
  const stryker = new Stryker({
    packageManager: "npm",
    testRunner: "command",
    commandRunner: { command: `node ${join(packageRoot, "scripts", "mutation-oracle.mjs")}` },
    buildCommand: "npm run build",
    mutate,
    coverageAnalysis: "off",
    concurrency: 1,
    timeoutMS: 60000,
    timeoutFactor: 3,
    reporters: ["progress-append-only"],
    ignorePatterns: ["reports", "bench"],
    tempDirName: ".stryker-tmp",
    cleanTempDir: true,
    thresholds: { high: 90, low: 80, break: null },
    logLevel: "warn",
  });
  const results = await stryker.runMutationTest();
  const seconds = (Date.now() - started) / 1000;
  const byId = new Map(results.map((result) => [result.id, result]));
  // Stryker's results count lines and columns from 1, its instrumenter from 0.
  for (const mutant of sample) {
    const result = byId.get(mutant.id);
    if (
      result === undefined ||
      result.mutatorName !== mutant.mutatorName ||
      result.location.start.line !== mutant.location.start.line + 1 ||
      result.location.start.column !== mutant.location.start.column + 1
    ) {
      throw new Error(`${module}: Stryker's mutant ${mutant.id} is not the one sampled`);
    }
  }
  const source = readFileSync(join(packageRoot, module), "utf8");
  const judged = sample.map((mutant) => {
    const result = byId.get(mutant.id);
    return {
      id: mutant.id,
      line: mutant.location.start.line + 1,
      mutator: mutant.mutatorName,
      original: originalText(source, mutant.location),
      replacement: mutant.replacement,
      status: result.status,
    };
  });
  return { module, total: all.length, seconds, judged };
}

function report(outcome, options) {
  const count = (status) => outcome.judged.filter((mutant) => mutant.status === status).length;
  const killed = count("Killed");
  const timeout = count("Timeout");
  const survived = count("Survived");
  const other = outcome.judged.length - killed - timeout - survived;
  const valid = killed + timeout + survived;
  const score = valid === 0 ? 0 : (100 * (killed + timeout)) / valid;
  console.log(`\n== ${outcome.module}`);
  console.log(
    `mutants: ${outcome.total}, judged: ${outcome.judged.length}` +
      (options.sample === undefined ? "" : ` (--sample ${options.sample} --seed ${options.seed})`),
  );
  console.log(
    `killed: ${killed}, timeout: ${timeout}, survived: ${survived}, other (errors): ${other}`,
  );
  console.log(`mutation score: ${score.toFixed(1)}%`);
  console.log(
    `this run: ${outcome.seconds.toFixed(0)} s (${(outcome.seconds / Math.max(1, outcome.judged.length)).toFixed(1)} s per judged mutant, build and dry run included)`,
  );
  for (const mutant of outcome.judged) {
    if (mutant.status === "Survived") {
      console.log(`  SURVIVED ${mutant.id} ${outcome.module}:${mutant.line} ${mutant.mutator}`);
      console.log(`      - ${clip(mutant.original)}`);
      console.log(`      + ${clip(mutant.replacement)}`);
    } else if (mutant.status !== "Killed" && mutant.status !== "Timeout") {
      console.log(`  ${mutant.status} ${mutant.id} ${outcome.module}:${mutant.line}`);
    }
  }
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const command = conformanceCommand(options.cgConformance);
  const reports = join(packageRoot, "reports", "mutation");
  mkdirSync(reports, { recursive: true });
  for (const module of options.modules) {
    const outcome = await mutateModule(module, options, command);
    const file = join(reports, `${module.replace(/^src\//, "").replaceAll("/", ".")}.json`);
    writeFileSync(
      file,
      `${JSON.stringify({ ...options, ...outcome, modules: undefined }, null, 2)}\n`,
    );
    report(outcome, options);
  }
}

process.chdir(packageRoot);
await main();
