// What the maintenance commands `init`, `mcp-install` and `mcp-uninstall` share (spec section
// 12): the report and its exit status ([CG-MAINT-1], [CG-MAINT-2]), the way they talk to the
// dispatcher, a small option parser whose usage errors never repeat what the caller typed
// ([CG-CLI-10]), and atomic file writes that never destroy a user's file.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { asksForHelp, didYouMean, isOptionLike } from "../surfaces/cli/arguments.js";

/** The program name used in usage texts and text reports. */
export const PROGRAM = "capability-graph";

/**
 * What a maintenance command receives from the dispatcher. `stdout` and `stderr` take whole
 * texts; an error they throw (a failed stdout) propagates to the dispatcher unchanged.
 */
export interface MaintenanceIo {
  stdout(text: string): Promise<void> | void;
  stderr(text: string): Promise<void> | void;
  /** The working folder relative paths resolve against. */
  cwd: string;
  /** The environment (`CAPABILITY_GRAPH_CONFIG`, `HOME`, `CODEX_HOME`, ...). */
  env: Readonly<Record<string, string | undefined>>;
}

export type ReportStatus = "planned" | "ok" | "conflict" | "failed";
export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface Check {
  id: string;
  status: CheckStatus;
  message: string;
}

export interface Report {
  status: ReportStatus;
  checks: Check[];
  warnings: string[];
}

/** [CG-MAINT-2]: ok and planned exit 0, failed 1, conflict 3. */
export const REPORT_EXIT: Readonly<Record<ReportStatus, number>> = {
  planned: 0,
  ok: 0,
  failed: 1,
  conflict: 3,
};

export const USAGE_EXIT = 2;

const MARKS: Readonly<Record<CheckStatus, string>> = {
  ok: "ok  ",
  warn: "warn",
  fail: "FAIL",
  skip: "skip",
};

/** The longest report text ([CG-MAINT-1]). */
const MAX_TEXT = 1024;

/**
 * One line of printable text of 1..1024 characters: control characters (a path may hold a line
 * feed) become U+FFFD, and an over-long text (a very deep path) is shortened with an ellipsis.
 */
export function reportText(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters replaced.
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "\ufffd");
  const characters = [...line];
  if (characters.length === 0) return "-";
  if (characters.length <= MAX_TEXT) return line;
  return `${characters.slice(0, MAX_TEXT - 1).join("")}\u2026`;
}

export function check(id: string, status: CheckStatus, message: string): Check {
  return { id, status, message: reportText(message) };
}

/** Print the report (JSON with `--json`, else text) on stdout and return its exit status. */
export async function emitReport(
  command: string,
  report: Report,
  json: boolean,
  io: MaintenanceIo,
): Promise<number> {
  const warnings = report.warnings.map(reportText);
  if (json) {
    const { status, checks } = report;
    await io.stdout(`${JSON.stringify({ status, checks, warnings })}\n`);
  } else {
    const lines = [`${PROGRAM} ${command}: ${report.status}`];
    for (const item of report.checks)
      lines.push(`  [${MARKS[item.status]}] ${item.id}: ${item.message}`);
    for (const warning of warnings) lines.push(`  warning: ${warning}`);
    await io.stdout(`${lines.join("\n")}\n`);
  }
  return REPORT_EXIT[report.status];
}

// ---------------------------------------------------------------------------------------------
// Options

export interface OptionSpec {
  readonly flag: string;
  /** The value's name in the synopsis; absent for a switch. */
  readonly value?: string;
  readonly repeatable?: boolean;
  readonly required?: boolean;
  /** The allowed values, named in a usage error (they are the CLI's own names). */
  readonly choices?: readonly string[];
  /** A rule the value must follow, described without repeating the value. */
  readonly valid?: { readonly test: (value: string) => boolean; readonly rule: string };
  readonly help: string;
}

export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly options: readonly OptionSpec[];
  /** The optional positional argument's name, if the command takes one. */
  readonly positional?: { readonly name: string; readonly help: string };
  readonly examples: readonly string[];
}

export interface ParsedArgs {
  readonly values: ReadonlyMap<string, readonly string[]>;
  readonly switches: ReadonlySet<string>;
  readonly positional: string | undefined;
  readonly help: boolean;
}

/** A usage error: the message names only the CLI's own words, never the caller's text. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export function parseArgs(spec: CommandSpec, args: readonly string[]): ParsedArgs {
  const values = new Map<string, string[]>();
  const switches = new Set<string>();
  let positional: string | undefined;
  // Help wins over every usage error of the command line ([CG-CLI-17]).
  if (asksForHelp(args)) return { values, switches, positional, help: true };
  let onlyPositionals = false;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? "";
    if (!onlyPositionals && arg === "--") {
      onlyPositionals = true;
      continue;
    }
    if (!onlyPositionals && isOptionLike(arg)) {
      // The grammar of [CG-CLI-15] and [CG-CLI-16], as for every command.
      const equals = arg.indexOf("=");
      const flag = equals === -1 ? arg : arg.slice(0, equals);
      const option = spec.options.find((candidate) => candidate.flag === flag);
      if (option === undefined) {
        const flags = ["--help", ...spec.options.map((candidate) => candidate.flag)];
        throw new UsageError(
          `unrecognized option${didYouMean(flag, flags)}; the options are ${optionNames(spec)}`,
        );
      }
      if ((values.has(flag) || switches.has(flag)) && option.repeatable !== true) {
        throw new UsageError(`option ${flag} may be given once`);
      }
      if (option.value === undefined) {
        if (equals !== -1) throw new UsageError(`option ${flag} takes no value`);
        switches.add(flag);
        continue;
      }
      let value: string | undefined;
      if (equals !== -1) value = arg.slice(equals + 1);
      else {
        const next = args[index + 1];
        if (next !== undefined && !isOptionLike(next)) {
          value = next;
          index += 1;
        }
      }
      if (value === undefined)
        throw new UsageError(`option ${flag} expects a value ${option.value}`);
      if (option.choices !== undefined && !option.choices.includes(value)) {
        throw new UsageError(
          `option ${flag}: unknown choice${didYouMean(value, option.choices)}; the choices are ${option.choices.join(", ")}`,
        );
      }
      if (option.valid !== undefined && !option.valid.test(value)) {
        throw new UsageError(`option ${flag}: ${option.valid.rule}`);
      }
      values.set(flag, [...(values.get(flag) ?? []), value]);
      continue;
    }
    if (spec.positional === undefined || positional !== undefined) {
      throw new UsageError("unexpected argument");
    }
    positional = arg;
  }
  for (const option of spec.options) {
    if (option.required === true && !values.has(option.flag)) {
      throw new UsageError(`the option ${option.flag} is required`);
    }
  }
  return { values, switches, positional, help: false };
}

function optionNames(spec: CommandSpec): string {
  return ["-h", ...spec.options.map((option) => option.flag)].join(", ");
}

export function synopsis(spec: CommandSpec): string {
  const parts = [`usage: ${PROGRAM} ${spec.name} [-h]`];
  for (const option of spec.options) {
    const text = option.value === undefined ? option.flag : `${option.flag} ${option.value}`;
    parts.push(option.required === true ? text : `[${text}]`);
  }
  if (spec.positional !== undefined) parts.push(`[${spec.positional.name}]`);
  return parts.join(" ");
}

export function helpText(spec: CommandSpec): string {
  const lines = [synopsis(spec), "", spec.summary, ""];
  if (spec.positional !== undefined) {
    lines.push(
      "positional arguments:",
      `  ${spec.positional.name.padEnd(20)} ${spec.positional.help}`,
      "",
    );
  }
  lines.push("options:", `  ${"-h, --help".padEnd(20)} show this help message and exit`);
  for (const option of spec.options) {
    const text = option.value === undefined ? option.flag : `${option.flag} ${option.value}`;
    lines.push(`  ${text.padEnd(20)} ${option.help}`);
  }
  lines.push("", "examples:", ...spec.examples.map((example) => `  ${PROGRAM} ${example}`));
  return `${lines.join("\n")}\n`;
}

/**
 * Parse the arguments, or print help (exit 0) or a usage error (exit 2, usage on stderr,
 * nothing on stdout, [CG-CLI-3]). Returns the parsed arguments or the exit status.
 */
export async function parseOrExit(
  spec: CommandSpec,
  args: readonly string[],
  io: MaintenanceIo,
): Promise<ParsedArgs | number> {
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs(spec, args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    await io.stderr(`${synopsis(spec)}\n${PROGRAM} ${spec.name}: error: ${error.message}\n`);
    return USAGE_EXIT;
  }
  if (parsed.help) {
    await io.stdout(helpText(spec));
    return 0;
  }
  return parsed;
}

/** The graph configuration of [CG-CLI-1]: --config, else $CAPABILITY_GRAPH_CONFIG, else ./capability-graph.json. */
export function graphConfigPath(option: string | undefined, io: MaintenanceIo): string {
  const chosen = option ?? nonEmpty(io.env.CAPABILITY_GRAPH_CONFIG) ?? "capability-graph.json";
  return path.resolve(io.cwd, chosen);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

// ---------------------------------------------------------------------------------------------
// Files

/**
 * Write `content` to `file` atomically: a temporary file in the same folder, flushed, given
 * `mode`, then renamed over the target, so a reader sees the old file or the new one and never a
 * part. With `exclusive`, an existing target is left alone and the write fails with EEXIST
 * (a file that appeared since it was checked is never replaced).
 */
export async function writeAtomically(
  file: string,
  content: string,
  options: { mode?: number; exclusive?: boolean } = {},
): Promise<void> {
  const folder = path.dirname(file);
  const temporary = path.join(
    folder,
    `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`,
  );
  const handle = await fs.open(temporary, "wx", options.mode ?? 0o644);
  try {
    await handle.writeFile(content, "utf8");
    if (options.mode !== undefined) await handle.chmod(options.mode);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await fs.rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  try {
    if (options.exclusive === true) {
      // link() fails when the target exists, unlike rename(): no file that appeared meanwhile is lost.
      await fs.link(temporary, file);
      await fs.rm(temporary, { force: true });
    } else {
      await fs.rename(temporary, file);
    }
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}

/** How long an edit waits for another edit's lock before it reports a conflict ([CG-MAINT-22]). */
export const EDIT_LOCK_WAIT_MS = 5000;

/** A held edit lock: the file `FILE.lock`, removed by `release`. */
export interface EditLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Take the exclusive edit lock of `file` ([CG-MAINT-22]): `FILE.lock` beside the real file,
 * created exclusively; while it exists it is waited for up to EDIT_LOCK_WAIT_MS, then
 * `{ busy }` names it. Undefined when there is nothing to lock (no folder yet: a new file is
 * created exclusively anyway) or the lock cannot be created (the edit's own write fails alike).
 */
export async function takeEditLock(file: string): Promise<EditLock | { busy: string } | undefined> {
  const real = await fs.realpath(file).catch(() => file);
  const lock = `${real}.lock`;
  const deadline = performance.now() + EDIT_LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await fs.open(lock, "wx", 0o600);
      await handle.writeFile(`${process.pid}\n`).catch(() => undefined);
      await handle.close();
      return { path: lock, release: () => fs.rm(lock, { force: true }).catch(() => undefined) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
      if (performance.now() >= deadline) return { busy: lock };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** The bytes of a file, or undefined when it does not exist. Other failures propagate. */
export async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await fs.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Decode strict UTF-8, or undefined when the bytes are not UTF-8 text. */
export function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** A path for a report: relative to the working folder when below it, else absolute. */
export function shownPath(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)
    ? relative
    : file;
}
