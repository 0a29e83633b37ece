// `explain [CODE]`: what an error code means, from the generated error registry and its
// documentation texts; without CODE, every code with its summary. Never opens the graph.

import { ACTION_TEXTS, EXPLANATIONS, PHASE_TEXTS } from "../../_generated/explanations.js";
import { ERROR_CODES, type ErrorCode, REGISTRY } from "../../_generated/taxonomy.js";
import type { CommandSpec } from "./arguments.js";
import { CONFIG_OPTION, didYouMean, PROGRAM, UsageError } from "./arguments.js";

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

/** The registry entry of a code with its documentation texts, as `--json` prints it. */
function entryJson(code: ErrorCode) {
  const entry = REGISTRY[code];
  const texts = EXPLANATIONS[code];
  return {
    code,
    phases: [...entry.phases],
    defaultAction: entry.defaultAction ?? null,
    executorActions: [...entry.executorActions],
    messages: { ...entry.messages },
    pointerMessages: entry.pointerMessages,
    en: texts?.en,
    zh: texts?.zh,
    since: texts?.since,
    docs: `errors/${code}/`,
  };
}

/**
 * The published docs site the text form links to. CAPABILITY_GRAPH_DOCS_URL (an http or https
 * URL: a mirror, a local build) replaces it.
 */
export const DOCS_SITE = "https://capability-graph.dev/";

/** The docs site of `environment`: its CAPABILITY_GRAPH_DOCS_URL when that is an http or https URL without whitespace (a `/` added at its end), else DOCS_SITE. */
export function docsSite(environment: Readonly<Record<string, string | undefined>>): string {
  const given = environment.CAPABILITY_GRAPH_DOCS_URL ?? "";
  if (!/^https?:\/\/[^\s/]+(\/\S*)?$/.test(given)) return DOCS_SITE;
  return given.endsWith("/") ? given : `${given}/`;
}

function entryText(code: ErrorCode, site: string): string {
  const entry = REGISTRY[code];
  const texts = EXPLANATIONS[code];
  const lines = [`${code} -- ${texts?.en.summary ?? ""} / ${texts?.zh.summary ?? ""}`, ""];
  for (const phase of entry.phases) {
    const text = PHASE_TEXTS[phase];
    lines.push(`  phase:            ${phase}  (${text?.en ?? ""} / ${text?.zh ?? ""})`);
  }
  if (entry.defaultAction !== undefined) {
    const text = ACTION_TEXTS[entry.defaultAction];
    lines.push(
      `  nextAction:       ${entry.defaultAction}  (${text?.en ?? ""} / ${text?.zh ?? ""})`,
    );
  } else lines.push("  nextAction:       (none)");
  for (const action of entry.executorActions) {
    lines.push(`  executor may set: ${action}`);
  }
  for (const [variant, message] of Object.entries(entry.messages)) {
    lines.push(`  message:          ${message}  (${variant})`);
  }
  if (entry.pointerMessages) {
    lines.push("  pointer messages: yes (the message names where the problem is)");
  }
  lines.push(`  since:            ${texts?.since ?? ""}`, "");
  if (texts !== undefined) {
    lines.push(
      "  [English]",
      `  trigger:  ${texts.en.trigger}`,
      `  handling: ${texts.en.handling}`,
    );
    lines.push(
      "",
      "  [中文]",
      `  trigger:  ${texts.zh.trigger}`,
      `  handling: ${texts.zh.handling}`,
    );
  }
  lines.push("", `  docs: ${site}errors/${code}/`);
  return `${lines.join("\n")}\n`;
}

function listText(): string {
  const width = Math.max(...ERROR_CODES.map((code) => code.length)) + 2;
  return ERROR_CODES.map(
    (code) => `${code.padEnd(width)}${EXPLANATIONS[code]?.en.summary ?? ""}\n`,
  ).join("");
}

/**
 * The text `explain` prints for its arguments, linking to the code's page under `site`; an
 * unknown code is a usage error.
 */
export function explain(code: string | undefined, json: boolean, site = DOCS_SITE): string {
  if (code === undefined) {
    return json ? `${JSON.stringify(ERROR_CODES.map(entryJson))}\n` : listText();
  }
  // Only ASCII letters are folded ([CG-CLI-13]): "ı".toUpperCase() is "I", and is no code.
  const folded = /^[A-Za-z0-9_]+$/.test(code) ? code.toUpperCase() : "";
  const known = ERROR_CODES.find((candidate) => candidate === folded);
  if (known === undefined) {
    // The caller's text is not repeated ([CG-CLI-10]).
    throw new UsageError(
      `unknown error code${didYouMean(code.trim(), ERROR_CODES)}; run '${PROGRAM} explain' to list them`,
      "explain",
    );
  }
  return json ? `${JSON.stringify(entryJson(known))}\n` : entryText(known, site);
}
