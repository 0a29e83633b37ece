// The CLI commands `mcp-install` and `mcp-uninstall` (spec section 12.4, [CG-MAINT-7]): their
// options, parsed by the CLI's one parser (usage errors never repeat the caller's text,
// [CG-CLI-10]), then the maintenance run (maintenance/mcp-install.ts) and its report.
import path from "node:path";
import type { ClientRequest } from "../../maintenance/client-files.js";
import {
  CLIENT_NAMES,
  CLIENTS,
  DEFAULT_SERVER_NAME,
  ENV_VAR_NAME,
  install,
  SERVER_NAME,
  uninstall,
} from "../../maintenance/mcp-install.js";
import { emitReport, type MaintenanceIo } from "../../maintenance/report.js";
import { type CommandSpec, graphConfigPath, type OptionSpec, parseOrExit } from "./arguments.js";

export { CLI_MODULE } from "../../maintenance/mcp-install.js";

const COMMON_OPTIONS: readonly OptionSpec[] = [
  {
    flag: "--config",
    metavar: "FILE",
    help: "the host configuration (default: $CAPABILITY_GRAPH_CONFIG, else ./capability-graph.json)",
  },
  {
    flag: "--client",
    metavar: "CLIENT",
    required: true,
    choices: CLIENT_NAMES,
    help: `the MCP client, one of: ${CLIENT_NAMES.join(", ")}; e.g. --client cursor`,
  },
  {
    flag: "--config-path",
    metavar: "FILE",
    help: "the client's configuration file (default: the client's documented location)",
  },
  {
    flag: "--name",
    metavar: "NAME",
    valid: {
      test: (value) => SERVER_NAME.test(value),
      rule: "must be 1..64 letters A-Z or a-z, digits, _ or -",
    },
    help: `the server's name in the client (default: ${DEFAULT_SERVER_NAME})`,
  },
];

export const MCP_INSTALL_SPEC: CommandSpec = {
  name: "mcp-install",
  help: "Add this graph's MCP server to an MCP client's configuration.",
  options: [
    ...COMMON_OPTIONS,
    {
      flag: "--env",
      metavar: "NAME",
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
  positionals: [],
  examples: [
    "mcp-install --client cursor",
    "mcp-install --client vscode --config-path .vscode/mcp.json --dry-run",
  ],
};

export const MCP_UNINSTALL_SPEC: CommandSpec = {
  name: "mcp-uninstall",
  help: "Remove this graph's MCP server from an MCP client's configuration.",
  options: [
    ...COMMON_OPTIONS,
    { flag: "--json", help: "print the report as JSON; e.g. --json | jq" },
    { flag: "--dry-run", help: "report what would be written; write nothing" },
  ],
  positionals: [],
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
