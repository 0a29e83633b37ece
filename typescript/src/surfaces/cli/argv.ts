// The program's arguments as the process received them ([CG-CLI-19]). Node decodes argv from
// UTF-8 lossily (a byte that is not UTF-8 becomes U+FFFD, indistinguishable from a real U+FFFD),
// so where the platform shows a process its own command line as bytes (Linux: /proc/self/cmdline)
// the arguments are decoded again here, each byte that is not UTF-8 as the lone surrogate
// U+DC80..U+DCFF (Python's "surrogateescape"), which `run` refuses as a usage error. Elsewhere the
// arguments are Node's (such a byte cannot be told from U+FFFD there).
import { readFileSync } from "node:fs";

/** The arguments after the script, with bytes that are not UTF-8 kept as lone surrogates. */
export function programArguments(argv: readonly string[] = process.argv): string[] {
  const given = argv.slice(2);
  let raw: Buffer;
  try {
    raw = readFileSync("/proc/self/cmdline");
  } catch {
    return given;
  }
  const items = splitAtNul(raw);
  if (items.length < given.length) return given;
  const tail = items.slice(items.length - given.length);
  const decoded = tail.map(surrogateEscaped);
  // Only when these bytes are the arguments Node decoded: a valid one decodes to the same text,
  // an invalid one was decoded with replacement characters.
  const same = decoded.every((text, index) =>
    isWellFormed(text) ? text === given[index] : (given[index] ?? "").includes("\ufffd"),
  );
  return same ? decoded : given;
}

function splitAtNul(raw: Buffer): Buffer[] {
  const items: Buffer[] = [];
  let start = 0;
  for (let at = 0; at < raw.length; at += 1) {
    if (raw[at] === 0) {
      items.push(raw.subarray(start, at));
      start = at + 1;
    }
  }
  if (start < raw.length) items.push(raw.subarray(start));
  return items;
}

function isWellFormed(text: string): boolean {
  return !/[\uDC80-\uDCFF]/.test(text);
}

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** UTF-8 text, each byte outside a valid sequence as U+DC00 + byte. */
export function surrogateEscaped(bytes: Uint8Array): string {
  try {
    return STRICT.decode(bytes);
  } catch {
    // decoded piece by piece below
  }
  let text = "";
  let start = 0;
  let at = 0;
  while (at < bytes.length) {
    const length = sequenceLength(bytes, at);
    if (length > 0) {
      at += length;
      continue;
    }
    text += STRICT.decode(bytes.subarray(start, at));
    text += String.fromCharCode(0xdc00 + (bytes[at] as number));
    at += 1;
    start = at;
  }
  return text + STRICT.decode(bytes.subarray(start));
}

/** The length of the valid UTF-8 sequence at `at` (RFC 3629: no overlong, no surrogate), or 0. */
function sequenceLength(bytes: Uint8Array, at: number): number {
  const first = bytes[at] as number;
  if (first < 0x80) return 1;
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (first >= 0xc2 && first <= 0xdf) length = 2;
  else if (first >= 0xe0 && first <= 0xef) {
    length = 3;
    if (first === 0xe0) low = 0xa0;
    if (first === 0xed) high = 0x9f;
  } else if (first >= 0xf0 && first <= 0xf4) {
    length = 4;
    if (first === 0xf0) low = 0x90;
    if (first === 0xf4) high = 0x8f;
  } else return 0;
  for (let next = 1; next < length; next += 1) {
    const byte = bytes[at + next];
    if (byte === undefined || byte < (next === 1 ? low : 0x80) || byte > (next === 1 ? high : 0xbf))
      return 0;
  }
  return length;
}
