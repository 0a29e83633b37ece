// The long versions of the TypeScript reliability battery (the `stress-ts` nox session), beside
// the reference's python/capability-graph/scripts/stress.py and with its section names where a section applies.
//
// Each section is a set of the suite's own battery tests (compiled, under dist/test/) run with
// CG_STRESS_SCALE=N, which multiplies their loops and property runs (test/scale.ts): the same
// generators, seeds and checks as the default CI run, on N times more cases, so a failure found
// here replays in `npm test` at the same seed. Prints each section's figures, then a summary;
// exit 1 when any test failed or a section did not finish within its bound.
//
//   node scripts/stress.mjs                          every section, scale 10
//   node scripts/stress.mjs --scale 40 --sections documents,reload
//   node scripts/stress.mjs --json figures.json      also write the figures as JSON
//
// Sections of python/capability-graph/scripts/stress.py that have no TypeScript counterpart: `twin` (there is no blocking
// twin in TypeScript) and `memory` / `leakage`, whose TypeScript checks are single-case tests of
// the default suite (hostile files, openai and documents tests), not loops.
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_ROOT = path.resolve(fileURLToPath(import.meta.url), "..", "..");
const TESTS = path.join(PACKAGE_ROOT, "dist", "test");

/** Section name -> what it attacks, the test files (under dist/test) and a test-name filter. */
const SECTIONS = {
  fuzz: {
    what: "generated requests and their JSON texts are the same request (CG-CONV-17)",
    files: ["properties/request-text.test.js"],
  },
  cursors: {
    what: "edited, forged and re-signed cursors are refused unless issued (CG-CUR-*)",
    files: ["properties/cursor.test.js"],
  },
  client_files: {
    what: "mcp-install/mcp-uninstall on generated Cursor, VS Code, damaged JSON and Codex TOML files (CG-MAINT-8, CG-MAINT-12)",
    files: ["cli/mcp-install-property.test.js", "cli/client-files-generated.test.js"],
  },
  frames: {
    what: "MCP long lines, a client that stops reading, concurrent matches (fixed cases)",
    files: ["mcp-streams.test.js"],
  },
  reload: {
    what: "queries from many tasks during valid and invalid reloads (CG-LIFE-1, CG-LIFE-3..5)",
    files: ["storms.test.js"],
    pattern: "reload storm",
  },
  close: {
    what: "close during sleeping, stubborn and codex matches (CG-LIFE-8, CG-LIFE-9, CG-MODEL-4)",
    files: ["storms.test.js"],
    pattern: "close",
  },
  ticker: {
    what: "the event loop keeps turning through every executor past its deadline (CG-MODEL-3)",
    files: ["responsiveness.test.js"],
  },
  documents: {
    what: "reads while another process swaps links, files and folders (CG-DOC-3, CG-DOC-15)",
    files: ["document-races.test.js"],
  },
  hostile: {
    what: "a fifo, device, folder or sparse file for every path; deep client files (fixed cases)",
    files: ["hostile-files.test.js"],
  },
};

function parseArguments(argv) {
  const options = { scale: 10, sections: Object.keys(SECTIONS), json: null, timeout: 3600 };
  for (let index = 0; index < argv.length; index += 1) {
    const [name, value] = [argv[index], argv[index + 1]];
    if (name === "--scale" && /^[1-9][0-9]{0,3}$/.test(value ?? "")) options.scale = Number(value);
    else if (name === "--sections" && value) options.sections = value.split(",");
    else if (name === "--json" && value) options.json = value;
    else if (name === "--timeout" && /^[1-9][0-9]*$/.test(value ?? ""))
      options.timeout = Number(value);
    else {
      console.error(`stress: unknown or malformed argument ${JSON.stringify(name)}`);
      console.error(
        "usage: stress.mjs [--scale 1..9999] [--sections a,b] [--json FILE] [--timeout S]",
      );
      process.exit(2);
    }
    index += 1;
  }
  const unknown = options.sections.filter((name) => !(name in SECTIONS));
  if (unknown.length > 0) {
    console.error(
      `stress: unknown section(s) ${unknown.join(", ")}; known: ${Object.keys(SECTIONS).join(", ")}`,
    );
    process.exit(2);
  }
  return options;
}

/** Runs one section's tests with the TAP reporter; resolves with its figures. */
function runSection(name, section, options) {
  const files = section.files.map((file) => path.join(TESTS, file));
  for (const file of files) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  }
  const argv = ["--test", "--test-concurrency=1", "--test-reporter=tap"];
  if (section.pattern) argv.push(`--test-name-pattern=${section.pattern}`);
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...argv, ...files], {
      cwd: PACKAGE_ROOT,
      env: { ...process.env, CG_STRESS_SCALE: String(options.scale) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = [];
    child.stdout.on("data", (chunk) => output.push(chunk));
    child.stderr.on("data", (chunk) => output.push(chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeout * 1000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const text = Buffer.concat(output).toString("utf8");
      const count = (key) => Number(new RegExp(`^# ${key} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
      const failures = [...text.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((match) => match[1]);
      resolve({
        section: name,
        what: section.what,
        scale: options.scale,
        tests: count("pass") + count("fail") + count("cancelled"),
        passed: count("pass"),
        failed: count("fail") + count("cancelled"),
        seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
        exit: signal ? `killed (${signal}) after ${options.timeout} s` : code,
        failures,
        tail: code === 0 ? "" : text.slice(-4000),
      });
    });
  });
}

const options = parseArguments(process.argv.slice(2));
const figures = [];
for (const name of options.sections) {
  const result = await runSection(name, SECTIONS[name], options);
  figures.push(result);
  console.log(`== ${name}: ${result.what}`);
  for (const key of ["scale", "tests", "passed", "failed", "seconds", "exit"]) {
    console.log(`  ${key}: ${result[key]}`);
  }
  for (const failure of result.failures) console.log(`  FAILED: ${failure}`);
  if (result.tail) console.log(result.tail);
}
const bad = figures.filter(
  (result) => result.exit !== 0 || result.failed > 0 || result.tests === 0,
);
const total = (key) => figures.reduce((sum, result) => sum + result[key], 0);
console.log(
  `== summary: ${figures.length} sections at scale ${options.scale}, ${total("tests")} tests, ` +
    `${total("failed")} failed, ${total("seconds").toFixed(1)} s; ` +
    (bad.length === 0 ? "all held" : `NOT HELD: ${bad.map((result) => result.section).join(", ")}`),
);
if (options.json) writeFileSync(options.json, `${JSON.stringify(figures, null, 2)}\n`);
process.exit(bad.length === 0 ? 0 : 1);
