#!/usr/bin/env node
// The test command of a mutation run (scripts/mutation.mjs): StrykerJS's command runner starts it
// once per mutant, in the sandbox where the instrumented sources were built, with the mutant's id
// in __STRYKER_ACTIVE_MUTANT__. It runs the conformance suite against the sandbox's build (the
// manifest conformance.json of the current folder) and exits with the suite's status: a failing
// suite kills the mutant. A mutant outside the sample is not judged: it exits 0 at once, and
// scripts/mutation.mjs leaves it out of every figure.
//
// Its settings come from the environment variable CG_MUTATION_ORACLE (JSON), which
// scripts/mutation.mjs sets: {"argv": [the cg-conformance command without -i], "sample": [ids]}.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";

const settings = JSON.parse(process.env.CG_MUTATION_ORACLE ?? "null");
if (settings === null) {
  console.error("mutation-oracle: CG_MUTATION_ORACLE is not set (run scripts/mutation.mjs)");
  process.exit(2);
}
const active = process.env.__STRYKER_ACTIVE_MUTANT__;
if (active !== undefined && !settings.sample.includes(active)) {
  process.exit(0);
}
const [command, ...args] = settings.argv;
const run = spawnSync(command, [...args, "-i", resolve("conformance.json")], {
  stdio: ["ignore", "inherit", "inherit"],
});
process.exit(run.status ?? 1);
