// Over 400 lines: the CLI's one parser, both grammars (graph commands, maintenance commands) over one set of specs.
// The command-line parser of the CLI: one small, table-driven parser for every command, so that the
// graph commands' options come from the generated operation table and the usage rules are the
// same everywhere ([CG-CLI-3], [CG-CLI-10]): an unknown option or command, a missing value or a
// missing argument is a UsageError, whose text never repeats what the caller typed. Every command
// (graph commands, call, doctor, explain, mcp, init, mcp-install, mcp-uninstall) is described by
// one CommandSpec; the maintenance commands word their usage errors and help their own way.
import path from "node:path";
import { type MaintenanceIo, USAGE_EXIT } from "../../maintenance/report.js";

/** An option of a command: `--flag VALUE` (or `--flag=VALUE`), or a switch without a value. */
export interface OptionSpec {
  readonly flag: string;
  readonly metavar?: string; // absent for a switch
  readonly help: string;
  readonly repeatable?: boolean;
  /** Maintenance grammar: the option must be given. */
  readonly required?: boolean;
  /** Maintenance grammar: the allowed values, named in a usage error (the CLI's own names). */
  readonly choices?: readonly string[];
  /** Maintenance grammar: a rule the value must follow, described without repeating the value. */
  readonly valid?: { readonly test: (value: string) => boolean; readonly rule: string };
}

/** A positional argument; a repeatable one takes one or more values, an optional one zero or one. */
export interface PositionalSpec {
  readonly name: string;
  readonly metavar: string;
  readonly help: string;
  readonly repeatable?: boolean;
  readonly optional?: boolean;
}

export interface CommandSpec {
  readonly name: string;
  readonly help: string;
  readonly options: readonly OptionSpec[];
  readonly positionals: readonly PositionalSpec[];
  readonly examples: readonly string[];
}

export interface ParsedCommand {
  /** Option values by flag, in the order given (a switch holds one empty string per use). */
  readonly options: ReadonlyMap<string, readonly string[]>;
  /** Positional values by name. */
  readonly positionals: ReadonlyMap<string, readonly string[]>;
  readonly help: boolean;
}

/** A usage error: exit status 2, the command's usage and this one-line reason on stderr. */
export class UsageError extends Error {
  readonly command: string | undefined;

  constructor(reason: string, command?: string) {
    super(reason);
    this.name = "UsageError";
    this.command = command;
  }
}

export const PROGRAM = "capability-graph";

/** The option every command accepts. */
export const CONFIG_OPTION: OptionSpec = {
  flag: "--config",
  metavar: "FILE",
  help: "the host configuration (default: $CAPABILITY_GRAPH_CONFIG, else ./capability-graph.json); e.g. --config graph/capability-graph.json",
};

/**
 * A token that reads as an option ([CG-CLI-15]): it begins with `-`, is not `-` alone, and no
 * ASCII digit follows the `-` (`-1` is a value or a positional argument).
 */
export function isOptionLike(token: string): boolean {
  return token.startsWith("-") && token !== "-" && !/^-[0-9]/.test(token);
}

/** Whether `-h` or `--help` comes before any `--` ([CG-CLI-17]: help wins over every usage error). */
export function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((token) => HELP.has(token));
}

const HELP: ReadonlySet<string> = new Set(["-h", "--help"]);

/**
 * Whether an argument arrived as bytes that are not UTF-8 ([CG-CLI-19]): the program hands such a
 * byte to `run` as the lone surrogate U+DC80 + byte (as Python's surrogateescape does), and a
 * platform that gives UTF-16 arguments may hand an unpaired surrogate itself.
 */
export function isText(token: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(token);
}

/** Parse the arguments after the command name ([CG-CLI-15], [CG-CLI-16], [CG-CLI-17]). */
export function parseCommand(spec: CommandSpec, argv: readonly string[]): ParsedCommand {
  if (asksForHelp(argv)) return { options: new Map(), positionals: new Map(), help: true };
  const options = new Map<string, string[]>();
  const loose: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] as string;
    if (token === "--") {
      loose.push(...argv.slice(index + 1));
      break;
    }
    if (!isOptionLike(token)) {
      loose.push(token);
      continue;
    }
    const equals = token.indexOf("=");
    const flag = equals === -1 ? token : token.slice(0, equals);
    const option = spec.options.find((candidate) => candidate.flag === flag);
    if (option === undefined) {
      // The unknown option is not repeated; only a name of ours is suggested ([CG-CLI-10]).
      const flags = ["--help", ...spec.options.map((candidate) => candidate.flag)];
      throw new UsageError(`an option is not recognized${didYouMean(flag, flags)}`, spec.name);
    }
    let value = "";
    if (option.metavar !== undefined) {
      if (equals !== -1) value = token.slice(equals + 1);
      else {
        const next = argv[index + 1];
        if (next === undefined || isOptionLike(next)) {
          throw new UsageError(`argument ${option.flag}: expected one argument`, spec.name);
        }
        value = next;
        index += 1;
      }
    } else if (equals !== -1) {
      throw new UsageError(`argument ${option.flag}: takes no value`, spec.name);
    }
    const values = options.get(flag);
    if (values !== undefined && option.repeatable !== true) {
      throw new UsageError(`argument ${option.flag}: may be given once`, spec.name);
    }
    options.set(flag, [...(values ?? []), value]);
  }
  return { options, positionals: assignPositionals(spec, loose), help: false };
}

/**
 * ` (did you mean NAME?)` for the closest of our own `names`, or "" ([CG-CLI-20]): the name whose
 * similarity ratio with `value`, compared without case, is highest and at least 0.6 (a tie goes
 * to the name that sorts last), as Python's difflib.get_close_matches(value, names, 1, 0.6).
 * Only a name of ours is printed, never `value`.
 */
export function didYouMean(value: string, names: readonly string[]): string {
  const folded = value.toLowerCase();
  let best: { score: number; key: string; name: string } | undefined;
  for (const name of names) {
    const key = name.toLowerCase();
    const score = similarity(key, folded);
    if (score < 0.6) continue;
    if (best === undefined || score > best.score || (score === best.score && key > best.key)) {
      best = { score, key, name };
    }
  }
  return best === undefined ? "" : ` (did you mean ${best.name}?)`;
}

/** difflib's SequenceMatcher ratio: 2 * matches / total length (no junk: the texts are short). */
function similarity(a: string, b: string): number {
  const total = a.length + b.length;
  return total === 0 ? 1 : (2 * matchingCharacters(a, b)) / total;
}

/** The characters of the longest common block, then recursively of both sides of it. */
function matchingCharacters(a: string, b: string): number {
  let bestA = 0;
  let bestB = 0;
  let bestSize = 0;
  let previous = new Array<number>(b.length + 1).fill(0);
  for (let i = 0; i < a.length; i += 1) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let j = 0; j < b.length; j += 1) {
      if (a[i] !== b[j]) continue;
      const size = (previous[j] as number) + 1;
      current[j + 1] = size;
      if (size > bestSize) {
        bestA = i - size + 1;
        bestB = j - size + 1;
        bestSize = size;
      }
    }
    previous = current;
  }
  if (bestSize === 0) return 0;
  return (
    bestSize +
    matchingCharacters(a.slice(0, bestA), b.slice(0, bestB)) +
    matchingCharacters(a.slice(bestA + bestSize), b.slice(bestB + bestSize))
  );
}

function assignPositionals(spec: CommandSpec, loose: string[]): Map<string, string[]> {
  const positionals = new Map<string, string[]>();
  let at = 0;
  spec.positionals.forEach((positional, index) => {
    const remainingRequired = spec.positionals
      .slice(index + 1)
      .filter((later) => later.optional !== true).length;
    // Left to right; a repeatable positional leaves one value to each required one after it.
    const remaining = loose.length - at;
    const take =
      positional.repeatable === true
        ? Math.max(0, remaining - remainingRequired)
        : Math.min(1, remaining);
    if (take === 0 && positional.optional !== true) {
      throw new UsageError(`the following argument is required: ${positional.metavar}`, spec.name);
    }
    positionals.set(positional.name, loose.slice(at, at + take));
    at += take;
  });
  const extra = loose.length - at;
  if (extra > 0) {
    throw new UsageError(
      `${extra} unrecognized argument${extra === 1 ? "" : "s"}; see --help for the arguments`,
      spec.name,
    );
  }
  return positionals;
}

/** The one-line synopsis of a command. */
export function synopsis(spec: CommandSpec): string {
  const parts = [PROGRAM, spec.name];
  for (const option of spec.options) {
    const shown = option.metavar === undefined ? option.flag : `${option.flag} ${option.metavar}`;
    parts.push(`[${shown}]`);
  }
  for (const positional of spec.positionals) {
    if (positional.repeatable === true)
      parts.push(`${positional.metavar} [${positional.metavar} ...]`);
    else if (positional.optional === true) parts.push(`[${positional.metavar}]`);
    else parts.push(positional.metavar);
  }
  return `usage: ${parts.join(" ")}`;
}

/** The help text of a command (`COMMAND --help`). */
export function commandHelp(spec: CommandSpec): string {
  const lines = [synopsis(spec), "", spec.help];
  if (spec.positionals.length > 0) {
    lines.push("", "positional arguments:");
    for (const positional of spec.positionals) {
      lines.push(`  ${positional.metavar.padEnd(22)} ${positional.help}`);
    }
  }
  lines.push("", "options:", `  ${"-h, --help".padEnd(22)} show this help message and exit`);
  for (const option of spec.options) {
    const shown = option.metavar === undefined ? option.flag : `${option.flag} ${option.metavar}`;
    lines.push(`  ${shown.padEnd(22)} ${option.help}`);
  }
  if (spec.examples.length > 0) {
    lines.push("", "examples:");
    for (const example of spec.examples) lines.push(`  ${PROGRAM} ${example}`);
  }
  return `${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------------------------
// The grammar of the maintenance commands (init, mcp-install, mcp-uninstall): the same tokens and
// help rule as above ([CG-CLI-15] .. [CG-CLI-17]) over the same specs, with their own wording of
// usage errors and help (an option's choices and rule are named; a missing required option is an
// error), pinned by the maintenance vectors; at most one optional positional argument.

export interface ParsedArgs {
  readonly values: ReadonlyMap<string, readonly string[]>;
  readonly switches: ReadonlySet<string>;
  readonly positional: string | undefined;
  readonly help: boolean;
}

/** Parse a maintenance command's arguments; throws UsageError. */
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
      if (option.metavar === undefined) {
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
        throw new UsageError(`option ${flag} expects a value ${option.metavar}`);
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
    if (spec.positionals[0] === undefined || positional !== undefined) {
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

/** The one-line synopsis of a maintenance command. */
export function maintenanceSynopsis(spec: CommandSpec): string {
  const parts = [`usage: ${PROGRAM} ${spec.name} [-h]`];
  for (const option of spec.options) {
    const text = option.metavar === undefined ? option.flag : `${option.flag} ${option.metavar}`;
    parts.push(option.required === true ? text : `[${text}]`);
  }
  for (const positional of spec.positionals) parts.push(`[${positional.name}]`);
  return parts.join(" ");
}

/** The help text of a maintenance command. */
export function maintenanceHelp(spec: CommandSpec): string {
  const lines = [maintenanceSynopsis(spec), "", spec.help, ""];
  for (const positional of spec.positionals) {
    lines.push("positional arguments:", `  ${positional.name.padEnd(20)} ${positional.help}`, "");
  }
  lines.push("options:", `  ${"-h, --help".padEnd(20)} show this help message and exit`);
  for (const option of spec.options) {
    const text = option.metavar === undefined ? option.flag : `${option.flag} ${option.metavar}`;
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
    await io.stderr(
      `${maintenanceSynopsis(spec)}\n${PROGRAM} ${spec.name}: error: ${error.message}\n`,
    );
    return USAGE_EXIT;
  }
  if (parsed.help) {
    await io.stdout(maintenanceHelp(spec));
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
