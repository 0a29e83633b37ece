// What an error code means ([CG-CLI-13]), from the generated error registry and its documentation
// texts: the entry as text (linking to the code's page) or as JSON, and the index of every code.
// The `explain` command of the CLI prints these; it never opens a graph.

import { ACTION_TEXTS, EXPLANATIONS, PHASE_TEXTS } from "../_generated/explanations.js";
import { ERROR_CODES, type ErrorCode, REGISTRY } from "../_generated/taxonomy.js";

/** The registry entry of a code with its documentation texts, as `--json` prints it. */
export function explainJson(code: ErrorCode) {
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

export function explainText(code: ErrorCode, site: string = DOCS_SITE): string {
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

/** Every code with its English summary, one per line. */
export function explainIndexText(): string {
  const width = Math.max(...ERROR_CODES.map((code) => code.length)) + 2;
  return ERROR_CODES.map(
    (code) => `${code.padEnd(width)}${EXPLANATIONS[code]?.en.summary ?? ""}\n`,
  ).join("");
}

/** Every code's entry as JSON, in registry order. */
export function explainIndexJson(): string {
  return `${JSON.stringify(ERROR_CODES.map(explainJson))}\n`;
}

/** The code `text` names (ASCII letters folded to upper case, [CG-CLI-13]), or undefined. */
export function lookup(text: string): ErrorCode | undefined {
  // Only ASCII letters are folded: "ı".toUpperCase() is "I", and is no code.
  const folded = /^[A-Za-z0-9_]+$/.test(text) ? text.toUpperCase() : "";
  return ERROR_CODES.find((candidate) => candidate === folded);
}
