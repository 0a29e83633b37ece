// Running an agent program as a process tree that can always be stopped (executors.md section
// 10, [CG-MODEL-4]). The program is spawned detached, so it leads its own process group and
// everything it starts joins that group; stopping sends TERM to the whole group, then KILL after
// one second, and settles only when no live member of the group is left. A deadline, the job's
// abort signal and the executor's close all stop it the same way.
import { readdirSync, readFileSync } from "node:fs";
import { nodeChildProcess } from "./on-first-use.js";

/** How long a group gets to honour TERM before it is killed. */
const TERM_GRACE_MS = 1000;
/** How long to wait for the kernel to take a KILLed group away before giving up waiting. */
const KILL_WAIT_MS = 5000;
const POLL_MS = 5;
/** How long the output pipes may stay open once the group is gone (a process outside it). */
const STREAM_WAIT_MS = 1000;
/** The tail of stdout and of stderr kept for classifying a failed run, in bytes. */
const CAPTURE_BYTES = 64 * 1024;

export interface TreeRun {
  /** Absolute path of the program. */
  readonly program: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Written to stdin, which is then closed (empty when omitted). */
  readonly input?: string;
  /** The absolute deadline on the `performance.now()` clock. */
  readonly deadline: number;
  readonly signal: AbortSignal;
}

/** How a run ended. `stdout`/`stderr` are the last CAPTURE_BYTES of each, decoded leniently. */
export type TreeOutcome =
  | {
      readonly kind: "exited";
      readonly exitCode: number;
      readonly stdout: string;
      readonly stderr: string;
    }
  | { readonly kind: "spawn-failed"; readonly errno: string }
  | { readonly kind: "timeout" }
  | { readonly kind: "cancelled" };

/** The runs in progress, so that an executor's close can stop them all. */
export class TreeRegistry {
  readonly #closers = new Set<() => Promise<void>>();

  add(closer: () => Promise<void>): void {
    this.#closers.add(closer);
  }

  delete(closer: () => Promise<void>): void {
    this.#closers.delete(closer);
  }

  /** Stop every run in progress (each settles as cancelled) and wait until all have stopped. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#closers].map((closer) => closer()));
  }
}

/**
 * Run a program to its end, or until the deadline, the abort signal or `registry.stopAll()`;
 * in the last three cases the whole group is stopped before the promise settles.
 */
export function runTree(run: TreeRun, registry: TreeRegistry): Promise<TreeOutcome> {
  if (run.signal.aborted) return Promise.resolve({ kind: "cancelled" });
  return new Promise<TreeOutcome>((resolve) => {
    const child = nodeChildProcess().spawn(run.program, [...run.args], {
      cwd: run.cwd,
      env: run.env as NodeJS.ProcessEnv | undefined,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stdout = new TailBuffer(CAPTURE_BYTES);
    const stderr = new TailBuffer(CAPTURE_BYTES);
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    // A program that exits without reading its input closes the pipe: not an error of ours.
    child.stdin.on("error", () => undefined);

    let stopping: Promise<void> | undefined;
    let settled = false;
    const group = child.pid;
    const stop = (): Promise<void> => {
      stopping ??= group === undefined ? Promise.resolve() : stopGroup(group);
      return stopping;
    };
    const settle = (outcome: TreeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      run.signal.removeEventListener("abort", onAbort);
      registry.delete(closer);
      resolve(outcome);
    };
    const stopThen = (outcome: TreeOutcome): Promise<void> => stop().then(() => settle(outcome));
    const onAbort = (): void => void stopThen({ kind: "cancelled" });
    const closer = (): Promise<void> => stopThen({ kind: "cancelled" });
    run.signal.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(
      () => void stopThen({ kind: "timeout" }),
      Math.max(0, run.deadline - performance.now()),
    );
    registry.add(closer);

    const closed = new Promise<void>((done) => child.once("close", () => done()));
    child.on("error", (error: NodeJS.ErrnoException) => {
      // Only a failure to start is reported here; a kill that races an exit is not an outcome.
      if (group === undefined) settle({ kind: "spawn-failed", errno: error.code ?? "EUNKNOWN" });
    });
    child.on("exit", (code, signal) => {
      if (stopping !== undefined) return;
      // The leader is gone; whatever it left running in its group is stopped before the answer
      // is used (a finished run leaves no process behind).
      const exitCode = code ?? (signal === null ? 1 : 128);
      // 'exit' may come before the pipes have delivered everything the program wrote: the output
      // is taken once they are closed (every writer gone), or after STREAM_WAIT_MS should a
      // process outside the group still hold them.
      void stop()
        .then(() => withinBound(closed, STREAM_WAIT_MS))
        .then(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          settle({ kind: "exited", exitCode, stdout: stdout.text(), stderr: stderr.text() });
        });
    });
    child.stdin.end(run.input ?? "");
  });
}

/** Wait for `promise`, at most `ms` milliseconds. */
async function withinBound(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((done) => {
    timer = setTimeout(done, ms);
  });
  await Promise.race([promise, expired]);
  clearTimeout(timer);
}

/** TERM to the group, KILL after the grace period, and wait until no live member is left. */
async function stopGroup(group: number): Promise<void> {
  signalGroup(group, "SIGTERM");
  if (await waitForGroupEnd(group, TERM_GRACE_MS)) return;
  signalGroup(group, "SIGKILL");
  await waitForGroupEnd(group, KILL_WAIT_MS);
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

async function waitForGroupEnd(group: number, withinMs: number): Promise<boolean> {
  const until = performance.now() + withinMs;
  for (;;) {
    if (!groupHasLiveMember(group)) return true;
    if (performance.now() >= until) return false;
    await new Promise((wake) => setTimeout(wake, POLL_MS));
  }
}

/** Whether any process, zombies included, is still in the group. */
function groupExists(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a process of the group still runs. `kill(-group, 0)` also counts zombies, which a
 * reparenting init may take a while to reap; on Linux the group's members are read from /proc
 * so that a dead-but-unreaped process does not count as running.
 */
export function groupHasLiveMember(group: number): boolean {
  if (!groupExists(group)) return false;
  if (process.platform !== "linux") return true;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat !== undefined && stat.group === group && stat.state !== "Z" && stat.state !== "X") {
      return true;
    }
  }
  return false;
}

/** Whether one process still runs (a zombie does not), for callers that know a pid. */
export function processIsRunning(pid: number): boolean {
  if (process.platform === "linux") {
    const stat = procStat(pid);
    return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** State and process group from /proc/PID/stat (the fields after the parenthesized name). */
function procStat(pid: number): { state: string; group: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const group = Number(fields[2]);
  return state === undefined ? undefined : { state, group };
}

/** Keeps only the last `limit` bytes written to it. */
class TailBuffer {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#size - (this.#chunks[0]?.length ?? 0) >= this.#limit && this.#chunks.length > 1) {
      this.#size -= this.#chunks.shift()?.length ?? 0;
    }
  }

  text(): string {
    const all = Buffer.concat(this.#chunks);
    return all.subarray(Math.max(0, all.length - this.#limit)).toString("utf8");
  }
}
