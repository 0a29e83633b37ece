// The command-line parser of the CLI: one small, table-driven parser for every command, so that the
// graph commands' options come from the generated operation table and the usage rules are the
// same everywhere ([CG-CLI-3], [CG-CLI-10]): an unknown option or command, a missing value or a
// missing argument is a UsageError, whose text never repeats what the caller typed.

/** An option of a command: `--flag VALUE` (or `--flag=VALUE`), or a switch without a value. */
export interface OptionSpec {
  readonly flag: string;
  readonly metavar?: string; // absent for a switch
  readonly help: string;
  readonly repeatable?: boolean;
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

function isOptionToken(token: string): boolean {
  return token.startsWith("-") && token !== "-" && !/^-\d/.test(token);
}

/** Parse the arguments after the command name. */
export function parseCommand(spec: CommandSpec, argv: readonly string[]): ParsedCommand {
  const options = new Map<string, string[]>();
  const loose: string[] = [];
  let help = false;
  let onlyPositionals = false;
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] as string;
    if (onlyPositionals || !isOptionToken(token)) {
      loose.push(token);
      continue;
    }
    if (token === "--") {
      onlyPositionals = true;
      continue;
    }
    if (token === "-h" || token === "--help") {
      help = true;
      continue;
    }
    const equals = token.indexOf("=");
    const flag = equals === -1 ? token : token.slice(0, equals);
    const option = spec.options.find((candidate) => candidate.flag === flag);
    if (option === undefined) {
      // The unknown option is not repeated ([CG-CLI-10]).
      throw new UsageError("an option is not recognized; see --help for the options", spec.name);
    }
    let value = "";
    if (option.metavar !== undefined) {
      if (equals !== -1) value = token.slice(equals + 1);
      else {
        const next = argv[index + 1];
        if (next === undefined || (isOptionToken(next) && next !== "--")) {
          throw new UsageError(`argument ${option.flag}: expected one argument`, spec.name);
        }
        value = next;
        index += 1;
      }
    } else if (equals !== -1) {
      throw new UsageError(`argument ${option.flag}: takes no value`, spec.name);
    }
    const values = options.get(flag) ?? [];
    // A non-repeatable option given twice keeps its last value, as its help says nothing else.
    if (option.repeatable === true || option.metavar === undefined) values.push(value);
    else values.splice(0, values.length, value);
    options.set(flag, values);
  }
  if (help) return { options, positionals: new Map(), help };
  return { options, positionals: assignPositionals(spec, loose), help };
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
