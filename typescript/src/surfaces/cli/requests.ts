// From a graph command's arguments to its tool request ([CG-CLI-2]). The commands and their
// options are the generated operation table's; this module only knows the four argument types the
// table declares. The request is built as a JSON *text*, handed to the graph like any request
// text, so an integer the caller typed keeps every digit and the graph judges it exactly
// ([CG-CONV-6]) instead of the CLI rounding it.
import { OPERATIONS, type Operation, type OperationArgument } from "../../_generated/operations.js";
import { parseJsonText } from "../../core/json/text.js";
import {
  CONFIG_OPTION,
  type CommandSpec,
  type OptionSpec,
  type ParsedCommand,
  type PositionalSpec,
  UsageError,
} from "./arguments.js";

/** `read --raw` ([CG-CLI-12]): print the document text alone. */
export const RAW_OPTION: OptionSpec = {
  flag: "--raw",
  help: "print the document's text only, not the result JSON; e.g. --raw > guide.md",
};

/** The command that reads a document, the one that takes `--raw` ([CG-CLI-12]). */
const RAW_COMMAND = "read";

/** The graph command of each operation, by command name. */
export const GRAPH_COMMANDS: ReadonlyMap<string, Operation> = new Map(
  OPERATIONS.map((operation) => [operation.cli.command, operation]),
);

export function takesRaw(operation: Operation): boolean {
  return operation.cli.command === RAW_COMMAND;
}

/** The parser spec of a graph command, from its row of the operation table. */
export function graphCommandSpec(operation: Operation): CommandSpec {
  const options: OptionSpec[] = [CONFIG_OPTION];
  const positionals: PositionalSpec[] = [];
  for (const argument of operation.cli.arguments) {
    if (argument.flag !== undefined) {
      options.push({
        flag: argument.flag,
        metavar: argument.metavar,
        help: argument.help,
        repeatable: argument.repeatable === true,
      });
    } else if (argument.positional !== undefined) {
      positionals.push({
        name: argument.positional,
        metavar: argument.metavar,
        help: argument.help,
        repeatable: argument.repeatable === true,
      });
    }
  }
  if (takesRaw(operation)) options.push(RAW_OPTION);
  return {
    name: operation.cli.command,
    help: operation.cli.help,
    options,
    positionals,
    examples: operation.cli.examples,
  };
}

/** A request under construction: member name -> JSON text, or a nested object of the same. */
type Fragment = string | FragmentObject;
interface FragmentObject {
  [member: string]: Fragment;
}

function render(fragment: Fragment): string {
  if (typeof fragment === "string") return fragment;
  const members = Object.entries(fragment).map(
    ([name, value]) => `${JSON.stringify(name)}:${render(value)}`,
  );
  return `{${members.join(",")}}`;
}

/** A `--context` value lies at `/context/KEY`, depth 2 of the request ([CG-CONV-11]). */
const FACT_DEPTH = 2;

/**
 * Whether a `KEY:=JSON` value is a JSON text, read as the request text that holds it will be
 * read ([CG-CONV-15], [CG-CONV-16]): its other faults are the graph's CG_INPUT_INVALID.
 */
function isJsonText(text: string): boolean {
  const parsed = parseJsonText(text, { skipDepth: 33 - FACT_DEPTH });
  return parsed.ok || (parsed.fault.kind !== "syntax" && parsed.fault.kind !== "bom");
}

/** `KEY=TEXT` (a string) or `KEY:=JSON` (any JSON value, judged by the context rules). */
function contextFacts(argument: OperationArgument, values: readonly string[], command: string) {
  const keys = new Set<string>();
  const members: string[] = [];
  for (const value of values) {
    const equals = value.indexOf("=");
    if (equals === -1) {
      throw new UsageError(`argument ${argument.flag}: expected KEY=TEXT or KEY:=JSON`, command);
    }
    const asJson = equals > 0 && value.charAt(equals - 1) === ":";
    const key = value.slice(0, asJson ? equals - 1 : equals);
    const text = value.slice(equals + 1);
    if (keys.has(key)) {
      // Two facts with one key would give the request two meanings ([CG-CONV-4]).
      throw new UsageError(`argument ${argument.flag}: a KEY is given twice`, command);
    }
    keys.add(key);
    if (asJson && !isJsonText(text)) {
      throw new UsageError(`argument ${argument.flag}: the value after := is not JSON`, command);
    }
    members.push(`${JSON.stringify(key)}:${asJson ? text.trim() : JSON.stringify(text)}`);
  }
  return `{${members.join(",")}}`;
}

function fragmentOf(
  argument: OperationArgument,
  values: readonly string[],
  command: string,
): string {
  const name = argument.flag ?? argument.metavar;
  switch (argument.type) {
    case "string":
      return argument.repeatable === true
        ? `[${values.map((value) => JSON.stringify(value)).join(",")}]`
        : JSON.stringify(values[values.length - 1]);
    case "integer": {
      const text = values[values.length - 1] as string;
      // An optional - and ASCII digits ([CG-CLI-18]), as the literal without leading zeros.
      if (!/^-?[0-9]+$/.test(text)) {
        throw new UsageError(`argument ${name}: must be an integer`, command);
      }
      const digits = text.replace(/^-?0*/, "") || "0";
      return text.startsWith("-") && digits !== "0" ? `-${digits}` : digits;
    }
    case "comma-separated": {
      const text = values[values.length - 1] as string;
      return `[${text
        .split(",")
        .map((item) => JSON.stringify(item))
        .join(",")}]`;
    }
    case "context-fact":
      return contextFacts(argument, values, command);
  }
}

/** The request text of a graph command: the members its arguments set, in the table's order. */
export function requestText(operation: Operation, parsed: ParsedCommand): string {
  const request: FragmentObject = {};
  for (const argument of operation.cli.arguments) {
    const values =
      argument.flag !== undefined
        ? parsed.options.get(argument.flag)
        : parsed.positionals.get(argument.positional ?? "");
    if (values === undefined || values.length === 0) continue;
    const path = argument.member.split("/");
    let target = request;
    for (const member of path.slice(0, -1)) {
      const inner = target[member];
      if (typeof inner === "object") target = inner;
      else {
        const created: FragmentObject = {};
        target[member] = created;
        target = created;
      }
    }
    target[path[path.length - 1] as string] = fragmentOf(argument, values, operation.cli.command);
  }
  return render(request);
}
