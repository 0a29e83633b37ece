// The diagnostics behind `doctor` (spec section 12): every check of open, plus document
// readability and the executor's prerequisites, collected rather than stopped at the first.
import type { GraphError } from "./errors.js";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface DiagnosticCheck {
  id: string;
  status: CheckStatus;
  message: string;
}

export interface DiagnosticsReport {
  status: "ok" | "failed";
  checks: DiagnosticCheck[];
  warnings: string[];
  /**
   * Set when the configuration could not be read at all ([CG-MAINT-10]): the error envelope the
   * CLI writes on stderr (CG_CONFIG_INVALID, `unreadable` message).
   */
  configError?: GraphError;
}

export interface DiagnosticsOptions {
  /** The configuration file (absolute, or relative to `cwd`). */
  configPath: string;
  cwd?: string;
  signal?: AbortSignal;
}

export async function diagnose(options: DiagnosticsOptions): Promise<DiagnosticsReport> {
  void options;
  throw new Error("not implemented yet");
}
