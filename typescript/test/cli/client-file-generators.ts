// Seeded generators of client files shared by the client-file property tests: a small
// deterministic generator (mulberry32) and JSON documents a Cursor file may hold, in the usual
// layouts. The same seed gives the same case, so a failure names its seed and replays.

import { generator } from "../random.js";

export { generator };

/** An integer from `low` to `high`, both included. */
export function integer(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** One of `items`, which must not be empty. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[integer(random, 0, items.length - 1)] as T;
}

const ALPHABET = [
  "a",
  "Z",
  "0",
  " ",
  '"',
  "\\",
  "/",
  "\n",
  "\u00e9",
  "\u4e2d",
  "\ud83d\ude00",
  "{",
  "}",
  ",",
  ":",
];

export function randomString(random: () => number): string {
  const length = Math.floor(random() * 6);
  let text = "";
  for (let index = 0; index < length; index += 1)
    text += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return text;
}

function randomValue(random: () => number, depth: number): unknown {
  const kind = Math.floor(random() * (depth > 2 ? 4 : 6));
  switch (kind) {
    case 0:
      return randomString(random);
    case 1:
      return random() < 0.5
        ? Math.floor(random() * 2000) - 1000
        : Number((random() * 100).toFixed(3));
    case 2:
      return random() < 0.5;
    case 3:
      return null;
    case 4:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
    default:
      return randomObject(random, depth + 1);
  }
}

/** An object of up to three members whose keys start with `k`, nested up to a few levels. */
export function randomObject(random: () => number, depth: number): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  const size = Math.floor(random() * 4);
  for (let index = 0; index < size; index += 1)
    object[`k${randomString(random)}`] = randomValue(random, depth);
  return object;
}

/** A Cursor document: an object, often with an `mcpServers` object of other servers. */
export function randomDocument(random: () => number): Record<string, unknown> {
  const document = randomObject(random, 0);
  if (random() < 0.6) {
    const servers: Record<string, unknown> = {};
    for (let index = 0; index < Math.floor(random() * 3); index += 1) {
      servers[`server-${index}`] = { command: randomString(random), args: [randomString(random)] };
    }
    document.mcpServers = servers;
  }
  return document;
}

/** The document's text: compact or indented (spaces or a tab), maybe a final newline, maybe CRLF. */
export function layout(document: unknown, random: () => number): string {
  const indents: Array<number | string> = [0, 2, 4, "\t"];
  let text = JSON.stringify(document, null, indents[Math.floor(random() * indents.length)]);
  if (random() < 0.5) text += "\n";
  if (random() < 0.25) text = text.replaceAll("\n", "\r\n");
  return text;
}
