// `explain [CODE]`: what an error code means (maintenance/explain.ts words it); without CODE,
// every code with its summary. Never opens the graph.

import { ERROR_CODES } from "../../_generated/taxonomy.js";
import {
  DOCS_SITE,
  docsSite,
  explainIndexJson,
  explainIndexText,
  explainJson,
  explainText,
  lookup,
} from "../../maintenance/explain.js";
import {
  CONFIG_OPTION,
  type CommandSpec,
  commandHelp,
  didYouMean,
  PROGRAM,
  parseCommand,
  UsageError,
} from "./arguments.js";
import { EXIT, type Io } from "./io.js";

export const EXPLAIN_SPEC: CommandSpec = {
  name: "explain",
  help: "Explain an error code (all codes without CODE).",
  options: [CONFIG_OPTION, { flag: "--json", help: "print the report as JSON; e.g. --json | jq" }],
  positionals: [
    {
      name: "code",
      metavar: "CODE",
      help: "an error code, any case; e.g. CG_INPUT_INVALID",
      optional: true,
    },
  ],
  examples: ["explain", "explain cg_config_invalid --json"],
};

/**
 * The text `explain` prints for its arguments, linking to the code's page under `site`; an
 * unknown code is a usage error.
 */
export function explain(code: string | undefined, json: boolean, site = DOCS_SITE): string {
  if (code === undefined) return json ? explainIndexJson() : explainIndexText();
  const known = lookup(code);
  if (known === undefined) {
    // The caller's text is not repeated ([CG-CLI-10]).
    throw new UsageError(
      `unknown error code${didYouMean(code.trim(), ERROR_CODES)}; run '${PROGRAM} explain' to list them`,
      "explain",
    );
  }
  return json ? `${JSON.stringify(explainJson(known))}\n` : explainText(known, site);
}

/** `explain [CODE] [--json]`. */
export async function explainCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseCommand(EXPLAIN_SPEC, args);
  if (parsed.help) {
    await io.out(commandHelp(EXPLAIN_SPEC));
    return EXIT.ok;
  }
  const code = parsed.positionals.get("code")?.[0];
  await io.out(explain(code, parsed.options.has("--json"), docsSite(process.env)));
  return EXIT.ok;
}
