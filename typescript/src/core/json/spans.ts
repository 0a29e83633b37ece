// Spans of member values inside a JSON text that is known to be well-formed (it passed a parser):
// the text of one value, found without parsing the rest, so that what a parser would round or
// rewrite (integer literals beyond 2^53) is kept exactly as written.

/**
 * The text of the value at the member path `names` (member names from the root object), or
 * undefined when a member is missing or a value on the way is not an object. Like JSON.parse, the
 * last of repeated names wins.
 */
export function memberText(text: string, names: readonly string[]): string | undefined {
  let span: [number, number] = [skipWhitespace(text, 0), text.length];
  for (const name of names) {
    const found = memberSpan(text, span[0], name);
    if (found === undefined) return undefined;
    span = found;
  }
  return text.slice(span[0], span[1]);
}

function skipWhitespace(text: string, index: number): number {
  let at = index;
  while (at < text.length && " \t\n\r".includes(text.charAt(at))) at += 1;
  return at;
}

/**
 * The end of the string starting at `index` (its opening quote), past the closing quote. Each
 * quote is found with indexOf, so a long string costs one native scan: a quote is the closing one
 * when an even number of backslashes precedes it.
 */
function skipString(text: string, index: number): number {
  let at = index + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (quote - backslashes - 1 >= at && text.charCodeAt(quote - backslashes - 1) === 0x5c) {
      backslashes += 1;
    }
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** The end of the JSON value starting at `index`. */
function skipValue(text: string, index: number): number {
  const first = text.charAt(index);
  if (first === '"') return skipString(text, index);
  if (first === "{" || first === "[") {
    let depth = 0;
    let at = index;
    while (at < text.length) {
      const char = text.charAt(at);
      if (char === '"') {
        at = skipString(text, at);
        continue;
      }
      if (char === "{" || char === "[") depth += 1;
      else if (char === "}" || char === "]") {
        depth -= 1;
        if (depth === 0) return at + 1;
      }
      at += 1;
    }
    return at;
  }
  let at = index;
  while (at < text.length && !",}] \t\n\r".includes(text.charAt(at))) at += 1;
  return at;
}

/** The [start, end) span of the value of the last member `name` of the object at `index`. */
function memberSpan(text: string, index: number, name: string): [number, number] | undefined {
  if (text.charAt(index) !== "{") return undefined;
  let found: [number, number] | undefined;
  let at = skipWhitespace(text, index + 1);
  while (at < text.length && text.charAt(at) === '"') {
    const keyEnd = skipString(text, at);
    const key: unknown = JSON.parse(text.slice(at, keyEnd));
    at = skipWhitespace(text, keyEnd) + 1; // past the colon
    const valueStart = skipWhitespace(text, at);
    const valueEnd = skipValue(text, valueStart);
    if (key === name) found = [valueStart, valueEnd];
    at = skipWhitespace(text, valueEnd);
    if (text.charAt(at) === ",") at = skipWhitespace(text, at + 1);
  }
  return found;
}
