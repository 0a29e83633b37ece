// Running the suite's SDK-surface vectors against CapabilityGraph, as acceptance tests of the core
// (spec/conformance/README.md says how a vector is read). This is a test, not the conformance
// driver: the driver of the four surfaces lives with the surfaces.
import {
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import * as validators from "../../src/_generated/contract-validators.js";
import { OPERATIONS } from "../../src/_generated/operations.js";
import { GraphError } from "../../src/core/errors.js";
import { CapabilityGraph } from "../../src/core/graph.js";
import { memberText } from "../../src/core/json/spans.js";
import { parseJsonText } from "../../src/core/json/text.js";
import { conformanceRoot } from "../support.js";

export interface Vector {
  readonly id: string;
  readonly fixture: string;
  readonly surfaces: readonly string[];
  readonly config?: Record<string, unknown>;
  readonly open?: true;
  /** Without `arguments` the call carries none: the SDK receives {} ([CG-MCP-2]). */
  readonly call?: { readonly tool: string; readonly arguments?: unknown };
  readonly steps?: readonly Step[];
  readonly expect?: { readonly error?: Record<string, unknown>; readonly result?: unknown };
  readonly forbid?: readonly string[];
  /** A scripted endpoint the harness serves ([CG-MODEL-22]); this in-process runner has none. */
  readonly endpoint?: Record<string, unknown>;
}

interface Step {
  readonly op: string;
  readonly tool?: string;
  readonly arguments?: unknown;
  readonly handle?: string;
  readonly providers?: string[];
  readonly path?: string;
  readonly text?: string;
  readonly json?: unknown;
  readonly ms?: number;
  readonly expect?: { readonly error?: Record<string, unknown>; readonly result?: unknown };
}

/** Every vector file of the capability-graph suite. */
export function loadVectors(): Array<{ file: string; vector: Vector }> {
  const root = join(conformanceRoot, "vectors", "capability-graph");
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".json")) files.push(path);
    }
  };
  walk(root);
  return files.sort().map((file) => {
    const text = readFileSync(file, "utf8");
    return { file: relative(root, file), vector: exactCall(text, JSON.parse(text) as Vector) };
  });
}

/**
 * The vector with a call's arguments as their JSON text when JSON.parse rounded an integer of
 * them (beyond 2^53): `call` reads a text exactly ([CG-CONV-17]), as the conformance driver does.
 */
function exactCall(text: string, vector: Vector): Vector {
  const call = vector.call;
  if (call === undefined || !("arguments" in call)) return vector;
  const argumentsText = memberText(text, ["call", "arguments"]);
  if (argumentsText === undefined) return vector;
  const parsed = parseJsonText(argumentsText);
  if (!parsed.ok || parsed.bigIntegers.size === 0) return vector;
  return { ...vector, call: { ...call, arguments: argumentsText } };
}

/** RFC 7386 JSON Merge Patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target !== null && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** The working folder of a vector: the fixture copied, links created, configuration written. */
export function materialize(vector: Vector): { folder: string; configPath: string } {
  const fixture = join(conformanceRoot, "fixtures", vector.fixture);
  const folder = mkdtempSync(join(tmpdir(), "cg-vector-"));
  for (const entry of readdirSync(fixture)) {
    if (entry === "fixture.json" || entry === "README.md") continue;
    cpSync(join(fixture, entry), join(folder, entry), { recursive: true, verbatimSymlinks: true });
  }
  const links = join(fixture, "fixture.json");
  if (existsSync(links)) {
    const spec = JSON.parse(readFileSync(links, "utf8")) as {
      symlinks?: Record<string, string>;
      hardlinks?: Record<string, string>;
    };
    for (const [path, target] of Object.entries(spec.symlinks ?? {})) {
      mkdirSync(dirname(join(folder, path)), { recursive: true });
      symlinkSync(target, join(folder, path));
    }
    for (const [path, existing] of Object.entries(spec.hardlinks ?? {})) {
      linkSync(join(folder, existing), join(folder, path));
    }
  }
  const configPath = join(folder, "capability-graph.json");
  if (vector.config !== undefined) {
    const base = existsSync(join(fixture, "capability-graph.json"))
      ? JSON.parse(readFileSync(join(fixture, "capability-graph.json"), "utf8"))
      : {};
    writeFileSync(configPath, JSON.stringify(mergePatch(base, vector.config)));
  }
  return { folder, configPath };
}

type Observation = { readonly error: Record<string, unknown> } | { readonly result: unknown };

/** Every result validates against its tool's result schema, every error object against error.schema.json ([CG-CONV-10]). */
function checkContractShape(tool: string | undefined, observed: Observation): void {
  if ("error" in observed) {
    if (!validators.validateError(observed.error))
      throw new Mismatch(`error object violates error.schema.json`);
    return;
  }
  const operation = OPERATIONS.find((candidate) => candidate.tool === tool);
  if (operation === undefined) return;
  const name = `validate${operation.result
    .replace(/\.schema\.json$/, "")
    .split("-")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("")}`;
  const validate = (validators as unknown as Record<string, validators.ContractValidator>)[name];
  if (validate === undefined) throw new Mismatch(`no validator ${name}`);
  if (!validate(observed.result)) {
    throw new Mismatch(
      `${tool} result violates ${operation.result}: ${JSON.stringify(validate.errors?.[0])}`,
    );
  }
}

async function observe(action: () => Promise<unknown>): Promise<Observation> {
  try {
    const result = await action();
    return { result: result === undefined ? null : JSON.parse(JSON.stringify(result)) };
  } catch (error) {
    if (error instanceof GraphError)
      return { error: error.toJSON() as unknown as Record<string, unknown> };
    throw error;
  }
}

class Mismatch extends Error {}

/** The Pattern matchers of vector.schema.json. */
function matches(
  pattern: unknown,
  observed: unknown,
  captures: Map<string, unknown>,
  where: string,
  exact = false,
): void {
  const fail = (why: string) => {
    throw new Mismatch(
      `${where}: ${why} (expected ${JSON.stringify(pattern)}, observed ${JSON.stringify(observed)?.slice(0, 400)})`,
    );
  };
  if (pattern !== null && typeof pattern === "object" && !Array.isArray(pattern)) {
    const keys = Object.keys(pattern);
    const only = keys.length === 1 ? (keys[0] as string) : undefined;
    const argument = only === undefined ? undefined : (pattern as Record<string, unknown>)[only];
    if (only?.startsWith("$")) {
      switch (only) {
        case "$absent":
          if (observed !== undefined) fail("present");
          return;
        case "$pattern":
          if (typeof observed !== "string" || !new RegExp(argument as string, "u").test(observed))
            fail("pattern");
          return;
        case "$type": {
          const type = Array.isArray(observed)
            ? "array"
            : observed === null
              ? "null"
              : typeof observed;
          const ok =
            argument === type ||
            (argument === "integer" && typeof observed === "number" && Number.isInteger(observed));
          if (!ok) fail("type");
          return;
        }
        case "$exact":
          matches(argument, observed, captures, where, true);
          return;
        case "$length":
          if (
            (typeof observed !== "string" && !Array.isArray(observed)) ||
            ([...(observed as string)].length !== argument &&
              (observed as unknown[]).length !== argument)
          )
            fail("length");
          return;
        case "$contains": {
          if (!Array.isArray(observed)) fail("not an array");
          const found = (observed as unknown[]).some((item) => {
            try {
              matches(argument, item, captures, where);
              return true;
            } catch {
              return false;
            }
          });
          if (!found) fail("contains");
          return;
        }
        case "$capture":
          captures.set(argument as string, observed);
          return;
        case "$same":
          if (JSON.stringify(captures.get(argument as string)) !== JSON.stringify(observed))
            fail("not the same");
          return;
        case "$differs":
          if (JSON.stringify(captures.get(argument as string)) === JSON.stringify(observed))
            fail("not different");
          return;
        default:
          fail(`unknown matcher ${only}`);
      }
    }
    if (observed === null || typeof observed !== "object" || Array.isArray(observed))
      fail("not an object");
    for (const [key, value] of Object.entries(pattern)) {
      matches(
        value,
        (observed as Record<string, unknown>)[key],
        captures,
        `${where}/${key}`,
        exact,
      );
    }
    if (exact) {
      const extra = Object.keys(observed as object).filter((key) => !Object.hasOwn(pattern, key));
      if (extra.length > 0) fail(`extra members ${extra.join(", ")}`);
    }
    return;
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(observed) || observed.length !== pattern.length) fail("array length");
    for (const [index, item] of pattern.entries()) {
      matches(item, (observed as unknown[])[index], captures, `${where}/${index}`, exact);
    }
    return;
  }
  if (pattern !== observed) fail("value");
}

function expectOutcome(
  expected: { error?: Record<string, unknown>; result?: unknown } | undefined,
  observed: Observation,
  captures: Map<string, unknown>,
  where: string,
): void {
  if (expected === undefined) {
    if ("error" in observed)
      throw new Mismatch(`${where}: unexpected error ${JSON.stringify(observed.error)}`);
    return;
  }
  if (expected.error !== undefined) {
    if (!("error" in observed))
      throw new Mismatch(
        `${where}: expected an error, got ${JSON.stringify(observed.result)?.slice(0, 300)}`,
      );
    const want = expected.error;
    const got = observed.error;
    for (const key of ["code", "phase", "nextAction"]) {
      if (want[key] !== got[key])
        throw new Mismatch(
          `${where}: ${key} ${JSON.stringify(got)} expected ${JSON.stringify(want)}`,
        );
    }
    if (want.message !== undefined && want.message !== got.message) {
      throw new Mismatch(
        `${where}: message ${JSON.stringify(got.message)} expected ${JSON.stringify(want.message)}`,
      );
    }
    return;
  }
  if (!("result" in observed))
    throw new Mismatch(`${where}: expected a result, got ${JSON.stringify(observed.error)}`);
  matches(expected.result, observed.result, captures, where);
}

const BASE64URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * `{"$captured": NAME}`, or an edited copy of a captured string (spec/conformance/README.md):
 * `"$append": TEXT` adds TEXT; `"$setUnusedBits": true` sets the unused low bits of the last
 * character of an unpadded base64url text (the same bytes, another text).
 */
function capturedValue(reference: Record<string, unknown>, captures: Map<string, unknown>) {
  const value = captures.get(reference.$captured as string);
  if (typeof reference.$append === "string") return `${value as string}${reference.$append}`;
  if (reference.$setUnusedBits === true) {
    const text = value as string;
    const unused = { 2: 0b1111, 3: 0b11 }[text.length % 4];
    if (unused === undefined) throw new Mismatch(`${text} has no unused bits to set`);
    const last = BASE64URL_ALPHABET.indexOf(text.at(-1) as string) | unused;
    return `${text.slice(0, -1)}${BASE64URL_ALPHABET[last]}`;
  }
  return value;
}

const CAPTURED_EDITS = new Set(["$append", "$setUnusedBits"]);

function replaceCaptured(value: unknown, captures: Map<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => replaceCaptured(item, captures));
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    if (
      keys.includes("$captured") &&
      keys.every((key) => key === "$captured" || CAPTURED_EDITS.has(key))
    )
      return capturedValue(value as Record<string, unknown>, captures);
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, replaceCaptured(item, captures)]),
    );
  }
  return value;
}

/** Run one vector on the SDK surface; throws Mismatch with the first difference. */
export async function runVector(vector: Vector): Promise<void> {
  const { folder, configPath } = materialize(vector);
  const emitted: string[] = [];
  let graph: CapabilityGraph | undefined;
  try {
    if (vector.open === true) {
      const observed = await observe(async () => {
        graph = await CapabilityGraph.open(configPath);
        return null;
      });
      emitted.push(JSON.stringify(observed));
      checkContractShape(undefined, observed);
      expectOutcome(vector.expect, observed, new Map(), "open");
    } else if (vector.call !== undefined) {
      const call = vector.call;
      const observed = await observe(async () => {
        graph = await CapabilityGraph.open(configPath);
        return graph.call(call.tool, "arguments" in call ? call.arguments : {});
      });
      emitted.push(JSON.stringify(observed));
      checkContractShape(call.tool, observed);
      expectOutcome(vector.expect, observed, new Map(), "call");
    } else if (vector.steps !== undefined) {
      const captures = new Map<string, unknown>();
      const handles = new Map<string, { promise: Promise<Observation>; cancel: AbortController }>();
      const toolOf = new Map<string, string>();
      for (const [index, step] of vector.steps.entries()) {
        const where = `step ${index} (${step.op})`;
        let observed: Observation | undefined;
        switch (step.op) {
          case "open":
            await graph?.close();
            observed = await observe(async () => {
              graph = await CapabilityGraph.open(configPath);
              return null;
            });
            break;
          case "call": {
            const args = replaceCaptured(step.arguments, captures);
            const current = graph as CapabilityGraph;
            if (step.handle !== undefined) {
              toolOf.set(step.handle, step.tool as string);
              const cancel = new AbortController();
              handles.set(step.handle, {
                promise: observe(() =>
                  current.call(step.tool as string, args, { signal: cancel.signal }),
                ),
                cancel,
              });
              continue;
            }
            observed = await observe(() => current.call(step.tool as string, args));
            break;
          }
          case "await":
            observed = await (handles.get(step.handle as string)?.promise as Promise<Observation>);
            break;
          case "cancel":
            handles.get(step.handle as string)?.cancel.abort();
            observed = { result: null };
            break;
          case "reload": {
            const current = graph as CapabilityGraph;
            observed = await observe(() =>
              current.reload(
                step.providers === undefined ? undefined : { providers: step.providers },
              ),
            );
            break;
          }
          case "close":
            observed = await observe(async () => {
              await graph?.close();
              return null;
            });
            break;
          case "tools":
            continue;
          case "writeFile":
            writeFileSync(
              join(folder, step.path as string),
              step.text ?? JSON.stringify(step.json),
            );
            continue;
          case "removeFile":
            rmSync(join(folder, step.path as string));
            continue;
          case "sleep":
            await new Promise((resolve) => setTimeout(resolve, step.ms));
            continue;
          default:
            throw new Mismatch(`${where}: unknown op`);
        }
        emitted.push(JSON.stringify(observed));
        if (step.op === "call" || step.op === "await")
          checkContractShape(step.tool ?? toolOf.get(step.handle ?? ""), observed);
        if (
          step.op === "reload" &&
          "result" in observed &&
          !validators.validateReloadResult(observed.result)
        ) {
          throw new Mismatch(`${where}: reload result violates reload-result.schema.json`);
        }
        expectOutcome(step.expect, observed, captures, where);
      }
    }
    for (const forbidden of [...(vector.forbid ?? []), folder]) {
      for (const text of emitted) {
        if (text.includes(forbidden))
          throw new Mismatch(`forbidden text ${JSON.stringify(forbidden)} emitted`);
      }
    }
  } finally {
    await graph?.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * Whether a vector runs on the SDK surface and has an action this runner performs. A vector with a
 * scripted endpoint needs the harness's loopback server: `cg-conformance run` runs it (the
 * typescript nox session does, against this implementation).
 */
export function runsOnSdk(vector: Vector): boolean {
  return (
    vector.surfaces.includes("sdk") &&
    vector.endpoint === undefined &&
    (vector.open === true || vector.call !== undefined || vector.steps !== undefined) &&
    !holdsUnsafeInteger(vector.config)
  );
}

/**
 * Whether a configuration patch holds an integer JSON.parse cannot keep (a 401-digit literal is
 * Infinity, [CG-CONV-13]): JSON.stringify would write null, not the vector's configuration. The
 * conformance harness, which keeps every digit, runs such a vector.
 */
function holdsUnsafeInteger(value: unknown): boolean {
  if (typeof value === "number") return !Number.isFinite(value);
  if (value === null || typeof value !== "object") return false;
  return Object.values(value).some(holdsUnsafeInteger);
}
