// Properties on random inputs from a seeded generator (the seed is printed on failure): the
// lexical executor's ranking equals the rules of executors.md section 8.2 computed afresh, and the
// JSON text parser reads back every JSON text it is given and rejects what is not JSON.
import assert from "node:assert/strict";
import { test } from "node:test";
import { rank } from "../../src/core/executors/lexical.js";
import type { CatalogEntry } from "../../src/core/executors/protocol.js";
import { parseJsonText } from "../../src/core/json/text.js";
import { generator } from "../random.js";

const SEEDS = Array.from({ length: 200 }, (_, index) => 1000 + index);

// Words that are neither stopwords nor touched by the plural rule (they do not end in "s"), so a
// text of them separated by spaces has exactly these words as its terms (executors.md 8.1).
const VOCABULARY = [
  "invoice",
  "refund",
  "route",
  "tax",
  "ledger",
  "audit",
  "quota",
  "alert",
  "token",
  "export",
];

function words(random: () => number, most: number): string[] {
  const count = Math.floor(random() * (most + 1));
  return Array.from(
    { length: count },
    () => VOCABULARY[Math.floor(random() * VOCABULARY.length)] as string,
  );
}

function randomCatalog(random: () => number): CatalogEntry[] {
  const size = 1 + Math.floor(random() * 6);
  return Array.from({ length: size }, (_, index) => ({
    id: `p::c${String.fromCharCode(97 + Math.floor(random() * 26))}${index}`,
    providerId: "p",
    name: words(random, 3).join(" "),
    description: words(random, 6).join(" "),
    tags: Array.from({ length: Math.floor(random() * 3) }, () => words(random, 2).join(" ")),
    ...(random() < 0.5 ? { whenToUse: words(random, 4).join(" ") } : {}),
  }));
}

/** Section 8.2 over space-separated vocabulary words, written out term by term. */
function expectedRanking(request: string, catalog: CatalogEntry[], limit: number) {
  const terms = (text: string) => text.split(" ").filter((word) => word !== "");
  const fields = (entry: CatalogEntry): Array<[number, string[]]> => [
    [3.0, terms(entry.name)],
    ...entry.tags.map((tag): [number, string[]] => [2.0, terms(tag)]),
    [1.5, terms(entry.whenToUse ?? "")],
    [1.0, terms(entry.description)],
  ];
  const tf = (term: string, entry: CatalogEntry) =>
    fields(entry).reduce(
      (sum, [weight, list]) => sum + weight * list.filter((t) => t === term).length,
      0,
    );
  const dl = (entry: CatalogEntry) =>
    fields(entry).reduce((sum, [weight, list]) => sum + weight * list.length, 0);
  const query = [...new Set(terms(request))];
  if (query.length === 0) return { status: "unknown", candidates: [] };
  const meanLength = catalog.reduce((sum, entry) => sum + dl(entry), 0) / catalog.length;
  const avgdl = meanLength === 0 ? 1 : meanLength;
  const idf = (term: string) => {
    const n = catalog.filter((entry) => tf(term, entry) > 0).length;
    return Math.log(1 + (catalog.length - n + 0.5) / (n + 0.5));
  };
  const k1 = 1.2;
  const b = 0.75;
  const denominator = (k1 + 1) * query.reduce((sum, term) => sum + idf(term), 0);
  const scored = catalog
    .map((entry) => {
      let score = 0;
      for (const term of query) {
        const frequency = tf(term, entry);
        if (frequency > 0) {
          score +=
            (idf(term) * frequency * (k1 + 1)) /
            (frequency + k1 * (1 - b + (b * dl(entry)) / avgdl));
        }
      }
      return { id: entry.id, confidence: Number((score / denominator).toFixed(4)) };
    })
    .filter((candidate) => candidate.confidence >= 0.05)
    .sort((x, y) => y.confidence - x.confidence || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
    .slice(0, limit);
  return { status: scored.length === 0 ? "no_match" : "matched", candidates: scored };
}

test("the lexical ranking equals section 8.2 computed afresh on random catalogs and requests", () => {
  const statuses = new Set<string>();
  for (const seed of SEEDS) {
    const random = generator(seed);
    const catalog = randomCatalog(random);
    const request = words(random, 4).join(" ");
    const limit = 1 + Math.floor(random() * 5);
    assert.deepEqual(
      rank(request, catalog, limit),
      expectedRanking(request, catalog, limit),
      `seed ${seed}: ${JSON.stringify({ request, limit, catalog })}`,
    );
    statuses.add(rank(request, catalog, limit).status);
  }
  // The inputs reach every outcome, so the comparison is not vacuous.
  assert.deepEqual([...statuses].sort(), ["matched", "no_match", "unknown"]);
});

test("candidates are ordered by confidence then id, within [0.05, 1), 4 decimals, at most limit", () => {
  for (const seed of SEEDS) {
    const random = generator(seed);
    const catalog = randomCatalog(random);
    const limit = 1 + Math.floor(random() * 5);
    const { candidates } = rank(words(random, 5).join(" "), catalog, limit);
    assert.ok(candidates.length <= limit, `seed ${seed}`);
    for (const [index, candidate] of candidates.entries()) {
      assert.ok(candidate.confidence >= 0.05 && candidate.confidence < 1, `seed ${seed}`);
      assert.equal(candidate.confidence, Number(candidate.confidence.toFixed(4)), `seed ${seed}`);
      const next = candidates[index + 1];
      if (next !== undefined) {
        assert.ok(
          candidate.confidence > next.confidence ||
            (candidate.confidence === next.confidence && candidate.id < next.id),
          `seed ${seed}`,
        );
      }
    }
  }
});

// -- the JSON text parser ------------------------------------------------------------------------

function randomValue(random: () => number, depth: number): unknown {
  const choice = Math.floor(random() * (depth > 2 ? 5 : 7));
  switch (choice) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return Math.floor((random() - 0.5) * 2 ** 40);
    case 3:
      return (random() - 0.5) * 1e6;
    case 4:
      return Array.from({ length: Math.floor(random() * 6) }, () =>
        String.fromCodePoint(Math.floor(random() * 0x2fff)),
      ).join("");
    case 5:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let index = Math.floor(random() * 4); index > 0; index -= 1) {
        object[`k${Math.floor(random() * 1000)}`] = randomValue(random, depth + 1);
      }
      return object;
    }
  }
}

test("every JSON text of a random value parses back to that value", () => {
  for (const seed of SEEDS) {
    const value = randomValue(generator(seed), 0);
    const text = JSON.stringify(value, null, seed % 2 === 0 ? 0 : 2);
    const parsed = parseJsonText(text);
    assert.ok(parsed.ok, `seed ${seed}: ${text}`);
    assert.deepEqual(parsed.value, value, `seed ${seed}: ${text}`);
  }
});

test("a random object text with one member name repeated is a duplicate-key fault", () => {
  for (const seed of SEEDS) {
    const random = generator(seed);
    const member = JSON.stringify(randomValue(random, 1));
    const text = `{"a":${member},"same":1,"b":${member},"same":2}`;
    const parsed = parseJsonText(text);
    assert.ok(!parsed.ok && parsed.fault.kind === "duplicate", `seed ${seed}: ${text}`);
  }
});

test("a strict prefix of a random object text is never JSON", () => {
  for (const seed of SEEDS) {
    const random = generator(seed);
    const text = JSON.stringify({ v: randomValue(random, 1) });
    const cut = Math.floor(random() * text.length);
    const parsed = parseJsonText(text.slice(0, cut));
    assert.ok(!parsed.ok && parsed.fault.kind === "syntax", `seed ${seed}: ${text.slice(0, cut)}`);
  }
});
