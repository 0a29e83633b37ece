// Over 400 lines: the client table and both runs (install, uninstall) with their ordered checks; the file handling is in client-files.ts.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { MAX_CONFIG_BYTES } from "../core/config.js";
import { GraphError } from "../core/errors.js";
import { readBoundedFile } from "../core/files.js";
import { CapabilityGraph } from "../core/graph.js";
import {
  type ClientProfile,
  type ClientRequest,
  isObject,
  type JsonObject,
  keepBackup,
  readClientFile,
  spliceEntry,
  unwritten,
  writeClientFile,
} from "./client-files.js";
import {
  type Check,
  check,
  type MaintenanceIo,
  type Report,
  shownPath,
  takeEditLock,
} from "./report.js";

/** The server's name in a client unless --name says otherwise. */
export const DEFAULT_SERVER_NAME = "capability-graph";

/** This package's CLI module: what a registered client runs (with Node) to serve the graph. */
export const CLI_MODULE = fileURLToPath(new URL("../surfaces/cli/main.js", import.meta.url));

/**
 * The tails of CLI_MODULE's path that identify this implementation in an entry's arguments: the
 * current one, and the one releases before the src/surfaces layout wrote (so that their entries
 * are still recognized as ours, for uninstall and for replacing them).
 */
const CLI_MODULE_TAILS = ["/dist/src/surfaces/cli/main.js", "/dist/src/cli/main.js"];

export const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** A server name: 1 to 64 of A-Z a-z 0-9 _ -, any of them first (section 12). */
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function home(io: MaintenanceIo): string {
  // An empty variable is unset, as in POSIX shells and the reference ([CG-MAINT-7] locations).
  return io.env.HOME || io.cwd;
}

function userConfigFolder(io: MaintenanceIo): string {
  if (process.platform === "darwin") return path.join(home(io), "Library", "Application Support");
  return io.env.XDG_CONFIG_HOME || path.join(home(io), ".config");
}

export const CLIENTS: Readonly<Record<string, ClientProfile>> = {
  "claude-code": {
    display: "Claude Code",
    format: "json",
    comments: false,
    trailingCommas: false,
    container: "mcpServers",
    location: (io) => path.join(io.cwd, ".mcp.json"),
    envReference: (name) => `\${${name}}`,
    leading: { type: "stdio" },
  },
  "claude-desktop": {
    display: "Claude Desktop",
    format: "json",
    comments: false,
    trailingCommas: false,
    container: "mcpServers",
    location: (io) => path.join(userConfigFolder(io), "Claude", "claude_desktop_config.json"),
    leading: {},
  },
  codex: {
    display: "Codex",
    format: "toml",
    comments: true,
    trailingCommas: false,
    container: "mcp_servers",
    location: (io) => path.join(io.env.CODEX_HOME || path.join(home(io), ".codex"), "config.toml"),
    envReference: (name) => name,
    leading: {},
  },
  cursor: {
    display: "Cursor",
    format: "json",
    comments: false,
    trailingCommas: false,
    container: "mcpServers",
    location: (io) => path.join(io.cwd, ".cursor", "mcp.json"),
    envReference: (name) => `\${env:${name}}`,
    leading: {},
  },
  gemini: {
    display: "Gemini CLI",
    format: "json",
    comments: true,
    trailingCommas: false,
    container: "mcpServers",
    location: (io) => path.join(io.cwd, ".gemini", "settings.json"),
    envReference: (name) => `\${${name}}`,
    leading: {},
  },
  vscode: {
    display: "VS Code",
    format: "json",
    comments: true,
    trailingCommas: true,
    container: "servers",
    location: (io) => path.join(io.cwd, ".vscode", "mcp.json"),
    envReference: (name) => `\${env:${name}}`,
    leading: { type: "stdio" },
  },
  windsurf: {
    display: "Windsurf",
    format: "json",
    comments: false,
    trailingCommas: false,
    container: "mcpServers",
    location: (io) => path.join(home(io), ".codeium", "windsurf", "mcp_config.json"),
    envReference: (name) => `\${env:${name}}`,
    leading: {},
  },
  zed: {
    display: "Zed",
    format: "json",
    comments: true,
    trailingCommas: true,
    container: "context_servers",
    location: (io) =>
      process.platform === "darwin"
        ? path.join(home(io), ".config", "zed", "settings.json")
        : path.join(userConfigFolder(io), "zed", "settings.json"),
    leading: { source: "custom" },
  },
};

export const CLIENT_NAMES = Object.keys(CLIENTS).sort();

// ---------------------------------------------------------------------------------------------
// The two commands

export async function install(
  request: ClientRequest,
  options: { envNames: string[]; force: boolean; dryRun: boolean },
): Promise<Report> {
  const { client, cwd } = request;
  const checks: Check[] = [];
  const warnings: string[] = [];
  const failed = (status: "failed" | "conflict"): Report => ({ status, checks, warnings });

  // 1. The graph configuration opens.
  const graph = await graphConfigCheck(request.graphConfig, cwd);
  checks.push(graph.check);
  if (graph.model === undefined) return failed("failed");
  const apiKeyEnv = graph.model.executor === "openai" ? graph.model.apiKeyEnv : undefined;
  if (typeof apiKeyEnv === "string" && !options.envNames.includes(apiKeyEnv)) {
    warnings.push(
      `The executor reads its key from ${apiKeyEnv}, which is not forwarded to the server: add --env ${apiKeyEnv}`,
    );
  }

  // 2. The --env names (their format was checked by the option parser).
  if (options.envNames.length > 0) {
    if (client.envReference === undefined) {
      checks.push(
        check(
          "env",
          "fail",
          `${client.display} has no documented way to refer to an environment variable: --env cannot be forwarded (set the variable in the entry yourself)`,
        ),
      );
      return failed("failed");
    }
    checks.push(check("env", "ok", `Forwarding by reference: ${options.envNames.join(", ")}`));
  }

  // 3. The client's configuration file, read and written under its edit lock ([CG-MAINT-22]).
  const lock = options.dryRun ? undefined : await takeEditLock(request.clientFile);
  if (lock !== undefined && "busy" in lock) {
    checks.push(lockBusy(request, lock.busy));
    return failed("conflict");
  }
  try {
    return await installEntry(request, options, checks, warnings);
  } finally {
    await lock?.release();
  }
}

/** The edit lock of another edit was held too long: a conflict, nothing touched. */
function lockBusy(request: ClientRequest, lock: string): Check {
  return check(
    "client-config",
    "fail",
    `${shownPath(request.clientFile, request.cwd)} is being edited by another process: ${shownPath(lock, request.cwd)} exists (remove it if no edit is running); left untouched`,
  );
}

async function installEntry(
  request: ClientRequest,
  options: { envNames: string[]; force: boolean; dryRun: boolean },
  checks: Check[],
  warnings: string[],
): Promise<Report> {
  const { client, serverName, cwd } = request;
  const failed = (status: "failed" | "conflict"): Report => ({ status, checks, warnings });
  const file = await readClientFile(request);
  checks.push(file.check);
  if (file.document === undefined) return failed("failed");

  // 4. The server entry.
  const shown = shownPath(file.target, cwd);
  const desired = serverEntry(client, request.graphConfig, options.envNames);
  const existing = file.document.servers?.[serverName];
  const where = `the server ${serverName} in ${shown}`;
  let replacing = false;
  if (existing !== undefined) {
    if (isDeepStrictEqual(existing, desired)) {
      // Nothing to write: --dry-run reports what the command itself reports ([CG-MAINT-19]).
      checks.push(check("server", "ok", `${client.display} already has ${where}`));
      return { status: "ok", checks, warnings };
    }
    if (!isOwnEntry(existing)) {
      checks.push(
        check(
          "server",
          "fail",
          `${client.display} has another program under ${where}: not overwritten (choose another --name)`,
        ),
      );
      return failed("conflict");
    }
    if (!options.force) {
      checks.push(
        check(
          "server",
          "fail",
          `${client.display} has an older entry for ${where}: not overwritten (--force replaces it and keeps a backup)`,
        ),
      );
      return failed("conflict");
    }
    replacing = true;
  }
  let text: string;
  try {
    text = spliceEntry(file, serverName, desired);
  } catch {
    checks.push(
      check(
        "server",
        "fail",
        `${shown}: the edit could not be made without changing anything else; left untouched`,
      ),
    );
    return failed("failed");
  }
  const verb = replacing ? "replace" : "add";
  if (options.dryRun) {
    checks.push(check("server", "ok", `Would ${verb} ${where}`));
    return { status: "planned", checks, warnings };
  }

  // 5. The backup, when an older entry of ours is replaced.
  if (replacing && file.bytes !== undefined) {
    try {
      const backup = await keepBackup(file.target, file.bytes, file.mode ?? 0o600);
      checks.push(check("backup", "ok", `Kept the previous file as ${shownPath(backup, cwd)}`));
    } catch {
      checks.push(
        check("backup", "fail", `No backup of ${shown} could be written: left untouched`),
      );
      return failed("failed");
    }
  }
  const written = await writeClientFile(file, text);
  if (written !== "written") {
    checks.push(check("server", "fail", unwritten(written, shown)));
    return failed(written === "changed" ? "conflict" : "failed");
  }
  checks.push(check("server", "ok", `${replacing ? "Replaced" : "Added"} ${where}`));
  warnings.push(`Restart ${client.display} to load the server`);
  return { status: "ok", checks, warnings };
}

export async function uninstall(request: ClientRequest, dryRun: boolean): Promise<Report> {
  const lock = dryRun ? undefined : await takeEditLock(request.clientFile);
  if (lock !== undefined && "busy" in lock) {
    return { status: "conflict", checks: [lockBusy(request, lock.busy)], warnings: [] };
  }
  try {
    return await uninstallEntry(request, dryRun);
  } finally {
    await lock?.release();
  }
}

async function uninstallEntry(request: ClientRequest, dryRun: boolean): Promise<Report> {
  const { client, serverName, cwd } = request;
  const checks: Check[] = [];
  const file = await readClientFile(request);
  const shown = shownPath(file.target, cwd);
  const where = `the server ${serverName} in ${shown}`;
  // Nothing to write: --dry-run reports what the command itself reports ([CG-MAINT-19]).
  const nothing = (): Report => {
    checks.push(
      check(
        "server",
        "ok",
        `${client.display} has no server ${serverName} in ${shown}: nothing to remove`,
      ),
    );
    return { status: "ok", checks, warnings: [] };
  };
  checks.push(file.bytes === undefined && file.document !== undefined ? file.absent : file.check);
  if (file.document === undefined) return { status: "failed", checks, warnings: [] };
  if (file.bytes === undefined) return nothing();
  const existing = file.document.servers?.[serverName];
  if (existing === undefined) return nothing();
  if (!isOwnEntry(existing)) {
    checks.push(
      check("server", "fail", `${client.display} has another program under ${where}: not removed`),
    );
    return { status: "conflict", checks, warnings: [] };
  }
  let text: string;
  try {
    text = spliceEntry(file, serverName, undefined);
  } catch {
    checks.push(
      check(
        "server",
        "fail",
        `${shown}: the edit could not be made without changing anything else; left untouched`,
      ),
    );
    return { status: "failed", checks, warnings: [] };
  }
  if (dryRun) {
    checks.push(check("server", "ok", `Would remove ${where}`));
    return { status: "planned", checks, warnings: [] };
  }
  const written = await writeClientFile(file, text);
  if (written !== "written") {
    checks.push(check("server", "fail", unwritten(written, shown)));
    return { status: written === "changed" ? "conflict" : "failed", checks, warnings: [] };
  }
  checks.push(check("server", "ok", `Removed the server ${serverName} from ${shown}`));
  return { status: "ok", checks, warnings: [`Restart ${client.display} to unload the server`] };
}

// ---------------------------------------------------------------------------------------------
// The graph configuration

interface GraphConfigOutcome {
  readonly check: Check;
  /** The configuration's model section (empty without one); undefined when it does not open. */
  readonly model: JsonObject | undefined;
}

async function graphConfigCheck(configFile: string, cwd: string): Promise<GraphConfigOutcome> {
  const shown = shownPath(configFile, cwd);
  try {
    const graph = await CapabilityGraph.open(configFile, { cwd });
    await graph.close();
  } catch (error) {
    if (!(error instanceof GraphError)) throw error;
    return {
      check: check(
        "graph-config",
        "fail",
        `${shown} cannot be served: ${error.code}: ${error.message}; the client configuration was not touched`,
      ),
      model: undefined,
    };
  }
  // The file opened, so it is a JSON object; its model section names the key variable, if any.
  // Read again with the same bound as open, and only a regular file: replaced since, it is not
  // waited on; changed since, its model section is simply not known.
  const read = await readBoundedFile(configFile, MAX_CONFIG_BYTES);
  let configuration: unknown;
  try {
    configuration = read.ok ? JSON.parse(Buffer.from(read.bytes).toString("utf8")) : undefined;
  } catch {
    configuration = undefined;
  }
  const model = isObject(configuration) && isObject(configuration.model) ? configuration.model : {};
  return { check: check("graph-config", "ok", `The server will serve ${configFile}`), model };
}

/** The entry a client runs: Node with this package's CLI serving the configuration over MCP. */
function serverEntry(
  client: ClientProfile,
  graphConfig: string,
  envNames: readonly string[],
): JsonObject {
  const entry: JsonObject = {
    ...client.leading,
    command: process.execPath,
    args: [CLI_MODULE, "mcp", "--config", graphConfig],
  };
  if (envNames.length > 0 && client.envReference !== undefined) {
    const reference = client.envReference;
    if (client.format === "toml") entry.env_vars = [...envNames];
    else entry.env = Object.fromEntries(envNames.map((name) => [name, reference(name)]));
  }
  return entry;
}

/** Whether an entry runs this implementation's CLI module with `mcp` (whatever else differs). */
export function isOwnEntry(entry: unknown): boolean {
  if (!isObject(entry) || !Array.isArray(entry.args)) return false;
  const args: unknown[] = entry.args;
  return args.some(
    (arg, index) =>
      typeof arg === "string" &&
      CLI_MODULE_TAILS.some((tail) => arg.replaceAll("\\", "/").endsWith(tail)) &&
      args[index + 1] === "mcp",
  );
}
