#!/usr/bin/env node
// The `capability-graph` command ([CG-CLI-1] .. [CG-CLI-12], spec section 12): the dispatcher
// `run(argv, stdin, stdout, stderr)` and, when this module is the program, the process around it.
//
// Graph commands (one per row of the generated operation table) and `call` open the graph, call
// one tool and project the outcome: the result as one JSON line on stdout and exit 0, or nothing
// on stdout, the envelope {"ok":false,"error":E} on stderr and exit 1. Usage errors exit 2. The
// core and the MCP SDK are imported only by the commands that need them, so `--help`, `explain`
// and the usage errors start quickly.
import { realpathSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { Operation } from "../../_generated/operations.js";
import { GraphError } from "../../core/errors.js";
import type { CapabilityGraph } from "../../core/graph.js";
import { packageVersion } from "../../core/version.js";
import type { MaintenanceIo } from "../../maintenance/report.js";
import {
  CONFIG_OPTION,
  type CommandSpec,
  commandHelp,
  didYouMean,
  isOptionLike,
  isText,
  PROGRAM,
  parseCommand,
  synopsis,
  UsageError,
} from "./arguments.js";
import { programArguments } from "./argv.js";
import { CALL_SPEC, callCommand } from "./call.js";
import { DOCTOR_SPEC, reportJson, reportText } from "./doctor.js";
import { EXPLAIN_SPEC, explainCommand } from "./explain.js";
import { callTool, configPath, failure, Interrupt, openGraph } from "./graph.js";
import { EXIT, Io, StreamFailure } from "./io.js";
import { MCP_SPEC, mcpCommand } from "./mcp.js";
import { GRAPH_COMMANDS, graphCommandSpec, RAW_OPTION, requestText, takesRaw } from "./requests.js";

/** What a defect of this implementation prints, whatever it was ([CG-CLI-5]). */
const DEFECT_LINE = `${PROGRAM}: internal error (a defect of this implementation)\n`;

/** The commands besides the graph commands, with their one-line help. */
const OTHER_COMMANDS: readonly CommandSpec[] = [CALL_SPEC, MCP_SPEC, DOCTOR_SPEC, EXPLAIN_SPEC];

type MaintenanceCommand = (args: readonly string[], io: MaintenanceIo) => Promise<number>;

/**
 * The maintenance commands that write files (spec sections 12.3, 12.4), with their own parsers
 * and reports; imported only when one of them runs, so they cost nothing to the others.
 */
const MAINTENANCE_COMMANDS: ReadonlyMap<string, () => Promise<MaintenanceCommand>> = new Map([
  ["init", async () => (await import("./init.js")).runInit],
  ["mcp-install", async () => (await import("./mcp-install.js")).runMcpInstall],
  ["mcp-uninstall", async () => (await import("./mcp-install.js")).runMcpUninstall],
]);

async function maintenanceSummaries(): Promise<Array<[string, string]>> {
  const { INIT_SPEC } = await import("./init.js");
  const { MCP_INSTALL_SPEC, MCP_UNINSTALL_SPEC } = await import("./mcp-install.js");
  return [INIT_SPEC, MCP_INSTALL_SPEC, MCP_UNINSTALL_SPEC].map((spec) => [spec.name, spec.help]);
}

function commandNames(): string[] {
  return [
    ...GRAPH_COMMANDS.keys(),
    ...OTHER_COMMANDS.map((spec) => spec.name),
    ...MAINTENANCE_COMMANDS.keys(),
  ];
}

async function programHelp(): Promise<string> {
  const lines = [
    `usage: ${PROGRAM} [-h] [--config FILE] [--version] COMMAND ...`,
    "",
    "Discover provider capabilities: query a capability graph, serve it over MCP, and maintain its configuration.",
    "",
    "commands:",
  ];
  for (const operation of GRAPH_COMMANDS.values()) {
    lines.push(`  ${operation.cli.command.padEnd(14)} ${operation.cli.help}`);
  }
  for (const spec of OTHER_COMMANDS) lines.push(`  ${spec.name.padEnd(14)} ${spec.help}`);
  for (const [name, summary] of await maintenanceSummaries()) {
    lines.push(`  ${name.padEnd(14)} ${summary}`);
  }
  lines.push(
    "",
    "options:",
    "  -h, --help     show this help message and exit",
    `  --config FILE  ${CONFIG_OPTION.help}`,
    "  --version      print the version and exit",
    "",
    `Run '${PROGRAM} COMMAND --help' for a command's options and examples.`,
  );
  return `${lines.join("\n")}\n`;
}

async function graphCommand(operation: Operation, args: string[], io: Io): Promise<number> {
  const spec = graphCommandSpec(operation);
  const parsed = parseCommand(spec, args);
  if (parsed.help) {
    await io.out(commandHelp(spec));
    return EXIT.ok;
  }
  const request = requestText(operation, parsed); // usage errors come before the graph opens
  // A text in the arguments without one meaning (a duplicate --context member, an integer of
  // more than 400 digits) is CG_INPUT_INVALID before the graph opens, as an inline --arguments.
  const { parseRequestText } = await import("../../core/graph.js");
  try {
    parseRequestText(operation.tool, request);
  } catch (error) {
    if (error instanceof GraphError) return failure(io, error);
    throw error;
  }
  const interrupt = new Interrupt(operation);
  try {
    let graph: CapabilityGraph;
    try {
      graph = await openGraph(parsed);
    } catch (error) {
      if (error instanceof GraphError) return failure(io, error);
      throw error;
    }
    try {
      const outcome = await callTool(graph, operation.tool, request, interrupt);
      if ("error" in outcome) return failure(io, outcome.error);
      if (takesRaw(operation) && parsed.options.has(RAW_OPTION.flag)) {
        // The body exactly as read_document returns it in `text`, nothing added ([CG-CLI-12]).
        await io.out(String(outcome.result.text ?? ""));
      } else {
        await io.out(`${JSON.stringify(outcome.result)}\n`);
      }
      return EXIT.ok;
    } finally {
      await graph.close();
    }
  } finally {
    interrupt.dispose();
  }
}

async function doctorCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseCommand(DOCTOR_SPEC, args);
  if (parsed.help) {
    await io.out(commandHelp(DOCTOR_SPEC));
    return EXIT.ok;
  }
  const { diagnose } = await import("../../maintenance/diagnose.js");
  const report = await diagnose(configPath(parsed), { cwd: process.cwd() });
  await io.out(parsed.options.has("--json") ? reportJson(report) : reportText(report));
  if (report.error !== undefined) await io.envelope(report.error.toJSON());
  return report.status === "ok" ? EXIT.ok : EXIT.graphError;
}

async function runMaintenance(
  load: () => Promise<MaintenanceCommand>,
  args: string[],
  io: Io,
): Promise<number> {
  const command = await load();
  return command(args, {
    stdout: (text) => io.out(text),
    stderr: (text) => io.err(text),
    cwd: process.cwd(),
    env: process.env,
  });
}

/**
 * The command line ([CG-CLI-15] .. [CG-CLI-19]): every argument UTF-8 text; before the command,
 * only `--config FILE`, `--help` and `--version` (the first of these two acts, whatever else is
 * there); `--config` before the command is the command's own.
 */
function dispatch(argv: readonly string[], io: Io): Promise<number> {
  if (!argv.every(isText)) throw new UsageError("an argument is not UTF-8 text");
  // The command: the first token that is neither option-like nor the value of --config.
  let index = 0;
  while (index < argv.length && argv[index] !== "--" && isOptionLike(argv[index] as string)) {
    const next = argv[index + 1];
    if (argv[index] === CONFIG_OPTION.flag && next !== undefined && !isOptionLike(next)) index += 1;
    index += 1;
  }
  const leading = argv.slice(0, index);
  for (const token of leading) {
    if (token === "--version") return io.out(`${PROGRAM} ${packageVersion()}\n`).then(() => 0);
    if (token === "-h" || token === "--help")
      return programHelp()
        .then((text) => io.out(text))
        .then(() => 0);
  }
  const global = parseCommand(GLOBAL_SPEC, leading); // only options: the command follows
  if (argv[index] === "--") index += 1;
  const command = argv[index];
  if (command === undefined) throw new UsageError("a COMMAND is required");
  const config = global.options.get(CONFIG_OPTION.flag) ?? [];
  const args = [...config.map((file) => `${CONFIG_OPTION.flag}=${file}`), ...argv.slice(index + 1)];
  const operation = GRAPH_COMMANDS.get(command);
  if (operation !== undefined) return graphCommand(operation, args, io);
  const maintenance = MAINTENANCE_COMMANDS.get(command);
  if (maintenance !== undefined) return runMaintenance(maintenance, args, io);
  switch (command) {
    case CALL_SPEC.name:
      return callCommand(args, io);
    case MCP_SPEC.name:
      return mcpCommand(args, io);
    case DOCTOR_SPEC.name:
      return doctorCommand(args, io);
    case EXPLAIN_SPEC.name:
      return explainCommand(args, io);
    default: {
      // The unknown command is not repeated; only the CLI's own names are ([CG-CLI-10]).
      const names = commandNames();
      throw new UsageError(
        `unknown command${didYouMean(command, names)}; the choices are ${names.join(", ")}`,
      );
    }
  }
}

/** The options before the command, read with the grammar of every command. */
const GLOBAL_SPEC: CommandSpec = {
  name: "",
  help: "",
  options: [CONFIG_OPTION, { flag: "--version", help: "print the version and exit" }],
  positionals: [],
  examples: [],
};

function specOf(name: string | undefined): CommandSpec | undefined {
  if (name === undefined) return undefined;
  const operation = GRAPH_COMMANDS.get(name);
  if (operation !== undefined) return graphCommandSpec(operation);
  return OTHER_COMMANDS.find((spec) => spec.name === name);
}

/**
 * Run one command line. Returns the exit status; never throws: a usage error is exit 2, a failed
 * stdout 74, and anything unexpected — a defect of this implementation, never a contract outcome
 * — one fixed line on stderr and exit 70 ([CG-CLI-5]).
 */
export async function run(
  argv: readonly string[],
  stdin: Readable,
  stdout: Writable,
  stderr: Writable,
): Promise<number> {
  const io = new Io(stdin, stdout, stderr);
  try {
    return await dispatch(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      const spec = specOf(error.command);
      const usage =
        spec === undefined
          ? `usage: ${PROGRAM} [-h] [--config FILE] [--version] COMMAND ...`
          : synopsis(spec);
      const where = spec === undefined ? PROGRAM : `${PROGRAM} ${spec.name}`;
      await io.err(`${usage}\n${where}: error: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof StreamFailure) {
      if (!error.readerGone) {
        const action = error.stream === "stdin" ? "read stdin" : "write to stdout";
        await io.err(`${PROGRAM}: cannot ${action}\n`);
      }
      return EXIT.stream;
    }
    if (error instanceof GraphError) {
      await io.envelope(error.toJSON());
      return EXIT.graphError;
    }
    await io.err(DEFECT_LINE);
    return EXIT.defect;
  }
}

function invokedAsProgram(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (invokedAsProgram()) {
  // A failure outside the command's own flow (an event handler, a stray promise) is a defect
  // too: the same fixed line, never a traceback ([CG-CLI-5]).
  const defect = () => {
    process.stderr.write(DEFECT_LINE);
    process.exit(EXIT.defect);
  };
  process.on("uncaughtException", defect);
  process.on("unhandledRejection", defect);
  const status = await run(programArguments(), process.stdin, process.stdout, process.stderr);
  // Every write has completed (run awaits them); exit now rather than wait for handles a graph
  // or an executor may still hold.
  process.exit(status);
}
