import { test } from "node:test";
import { loadVectors, runsOnSdk, runVector } from "./vectors.js";

// One test per SDK-surface vector of the conformance suite, named by the vector's file.
for (const { file, vector } of loadVectors()) {
  if (!runsOnSdk(vector)) continue;
  test(`conformance vector ${file} passes on the SDK`, async () => {
    await runVector(vector);
  });
}
