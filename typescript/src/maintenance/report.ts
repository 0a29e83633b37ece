// What the maintenance commands `init`, `mcp-install` and `mcp-uninstall` share (spec section
// 12): the report and its exit status ([CG-MAINT-1], [CG-MAINT-2]), the way they talk to the
// dispatcher, and atomic file writes that never destroy a user's file.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";

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
