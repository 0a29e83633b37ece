// Client files from generators, after the reference's battery (capability_graph_testing
// client_files: damaged_json / check_damaged_json_case, client_toml / check_toml_case): an edit
// re-parses to exactly the old document plus (or minus) our entry, or the command refuses and the
// file stays byte-identical ([CG-MAINT-8], [CG-MAINT-12]). The oracles are independent of the
// editor: JSON.parse on strictly decoded UTF-8 for Cursor, smol-toml for Codex. Cases come from
// seeded generators, so a failure names its seed and replays.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parse as parseToml, TomlDate } from "smol-toml";
import { runMcpInstall, runMcpUninstall } from "../../src/surfaces/cli/mcp-install.js";
import { scaled } from "../scale.js";
import { generator, integer, layout, pick, randomDocument } from "./client-file-generators.js";
import { captureIo, type ReportJson, reportOf } from "./maintenance-helpers.js";
import { ownEntry, project } from "./mcp-install-helpers.js";

// The reference runs 60 damaged files and 80 TOML files as Hypothesis examples; a case here takes
// a few milliseconds, so each test runs 200 (about a fifth of the damaged files still JSON).
const CASES = scaled(200);
const NAME = "capability-graph";

/** Runs a command with --json: exit 0, 1 or 3, one report valid against the schema. */
async function report(
  command: typeof runMcpInstall,
  cwd: string,
  args: string[],
  seed: number,
): Promise<ReportJson> {
  const io = captureIo(cwd);
  const exit = await command([...args, "--json"], io);
  assert.ok([0, 1, 3].includes(exit), `seed ${seed}: exit ${exit}: ${io.out}${io.err}`);
  const result = reportOf(io);
  assert.ok(["ok", "failed", "conflict"].includes(result.status), `seed ${seed}: ${io.out}`);
  return result;
}

/** The outcomes of a test's cases, counted, as one line for the test's diagnostics. */
function tally(outcomes: Map<string, number>): string {
  return [...outcomes.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([outcome, count]) => `${outcome}: ${count}`)
    .join("; ");
}

/** Whether the client file was refused as not valid in its format (its client-config check). */
function refusedAsInvalid(result: ReportJson): boolean {
  return result.checks.some(
    (check) =>
      check.id === "client-config" &&
      check.status === "fail" &&
      check.message.includes("not valid"),
  );
}

function isTable(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date)
  );
}

function count(outcomes: Map<string, number>, outcome: string): void {
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
}

// --- Damaged JSON ------------------------------------------------------------------------------

const DAMAGE = Buffer.from('{}[],:"\\/ \n0e-tfn\x00\xff', "latin1");

/** A valid Cursor file with one to three bytes deleted, inserted or replaced. */
function damagedJson(random: () => number): Buffer {
  const raw = [...Buffer.from(layout(randomDocument(random), random), "utf8")];
  for (let edit = integer(random, 1, 3); edit > 0; edit -= 1) {
    const position = integer(random, 0, raw.length);
    const action = integer(random, 0, 2);
    const byte = pick(random, [...DAMAGE]);
    if (action === 0 && position < raw.length) raw.splice(position, 1);
    else if (action === 1) raw.splice(position, 0, byte);
    else if (position < raw.length) raw[position] = byte;
  }
  return Buffer.from(raw);
}

/** The document of strict JSON in strict UTF-8, or undefined when the bytes are not that. */
function strictJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes));
  } catch {
    return undefined;
  }
}

test(`mcp-install on ${CASES} damaged Cursor files edits what is still JSON and leaves the rest byte-identical`, async (t) => {
  const { cwd, config } = project();
  const entry = ownEntry(config);
  const outcomes = new Map<string, number>();
  for (let seed = 1; seed <= CASES; seed += 1) {
    const raw = damagedJson(generator(seed * 104729));
    const file = path.join(cwd, `cursor-${seed}.json`);
    writeFileSync(file, raw);
    const original = strictJson(raw);
    const args = ["--client", "cursor", "--config-path", file, "--config", config];
    const installed = await report(runMcpInstall, cwd, args, seed);
    const { status } = installed;
    count(outcomes, `${status}, ${original === undefined ? "not JSON" : "JSON"}`);
    assert.ok(
      !(isTable(original) && refusedAsInvalid(installed)),
      `seed ${seed}: a JSON object refused as not JSON`,
    );
    if (status !== "ok") {
      assert.ok(readFileSync(file).equals(raw), `seed ${seed}: ${status} but the file changed`);
      continue;
    }
    assert.ok(isTable(original), `seed ${seed}: what is not a JSON object is never edited`);
    const servers = isTable(original.mcpServers) ? original.mcpServers : {};
    assert.deepEqual(
      strictJson(readFileSync(file)),
      { ...original, mcpServers: { ...servers, [NAME]: entry } },
      `seed ${seed}`,
    );
  }
  t.diagnostic(tally(outcomes));
});

// --- Codex TOML from the grammar ---------------------------------------------------------------

/** The items in a random order. */
function shuffled<T>(random: () => number, items: readonly T[]): T[] {
  const pool = [...items];
  const order: T[] = [];
  while (pool.length > 0) order.push(...pool.splice(integer(random, 0, pool.length - 1), 1));
  return order;
}

/** Up to `most` (by default all) distinct items of `items`, in a random order. */
function distinct<T>(random: () => number, items: readonly T[], most = items.length): T[] {
  return shuffled(random, items).slice(0, integer(random, 0, most));
}

function text(random: () => number, alphabet: readonly string[]): string {
  let result = "";
  for (let length = integer(random, 0, 8); length > 0; length -= 1)
    result += pick(random, alphabet);
  return result;
}

/** Characters of a basic string (no surrogate halves, no control characters). */
const BASIC = ["a", "Z", "0", " ", '"', "\\", "'", "#", "=", "[", "]", "\u00e9", "\u4e2d"];
BASIC.push("\ud83d\ude00", "\u2028", "\u00a0", "\ufeff", "\u{10ffff}");
/** Characters of a literal string: tab and none of \ ' CR LF DEL or other control characters. */
const LITERAL = ["a", "Z", "0", " ", "\t", '"', "#", "=", "[", "{", "\u00e9", "\ud83d\ude00"];

function tomlString(random: () => number): string {
  switch (integer(random, 0, 2)) {
    case 0:
      return JSON.stringify(text(random, BASIC)); // a basic string: JSON's escapes are TOML's
    case 1:
      return `'${text(random, LITERAL)}'`;
    default:
      return pick(random, [
        '"""\nline one\nline "two"\n"""',
        "'''raw\\n'''",
        '"\\U0001F600 \\u00e9"',
      ]);
  }
}

const INT64_EDGES = [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n];

function tomlInteger(random: () => number): string {
  switch (integer(random, 0, 2)) {
    case 0:
      return String(integer(random, -1000, 1000));
    case 1:
      return String(pick(random, INT64_EDGES));
    default: {
      // Any 64-bit two's complement value.
      const high = BigInt(integer(random, 0, 2 ** 32 - 1));
      const low = BigInt(integer(random, 0, 2 ** 32 - 1));
      return String(BigInt.asIntN(64, (high << 32n) | low));
    }
  }
}

function tomlScalar(random: () => number): string {
  switch (integer(random, 0, 4)) {
    case 0:
      return tomlString(random);
    case 1:
      return tomlInteger(random);
    case 2:
      return pick(random, ["0x_dead", "0xdead_beef", "0o755", "0b1010", "1_000", "+17", "-0"]);
    case 3:
      return pick(random, ["3.14", "-1e-3", "inf", "-inf", "nan", "6.626e-34", "1_000.5"]);
    default:
      return pick(random, ["true", "false", "1979-05-27T07:32:00Z", "1979-05-27", "07:32:00"]);
  }
}

function tomlValue(random: () => number, depth = 0): string {
  const kind = integer(random, 0, depth < 2 ? 2 : 0);
  if (kind === 0) return tomlScalar(random);
  if (kind === 1) {
    const items = Array.from({ length: integer(random, 0, 3) }, () => tomlValue(random, depth + 1));
    if (random() < 0.5)
      return `[\n  ${items.join(",\n  # a comment\n  ")}${items.length > 0 ? ",\n]" : "]"}`;
    return `[${items.join(", ")}]`;
  }
  const keys = distinct(random, ["a", "b", "c", '"q k"'], 3);
  return `{ ${keys.map((key) => `${key} = ${tomlValue(random, depth + 1)}`).join(", ")} }`;
}

function tomlPairs(random: () => number, keys: readonly string[]): string {
  return keys
    .map((key) => `${key} = ${tomlValue(random)}${random() < 0.5 ? "  # why" : ""}\n`)
    .join("");
}

/**
 * A Codex config: top-level keys, then tables in any order — [mcp_servers."name"] separated by
 * other tables, arrays of tables, sub-tables — or the servers as an inline table or dotted keys;
 * sometimes our entry (the same, older, or a foreign one under our name); sometimes CRLF.
 */
function clientToml(random: () => number, config: string): string {
  let result = `# Codex settings\n${tomlPairs(random, distinct(random, ["model", "approval_policy", '"odd key"', "n"], 3))}`;
  const ours = ownEntry(config);
  const serverNames = distinct(random, ["files", "docs", "x-1", NAME]);
  const shape = pick(random, ["tables", "inline", "dotted", "none", "array"]);
  if (shape === "inline") {
    const inner = serverNames.map((name) => `${JSON.stringify(name)} = { command = "c" }`);
    result += `mcp_servers = { ${inner.join(", ")} }\n`;
  } else if (shape === "dotted") {
    result += serverNames
      .map((name) => `mcp_servers.${JSON.stringify(name)}.command = "c"\n`)
      .join("");
  }
  const blocks: string[] = [];
  if (shape === "tables") {
    for (const server of serverNames) {
      let body = `command = "c"\nargs = [${tomlString(random)}]\n`;
      if (server === NAME) {
        const variant = integer(random, 0, 2);
        const entry = variant === 0 ? ours : { ...ours, args: [...ours.args.slice(0, -1), "/old"] };
        body =
          variant === 2
            ? 'command = "npx"\n'
            : Object.entries(entry)
                .map(([key, value]) => `${key} = ${JSON.stringify(value)}\n`)
                .join("");
      }
      blocks.push(`[mcp_servers.${JSON.stringify(server)}]\n${body}`);
      if (random() < 0.5)
        blocks.push(`[mcp_servers.${JSON.stringify(server)}.env]\nK = ${tomlString(random)}\n`);
    }
  }
  if (shape === "array") blocks.push('[[mcp_servers]]\ncommand = "c"\n');
  for (const table of distinct(random, ["profiles.fast", "tui", "history"]))
    blocks.push(`[${table}]\n${tomlPairs(random, ["k", "v"])}`);
  for (let index = integer(random, 0, 2); index > 0; index -= 1)
    blocks.push(`[[projects.trusted]]\n${tomlPairs(random, ["path"])}`);
  const separator = pick(random, ["\n", "", "\n# between\n"]);
  result += separator + shuffled(random, blocks).join(separator);
  return random() < 0.8 ? result : result.replaceAll("\n", "\r\n");
}

type Toml = Record<string, unknown>;

/** The document of a TOML text (every 64-bit integer read, as a BigInt past 2^53), else undefined. */
function tomlDocument(source: string): Toml | undefined {
  try {
    return parseToml(source, { integersAsBigInt: "asNeeded" });
  } catch {
    return undefined;
  }
}

/**
 * Equal TOML values: tables with the same keys, arrays item by item, NaN equal to NaN, dates by
 * kind and text, and otherwise the same type and value. (An integer and a float of the same value
 * are both a number here, unless the integer is past 2^53.)
 */
function sameToml(left: unknown, right: unknown): boolean {
  if (isTable(left) && isTable(right)) {
    const keys = Object.keys(left);
    return (
      keys.length === Object.keys(right).length &&
      keys.every((key) => Object.hasOwn(right, key) && sameToml(left[key], right[key]))
    );
  }
  if (Array.isArray(left) && Array.isArray(right))
    return (
      left.length === right.length && left.every((item, index) => sameToml(item, right[index]))
    );
  if (left instanceof TomlDate && right instanceof TomlDate)
    return left.toISOString() === right.toISOString();
  if (typeof left === "number" && typeof right === "number" && Number.isNaN(left))
    return Number.isNaN(right);
  return typeof left === typeof right && !isTable(left) && !Array.isArray(left) && left === right;
}

/** The document with mcp_servers[NAME] set to `value` (removed when undefined), an empty mcp_servers absent. */
function tomlWith(document: Toml, value: unknown): Toml {
  const servers: Toml = { ...(isTable(document.mcp_servers) ? document.mcp_servers : {}) };
  if (value === undefined) delete servers[NAME];
  else servers[NAME] = value;
  return withoutEmptyServers({ ...document, mcp_servers: servers });
}

function withoutEmptyServers(document: Toml): Toml {
  const { mcp_servers: servers, ...rest } = document;
  return isTable(servers) && Object.keys(servers).length === 0 ? rest : document;
}

function commentLines(source: string): string[] {
  return lines(source).filter((line) => line.trimStart().startsWith("#"));
}

function lines(source: string): string[] {
  return source.split(/\r\n|\n|\r/);
}

test(`mcp-install --force then mcp-uninstall on ${CASES} Codex files from the TOML grammar change only our entry`, async (t) => {
  const { cwd, config } = project();
  const entry = ownEntry(config);
  const outcomes = new Map<string, number>();
  for (let seed = 1; seed <= CASES; seed += 1) {
    const source = clientToml(generator(seed * 7727), config);
    const file = path.join(cwd, `config-${seed}.toml`);
    writeFileSync(file, source);
    const original = tomlDocument(source);
    const args = ["--client", "codex", "--config-path", file];
    const installed = await report(
      runMcpInstall,
      cwd,
      [...args, "--config", config, "--force"],
      seed,
    );
    count(outcomes, `${installed.status}, ${original === undefined ? "not TOML" : "TOML"}`);
    assert.ok(
      !(original !== undefined && refusedAsInvalid(installed)),
      `seed ${seed}: valid TOML refused as not TOML`,
    );
    const after = readFileSync(file, "utf8");
    if (installed.status !== "ok") {
      assert.ok(
        readFileSync(file).equals(Buffer.from(source, "utf8")),
        `seed ${seed}: ${installed.status} but the file changed`,
      );
      continue;
    }
    assert.ok(original !== undefined, `seed ${seed}: what is not TOML is never edited`);
    const parsed = tomlDocument(after);
    assert.ok(
      parsed !== undefined && sameToml(withoutEmptyServers(parsed), tomlWith(original, entry)),
      `seed ${seed}: installed\n${after}`,
    );
    const kept = new Set(lines(after));
    for (const comment of commentLines(source))
      assert.ok(
        kept.has(comment),
        `seed ${seed}: the comment line ${JSON.stringify(comment)} is kept`,
      );

    const removed = await report(runMcpUninstall, cwd, args, seed);
    const final = readFileSync(file, "utf8");
    if (removed.status !== "ok") {
      assert.equal(final, after, `seed ${seed}: uninstall ${removed.status} but the file changed`);
      continue;
    }
    const back = tomlDocument(final);
    assert.ok(
      back !== undefined && sameToml(withoutEmptyServers(back), tomlWith(original, undefined)),
      `seed ${seed}: uninstalled\n${final}`,
    );
  }
  t.diagnostic(tally(outcomes));
});
