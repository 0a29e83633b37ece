// Test support for the maintenance commands: a fresh folder per test, an io that captures what a
// command prints, and the report schema of the spec to check every JSON report against.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { MaintenanceIo } from "../../src/maintenance/report.js";

export const REPOSITORY = path.resolve(
  path.dirname(new URL(import.meta.url).pathname),
  "../../../..",
);

export function specFile(relative: string): string {
  return path.join(REPOSITORY, "spec", relative);
}

const createdFolders: string[] = [];
process.on("exit", () => {
  for (const folder of createdFolders) rmSync(folder, { recursive: true, force: true });
});

/** A new folder under the system's temporary folder, removed when the test process exits. */
export function freshFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), "cg-maintenance-"));
  createdFolders.push(folder);
  return folder;
}

export interface CapturedIo extends MaintenanceIo {
  out: string;
  err: string;
}

export function captureIo(cwd: string, env: Record<string, string | undefined> = {}): CapturedIo {
  const io: CapturedIo = {
    out: "",
    err: "",
    cwd,
    env: { HOME: cwd, ...env },
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateReport = ajv.compile(
  JSON.parse(
    readFileSync(specFile("capability-graph/schemas/maintenance-report.schema.json"), "utf8"),
  ),
);

export interface ReportJson {
  status: string;
  checks: Array<{ id: string; status: string; message: string }>;
  warnings: string[];
}

/** The one JSON report on stdout, checked against the spec's schema; nothing on stderr. */
export function reportOf(io: CapturedIo): ReportJson {
  assert.equal(io.err, "", "nothing on stderr");
  assert.ok(
    io.out.endsWith("\n") && io.out.indexOf("\n") === io.out.length - 1,
    "one line on stdout",
  );
  const report = JSON.parse(io.out);
  assert.ok(validateReport(report), JSON.stringify(validateReport.errors));
  return report as ReportJson;
}

export function read(file: string): string {
  return readFileSync(file, "utf8");
}
