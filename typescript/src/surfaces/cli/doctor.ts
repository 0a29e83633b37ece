// `doctor` (spec section 12.2): the report of the core's diagnostics, as text or `--json`. The
// report goes to stdout with nothing on stderr ([CG-MAINT-9]), except the error envelope of a
// configuration that cannot be read at all ([CG-MAINT-10]).
import type { DiagnosticsReport } from "../../maintenance/diagnose.js";
import type { CommandSpec } from "./arguments.js";
import { CONFIG_OPTION, PROGRAM } from "./arguments.js";

export const DOCTOR_SPEC: CommandSpec = {
  name: "doctor",
  help: "Check the configuration, sources, relations, documents, executor.",
  options: [CONFIG_OPTION, { flag: "--json", help: "print the report as JSON; e.g. --json | jq" }],
  positionals: [],
  examples: ["doctor", "doctor --config graph/capability-graph.json --json"],
};

const MARKS: Readonly<Record<string, string>> = {
  ok: "ok  ",
  warn: "warn",
  fail: "FAIL",
  skip: "skip",
};

/** The report in the contract's shape ([CG-MAINT-1]): exactly status, checks and warnings. */
export function reportJson(report: DiagnosticsReport): string {
  return `${JSON.stringify({
    status: report.status,
    checks: report.checks.map(({ id, status, message }) => ({ id, status, message })),
    warnings: [...report.warnings],
  })}\n`;
}

export function reportText(report: DiagnosticsReport): string {
  const lines = [`${PROGRAM} doctor: ${report.status}`];
  for (const check of report.checks) {
    lines.push(`  [${MARKS[check.status] ?? check.status}] ${check.id}: ${check.message}`);
  }
  for (const warning of report.warnings) lines.push(`  warning: ${warning}`);
  return `${lines.join("\n")}\n`;
}
