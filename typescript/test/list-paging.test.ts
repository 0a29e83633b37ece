// Paging through a selection ([CG-LIST-1], [CG-CUR-8]): every page after the first is a slice of
// the selection its filters make, whichever other selections were paged in between. The graph
// keeps a few selections for the pages after the first (so that paging through everything costs
// each page its own items; bench_scale measures that it grows linearly): this pins that what it
// keeps never changes a page. The same case as the reference's tests/test_list_paging.py.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CapabilityGraph } from "../src/core/graph.js";

const TAGS = ["red", "green", "blue"];

function definition(providerId: string, count: number) {
  return {
    providerId,
    name: providerId,
    version: "1",
    capabilities: Array.from({ length: count }, (_, index) => ({
      id: `cap.${String(index).padStart(3, "0")}`,
      name: `Capability ${index}`,
      description: "A capability.",
      tags: TAGS.filter((_, position) => index % (position + 2) === 0),
    })),
  };
}

const CONFIG = {
  providers: [{ definition: definition("alpha", 40) }, { definition: definition("beta", 25) }],
};

/** Seven filters: more than the graph keeps, so paging through them in turn drops kept ones. */
const FILTERS: ReadonlyArray<{ providers?: string[]; tags?: string[] }> = [
  {},
  { tags: ["red"] },
  { tags: ["green"] },
  { tags: ["blue", "red"] },
  { providers: ["beta"] },
  { providers: ["alpha"], tags: ["green"] },
  { providers: ["beta", "alpha"], tags: ["red"] },
];

test("paging selections in turn gives each its whole selection, in order", async () => {
  const graph = await CapabilityGraph.open(CONFIG);
  try {
    const wanted: string[][] = [];
    for (const filters of FILTERS)
      wanted.push((await graph.list({ ...filters, limit: 500 })).items.map((item) => item.id));
    const seen: string[][] = FILTERS.map(() => []);
    const cursors: (string | undefined)[] = FILTERS.map(() => undefined);
    const done = FILTERS.map(() => false);
    while (done.includes(false)) {
      for (const [index, filters] of FILTERS.entries()) {
        if (done[index]) continue;
        const cursor = cursors[index];
        const page = await graph.list({ ...filters, limit: 3, ...(cursor ? { cursor } : {}) });
        seen[index]?.push(...page.items.map((item) => item.id));
        cursors[index] = page.nextCursor;
        done[index] = page.nextCursor === undefined;
      }
    }
    assert.deepEqual(seen, wanted);
    assert.ok(wanted.every((ids) => ids.length > 0));
  } finally {
    await graph.close();
  }
});
