// How many cases a bounded battery loop runs. The default CI run takes the counts written in
// the tests; the TypeScript stress session sets CG_STRESS_SCALE (a positive integer) to run the
// same generators and checks on that many times more cases, so a failure found there replays
// here from its seed.

/** `count` times CG_STRESS_SCALE (1 when unset or not a positive integer). */
export function scaled(count: number): number {
  const scale = Number(process.env.CG_STRESS_SCALE ?? "1");
  return Number.isSafeInteger(scale) && scale > 0 ? count * scale : count;
}
