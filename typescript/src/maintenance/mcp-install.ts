// `mcp-install` and `mcp-uninstall` (spec section 12.4, [CG-MAINT-7], [CG-MAINT-8],
// [CG-MAINT-11] .. [CG-MAINT-14]): add this graph's MCP server to an MCP client's configuration
// file, or remove it. Checks run in the contract's order — the graph configuration opens, the
// --env names, the client's file, the server entry, the backup — and the first failure ends the
// command with the client file untouched. Every edit is spliced into the file's text (comments,
// order and layout kept), re-parsed, and written only when the result is exactly the old document
// plus (or minus) the entry; the write is atomic and goes to the target of a symbolic link.
//
// Which clients, where their files live, their formats and the entry's shape are implementation
// scope: this implementation registers `node <this package's CLI> mcp --config <file>` and
// recognizes its own entry by an argument naming its CLI module followed by `mcp`.
import { promises as fs } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import {
  applyEdits,
  type FormattingOptions,
  type Node as JsonNode,
  modify,
  type ParseError,
  parse as parseJsonc,
  parseTree,
} from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { MAX_CONFIG_BYTES } from "../core/config.js";
import { GraphError } from "../core/errors.js";
import { readBoundedFile } from "../core/files.js";
import { CapabilityGraph } from "../core/graph.js";
import {
  type Check,
  type CommandSpec,
  check,
  decodeUtf8,
  emitReport,
  graphConfigPath,
  type MaintenanceIo,
  type OptionSpec,
  parseOrExit,
  type Report,
  readIfExists,
  shownPath,
  takeEditLock,
  writeAtomically,
} from "./report.js";

/** The largest client file read (as the reference). */
const MAX_CLIENT_FILE_BYTES = 16 * 1_048_576;

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

const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** A server name: 1 to 64 of A-Z a-z 0-9 _ -, any of them first (section 12). */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

type JsonObject = Record<string, unknown>;

/** How one MCP client keeps its servers. */
interface ClientProfile {
  readonly display: string;
  readonly format: "json" | "toml";
  /** JSON with comments (and, with `trailingCommas`, trailing commas) is accepted. */
  readonly comments: boolean;
  readonly trailingCommas: boolean;
  /** The member (TOML: table) that holds the servers. */
  readonly container: string;
  /** The client's documented file, from the working folder and the environment. */
  readonly location: (io: MaintenanceIo) => string;
  /** How the client refers to an environment variable; undefined: --env is refused. */
  readonly envReference?: (name: string) => string;
  /** Members that come first in this client's entries. */
  readonly leading: JsonObject;
}

function home(io: MaintenanceIo): string {
  // An empty variable is unset, as in POSIX shells and the reference ([CG-MAINT-7] locations).
  return io.env.HOME || io.cwd;
}

function userConfigFolder(io: MaintenanceIo): string {
  if (process.platform === "darwin") return path.join(home(io), "Library", "Application Support");
  return io.env.XDG_CONFIG_HOME || path.join(home(io), ".config");
}

const CLIENTS: Readonly<Record<string, ClientProfile>> = {
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

const CLIENT_NAMES = Object.keys(CLIENTS).sort();

const COMMON_OPTIONS: readonly OptionSpec[] = [
  {
    flag: "--config",
    value: "FILE",
    help: "the host configuration (default: $CAPABILITY_GRAPH_CONFIG, else ./capability-graph.json)",
  },
  {
    flag: "--client",
    value: "CLIENT",
    required: true,
    choices: CLIENT_NAMES,
    help: `the MCP client, one of: ${CLIENT_NAMES.join(", ")}; e.g. --client cursor`,
  },
  {
    flag: "--config-path",
    value: "FILE",
    help: "the client's configuration file (default: the client's documented location)",
  },
  {
    flag: "--name",
    value: "NAME",
    valid: {
      test: (value) => SERVER_NAME.test(value),
      rule: "must be 1..64 letters A-Z or a-z, digits, _ or -",
    },
    help: `the server's name in the client (default: ${DEFAULT_SERVER_NAME})`,
  },
];

export const MCP_INSTALL_SPEC: CommandSpec = {
  name: "mcp-install",
  summary: "Add this graph's MCP server to an MCP client's configuration.",
  options: [
    ...COMMON_OPTIONS,
    {
      flag: "--env",
      value: "NAME",
      repeatable: true,
      valid: {
        test: (value) => ENV_VAR_NAME.test(value),
        rule: "must be an environment variable name: a letter or '_', then up to 127 of letters, digits and '_'",
      },
      help: "forward the environment variable NAME to the server by reference (never its value); repeatable",
    },
    {
      flag: "--force",
      help: "replace an older entry of this server (only one that runs this CLI), keeping the previous file as FILE.bak",
    },
    { flag: "--json", help: "print the report as JSON; e.g. --json | jq" },
    { flag: "--dry-run", help: "report what would be written; write nothing" },
  ],
  examples: [
    "mcp-install --client cursor",
    "mcp-install --client vscode --config-path .vscode/mcp.json --dry-run",
  ],
};

export const MCP_UNINSTALL_SPEC: CommandSpec = {
  name: "mcp-uninstall",
  summary: "Remove this graph's MCP server from an MCP client's configuration.",
  options: [
    ...COMMON_OPTIONS,
    { flag: "--json", help: "print the report as JSON; e.g. --json | jq" },
    { flag: "--dry-run", help: "report what would be written; write nothing" },
  ],
  examples: ["mcp-uninstall --client cursor", "mcp-uninstall --client codex --dry-run --json"],
};

/** Run `mcp-install` with the arguments after the command name; returns the exit status. */
export async function runMcpInstall(args: readonly string[], io: MaintenanceIo): Promise<number> {
  const parsed = await parseOrExit(MCP_INSTALL_SPEC, args, io);
  if (typeof parsed === "number") return parsed;
  const request = requestOf(parsed.values, io);
  const report = await install(request, {
    envNames: [...(parsed.values.get("--env") ?? [])],
    force: parsed.switches.has("--force"),
    dryRun: parsed.switches.has("--dry-run"),
  });
  return emitReport("mcp-install", report, parsed.switches.has("--json"), io);
}

/** Run `mcp-uninstall` with the arguments after the command name; returns the exit status. */
export async function runMcpUninstall(args: readonly string[], io: MaintenanceIo): Promise<number> {
  const parsed = await parseOrExit(MCP_UNINSTALL_SPEC, args, io);
  if (typeof parsed === "number") return parsed;
  const request = requestOf(parsed.values, io);
  const report = await uninstall(request, parsed.switches.has("--dry-run"));
  return emitReport("mcp-uninstall", report, parsed.switches.has("--json"), io);
}

/** What both commands act on. */
interface ClientRequest {
  readonly client: ClientProfile;
  readonly serverName: string;
  readonly graphConfig: string;
  readonly clientFile: string;
  readonly cwd: string;
}

function requestOf(
  values: ReadonlyMap<string, readonly string[]>,
  io: MaintenanceIo,
): ClientRequest {
  const clientName = values.get("--client")?.[0] ?? "";
  const client = CLIENTS[clientName];
  if (client === undefined) throw new Error("the option parser admitted an unknown client");
  const configPath = values.get("--config-path")?.[0];
  return {
    client,
    serverName: values.get("--name")?.[0] ?? DEFAULT_SERVER_NAME,
    graphConfig: graphConfigPath(values.get("--config")?.[0], io),
    clientFile: configPath === undefined ? client.location(io) : path.resolve(io.cwd, configPath),
    cwd: io.cwd,
  };
}

// ---------------------------------------------------------------------------------------------
// The two commands

async function install(
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

async function uninstall(request: ClientRequest, dryRun: boolean): Promise<Report> {
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

// ---------------------------------------------------------------------------------------------
// The client's file

interface ClientFile {
  readonly check: Check;
  /** The check of a file that does not exist, for mcp-uninstall (nothing will be created). */
  readonly absent: Check;
  readonly profile: ClientProfile;
  /** The file edited: the target of a symbolic link, else the path given. */
  readonly target: string;
  /** The file's bytes; undefined when it does not exist yet. */
  readonly bytes: Buffer | undefined;
  readonly mode: number | undefined;
  /** The text after a byte order mark, and the mark itself. */
  readonly text: string;
  readonly bom: string;
  /** The parsed document; undefined when the file cannot be used. */
  readonly document:
    | { readonly root: JsonObject; readonly servers: JsonObject | undefined }
    | undefined;
}

async function readClientFile(request: ClientRequest): Promise<ClientFile> {
  const profile = request.client;
  const given = request.clientFile;
  const absent = check("client-config", "ok", `${shownPath(given, request.cwd)} does not exist`);
  const unusable = (target: string, reason: string): ClientFile => ({
    check: check(
      "client-config",
      "fail",
      `${shownPath(target, request.cwd)}: ${reason}: left untouched`,
    ),
    absent,
    profile,
    target,
    bytes: undefined,
    mode: undefined,
    text: "",
    bom: "",
    document: undefined,
  });

  let target = given;
  try {
    target = await fs.realpath(given);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      return unusable(given, "cannot be resolved");
    const link = await fs.lstat(given).catch(() => undefined);
    if (link?.isSymbolicLink() === true)
      return unusable(given, "is a symbolic link to a missing file");
    return {
      check: check(
        "client-config",
        "ok",
        `${shownPath(given, request.cwd)} does not exist yet: it will be created`,
      ),
      absent,
      profile,
      target: given,
      bytes: undefined,
      mode: undefined,
      text: "",
      bom: "",
      document: { root: {}, servers: undefined },
    };
  }

  // Only a regular file, read with a bound: a fifo or a device is never waited on or read.
  const read = await readBoundedFile(target, MAX_CLIENT_FILE_BYTES);
  if (!read.ok) {
    if (read.reason === "too-large") {
      return unusable(target, `is larger than ${MAX_CLIENT_FILE_BYTES / 1_048_576} MiB`);
    }
    if (read.reason === "directory" || read.reason === "not-a-file") {
      return unusable(target, "is not a regular file");
    }
    return unusable(target, "cannot be read");
  }
  const bytes = Buffer.from(read.bytes);
  let mode: number;
  try {
    mode = (await fs.stat(target)).mode & 0o7777;
  } catch {
    return unusable(target, "cannot be read");
  }
  const decoded = decodeUtf8(bytes);
  if (decoded === undefined) return unusable(target, "not UTF-8 text");
  const bom = decoded.startsWith("\ufeff") ? "\ufeff" : "";
  const text = decoded.slice(bom.length);
  const formatName =
    profile.format === "toml" ? "TOML" : profile.comments ? "JSON (comments allowed)" : "JSON";
  // The JSON parser and the comparisons after it recurse: deeper nesting is refused first.
  if (profile.format === "json" && jsonNesting(text) > MAX_NESTING) {
    return unusable(target, `nested more than ${MAX_NESTING} levels deep`);
  }
  const root = parseDocument(profile, text);
  if (root === undefined) return unusable(target, `not valid ${formatName}`);
  const servers = root[profile.container];
  if (servers !== undefined && !isObject(servers)) {
    return unusable(target, `its ${profile.container} is not an object`);
  }
  return {
    check: check("client-config", "ok", `${shownPath(target, request.cwd)} is valid ${formatName}`),
    absent,
    profile,
    target,
    bytes,
    mode,
    text,
    bom,
    document: { root, servers },
  };
}

/** The deepest nesting of objects and arrays a client file may have (as the reference). */
const MAX_NESTING = 200;

/**
 * How deeply the objects and arrays of a JSON (or JSON with comments) text nest, counted without
 * recursion: brackets inside strings and comments do not count. The text need not be valid.
 */
function jsonNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '"') {
      for (index += 1; index < text.length && text[index] !== '"'; index += 1) {
        if (text[index] === "\\") index += 1;
      }
    } else if (char === "/" && text[index + 1] === "/") {
      const end = text.indexOf("\n", index);
      index = end < 0 ? text.length : end;
    } else if (char === "/" && text[index + 1] === "*") {
      const end = text.indexOf("*/", index + 2);
      index = end < 0 ? text.length : end + 1;
    } else if (char === "{" || char === "[") {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (char === "}" || char === "]") {
      depth -= 1;
    }
  }
  return deepest;
}

/** The file's document as an object, or undefined when it is not valid in the client's format. */
function parseDocument(profile: ClientProfile, text: string): JsonObject | undefined {
  if (profile.format === "toml") {
    try {
      // TOML integers are 64-bit: one past 2^53 is valid TOML, read as a BigInt rather than
      // refused as "not valid TOML" ([CG-MAINT-8]: only a file that is not TOML is failed).
      return plainTables(parseToml(text, { integersAsBigInt: "asNeeded" })) as JsonObject;
    } catch {
      return undefined;
    }
  }
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, {
    disallowComments: !profile.comments,
    allowTrailingComma: profile.trailingCommas,
    allowEmptyContent: false,
  });
  return errors.length === 0 && isObject(value) ? value : undefined;
}

/** smol-toml builds tables without a prototype; compare them as the plain objects they hold. */
function plainTables(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainTables);
  if (typeof value !== "object" || value === null || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainTables(item)]));
}

/**
 * The file's new text with the entry set (or removed when `entry` is undefined), spliced into
 * the old text. Throws unless the new text parses to exactly the old document with that one
 * change ([CG-MAINT-12]).
 */
function spliceEntry(file: ClientFile, name: string, entry: JsonObject | undefined): string {
  const { profile } = file;
  let text: string;
  if (file.bytes === undefined) {
    if (entry === undefined) throw new Error("nothing to remove from a missing file");
    text =
      profile.format === "toml"
        ? tomlTable(name, entry)
        : `${JSON.stringify({ [profile.container]: { [name]: entry } }, null, 2)}\n`;
  } else if (profile.format === "toml") {
    const without = tomlWithoutTable(file.text, name);
    text =
      entry === undefined
        ? without
        : `${without}${separatorBefore(without)}${tomlTable(name, entry)}`;
  } else if (entry === undefined) {
    // Removal without reformatting: the neighbours keep their exact text.
    text = applyEdits(file.text, modify(file.text, [profile.container, name], undefined, {}));
  } else {
    text =
      insertJsonEntry(file.text, profile.container, name, entry) ??
      applyEdits(
        file.text,
        modify(file.text, [profile.container, name], entry, {
          formattingOptions: formattingOf(file.text),
        }),
      );
  }
  const expected = parseDocument(profile, file.text) ?? {};
  const servers = isObject(expected[profile.container])
    ? (expected[profile.container] as JsonObject)
    : {};
  if (entry === undefined) delete servers[name];
  else servers[name] = entry;
  expected[profile.container] = servers;
  const result = parseDocument(profile, text);
  // TOML has no empty-table syntax left once the last `[mcp_servers.X]` table is removed.
  if (profile.format === "toml" && Object.keys(servers).length === 0 && result !== undefined) {
    if (!Object.hasOwn(result, profile.container)) delete expected[profile.container];
  }
  if (!isDeepStrictEqual(result, expected)) {
    throw new Error("the spliced text does not parse to the expected document");
  }
  return `${file.bom}${text}`;
}

/**
 * Insert `"name": entry` as the last member of the container (created as the root's last member
 * when absent), in the layout around it: on one line in a one-line object, else on a line of its
 * own with the indentation of the member before it. Undefined when the text has a shape this
 * does not handle (the caller then lets jsonc-parser format the insertion).
 */
function insertJsonEntry(
  text: string,
  container: string,
  name: string,
  entry: JsonObject,
): string | undefined {
  const root = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (root?.type !== "object") return undefined;
  const members = (root.children ?? []).filter(
    (member) => member.children?.[0]?.value === container,
  );
  if (members.length > 1) return undefined;
  const existing = members[0]?.children?.[1];
  if (existing === undefined) return insertMember(text, root, container, { [name]: entry });
  return existing.type === "object" ? insertMember(text, existing, name, entry) : undefined;
}

function insertMember(
  text: string,
  object: JsonNode,
  key: string,
  value: unknown,
): string | undefined {
  const { eol, unit } = layoutOf(text);
  const objectText = text.slice(object.offset, object.offset + object.length);
  const last = object.children?.at(-1);
  const member = (indent: string): string =>
    `${JSON.stringify(key)}: ${JSON.stringify(value, null, unit).split("\n").join(`${eol}${indent}`)}`;
  if (last === undefined) {
    // Only a truly empty object is rewritten; one holding a comment is left to jsonc-parser.
    if (!/^\{\s*\}$/.test(objectText)) return undefined;
    const outer = lineIndent(text, object.offset);
    const inner = `${outer}${unit}`;
    const replacement = `{${eol}${inner}${member(inner)}${eol}${outer}}`;
    return `${text.slice(0, object.offset)}${replacement}${text.slice(object.offset + object.length)}`;
  }
  const end = last.offset + last.length;
  if (!objectText.includes("\n")) {
    return `${text.slice(0, end)}, ${JSON.stringify(key)}: ${JSON.stringify(value)}${text.slice(end)}`;
  }
  const indent = lineIndent(text, last.offset);
  return `${text.slice(0, end)},${eol}${indent}${member(indent)}${text.slice(end)}`;
}

/** The whitespace that starts the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))?.[0] ?? "";
}

function layoutOf(text: string): { eol: string; unit: string } {
  const options = formattingOf(text);
  return {
    eol: options.eol ?? "\n",
    unit: options.insertSpaces === false ? "\t" : " ".repeat(options.tabSize ?? 2),
  };
}

/** The indentation and line ends the file already uses. */
function formattingOf(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  return {
    insertSpaces: !indent.startsWith("\t"),
    tabSize: indent.startsWith("\t") ? 1 : indent.length,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
}

function separatorBefore(text: string): string {
  if (text === "") return "";
  return text.endsWith("\n\n") ? "" : text.endsWith("\n") ? "\n" : "\n\n";
}

/** A `[mcp_servers.NAME]` table: TOML basic strings share JSON's escapes for these values. */
function tomlTable(name: string, entry: JsonObject): string {
  const lines = [`[mcp_servers.${tomlKey(name)}]`];
  for (const [key, value] of Object.entries(entry))
    lines.push(`${tomlKey(key)} = ${tomlValue(value)}`);
  return `${lines.join("\n")}\n`;
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

function tomlValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (typeof value === "string") return JSON.stringify(value);
  throw new Error("only strings and arrays of strings are written to TOML");
}

/**
 * The text without the table `[mcp_servers.NAME]` and its sub-tables (from the header to the
 * next table of another name); the text unchanged when there is none. Headers are compared by
 * the key they parse to, so any quoting of the name is recognized.
 */
function tomlWithoutTable(text: string, name: string): string {
  const lines = text.split(/(?<=\n)/);
  const kept: string[] = [];
  let removing = false;
  for (const line of lines) {
    const header = tomlHeaderKeys(line);
    if (header !== undefined) removing = header[0] === "mcp_servers" && header[1] === name;
    if (!removing) kept.push(line);
  }
  return kept.join("");
}

/** The dotted key of a `[table]` or `[[array]]` header line, or undefined for any other line. */
function tomlHeaderKeys(line: string): string[] | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith("[")) return undefined;
  try {
    let node: unknown = parseToml(trimmed.startsWith("[[") ? trimmed : `${trimmed}\n`);
    const keys: string[] = [];
    while (isObject(node) || (Array.isArray(node) && node.length === 1)) {
      const current: unknown = Array.isArray(node) ? node[0] : node;
      if (!isObject(current)) break;
      const names = Object.keys(current);
      if (names.length !== 1) break;
      const key = names[0] as string;
      keys.push(key);
      node = current[key];
    }
    return keys;
  } catch {
    return undefined;
  }
}

/** Keep the original as FILE.bak, else FILE.bak.2, FILE.bak.3 ..., never overwriting one. */
async function keepBackup(file: string, bytes: Buffer, mode: number): Promise<string> {
  for (let index = 1; index <= 1000; index += 1) {
    const backup = index === 1 ? `${file}.bak` : `${file}.bak.${index}`;
    try {
      const handle = await fs.open(backup, "wx", mode);
      try {
        await handle.writeFile(bytes);
        await handle.chmod(mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  throw new Error("no free backup name");
}

/**
 * Write the new text atomically over the target (its mode kept), only if the target is still
 * the file that was read ([CG-MAINT-22]; the caller holds the edit lock): "changed" when it was
 * changed or created since, "failed" when it could not be written.
 */
async function writeClientFile(
  file: ClientFile,
  text: string,
): Promise<"written" | "changed" | "failed"> {
  try {
    if (file.bytes === undefined) {
      await fs.mkdir(path.dirname(file.target), { recursive: true });
      await writeAtomically(file.target, text, { exclusive: true });
    } else {
      const now = await readIfExists(file.target);
      if (now === undefined || !now.equals(file.bytes)) return "changed";
      await writeAtomically(file.target, text, file.mode === undefined ? {} : { mode: file.mode });
    }
    return "written";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EEXIST" ? "changed" : "failed";
  }
}

function unwritten(outcome: "changed" | "failed", shown: string): string {
  return outcome === "changed"
    ? `${shown} changed while it was being edited: not overwritten`
    : `${shown} could not be written: left untouched`;
}

// ---------------------------------------------------------------------------------------------
// The entry

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

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
