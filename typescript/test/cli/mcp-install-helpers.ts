// Test support shared by the mcp-install and mcp-uninstall tests: a project folder holding a valid
// configuration, client files written in place, the two commands run in-process with a captured
// io, the entry this implementation writes, and the checks every usage error must pass.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CLI_MODULE, runMcpInstall, runMcpUninstall } from "../../src/surfaces/cli/mcp-install.js";
import {
  type CapturedIo,
  captureIo,
  freshFolder,
  REPOSITORY,
  type ReportJson,
} from "./maintenance-helpers.js";

export const FIXTURES = path.join(REPOSITORY, "conformance", "fixtures");

/** A fresh folder holding a valid configuration (the maintenance fixture's) and nothing else. */
export function project(): { cwd: string; config: string } {
  const cwd = freshFolder();
  const config = path.join(cwd, "capability-graph.json");
  cpSync(path.join(FIXTURES, "maintenance", "capability-graph.json"), config);
  return { cwd, config };
}

/** Writes a client file (creating its folder) below `cwd` and returns its absolute path. */
export function writeClientFile(cwd: string, relative: string, content: string | Buffer): string {
  const file = path.join(cwd, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

/** Where a command runs: a working folder (also its HOME), or one with more environment variables. */
export type Place = string | { cwd: string; env: Record<string, string> };

export interface CommandRun {
  exit: number;
  io: CapturedIo;
}

type MaintenanceCommand = typeof runMcpInstall;

async function run(command: MaintenanceCommand, at: Place, args: string[]): Promise<CommandRun> {
  const io = typeof at === "string" ? captureIo(at) : captureIo(at.cwd, at.env);
  const exit = await command(args, io);
  return { exit, io };
}

export function install(at: Place, ...args: string[]): Promise<CommandRun> {
  return run(runMcpInstall, at, args);
}

export function uninstall(at: Place, ...args: string[]): Promise<CommandRun> {
  return run(runMcpUninstall, at, args);
}

/** The usual arguments: --client CLIENT --config-path FILE, then `extra`, then --json. */
export function onClientFile(client: string, file: string, ...extra: string[]): string[] {
  return ["--client", client, "--config-path", file, ...extra, "--json"];
}

/** The entry this implementation writes for a configuration (Cursor's form, without a type). */
export function ownEntry(config: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [CLI_MODULE, "mcp", "--config", config] };
}

/** Each check of a report as [id, status], in order. */
export function checkStatuses(report: ReportJson): Array<[string, string]> {
  return report.checks.map(({ id, status }) => [id, status]);
}

export interface UsageErrorExpectation {
  /** A text stderr must contain. */
  says: string;
  /** Texts of the arguments stderr must not repeat. */
  omits: string[];
}

/** A usage error: exit 2, nothing on stdout, stderr saying what is wrong without repeating it. */
export function assertUsageError({ exit, io }: CommandRun, expected: UsageErrorExpectation): void {
  assert.equal(exit, 2);
  assert.equal(io.out, "");
  assert.ok(io.err.includes(expected.says), io.err);
  for (const text of expected.omits) assert.ok(!io.err.includes(text), io.err);
}
