// The `codex` executor (executors.md section 10): the Codex CLI found on PATH, run as
// `codex exec` in a read-only sandbox and an empty temporary folder. Before anything runs, the
// prerequisites are checked — platform, version floor, a working platform sandbox — and a
// missing one is CG_MODEL_EXECUTOR_UNSAFE: there is never a fallback to an unsandboxed run. Every
// process (probes included) runs as its own process group, killed as a tree on the deadline, on
// cancellation and on close.
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import { parseJsonBytes, REQUEST_TEXT } from "../json/text.js";
import { nodeOs } from "./on-first-use.js";
import { runTree, type TreeOutcome, TreeRegistry } from "./process-tree.js";
import { dropEmptyReasons, jobText, MATCH_INSTRUCTIONS, STRICT_OUTPUT_SCHEMA } from "./prompt.js";
import {
  type Executor,
  type ExecutorDiagnosis,
  ExecutorError,
  type ExecutorFactory,
  type ExecutorJob,
  type ModelSection,
} from "./protocol.js";

const NOT_ON_PATH = "the codex program is not on PATH";

/** The first release with both `exec --output-schema` and `codex sandbox`. */
export const CODEX_VERSION_FLOOR: readonly [number, number, number] = [0, 46, 0];

export interface CodexExecutorOptions {
  /** Passed as `--model`; omitted: Codex's default. */
  readonly model?: string;
}

/** Where PATH and the program's environment come from; the process environment by default. */
export type EnvironmentSource = () => Readonly<Record<string, string | undefined>>;

// The classification of a failed run (executors.md section 10): the annex's patterns, tried in
// this order over the last 64 KiB of stdout and of stderr. Without the `u` flag, `i` folds ASCII
// letters only and `\b` is an ASCII word boundary, as the annex says.
/** RETRY: output that means "try later" (rate limits, quotas, overload). */
const RETRYABLE_WORDS =
  /rate.?limit|session limit|too many requests|quota|overloaded|\b(?:429|529)\b/i;
/** CREDENTIALS: output that means the host must fix the login or the key. */
const CREDENTIAL_WORDS =
  /log ?in|logged|auth|unauthori[sz]ed|\b401\b|\b403\b|api[ _-]?key|credential/i;
/** CONTEXT: output that means the prompt does not fit the model. */
const CONTEXT_WORDS = /context[ _-]?(length|window)|maximum context/i;

export class CodexExecutor implements Executor {
  readonly name = "codex";
  readonly #options: CodexExecutorOptions;
  readonly #environment: EnvironmentSource;
  readonly #trees = new TreeRegistry();
  /** Identities of binaries that passed the version and sandbox probes. */
  readonly #verified = new Set<string>();

  constructor(
    options: CodexExecutorOptions = {},
    environment: EnvironmentSource = () => process.env,
  ) {
    this.#options = options;
    this.#environment = environment;
  }

  async execute(job: ExecutorJob): Promise<unknown> {
    const environment = this.#environment();
    const program = await this.checkPrerequisites(job);
    const folder = await fs.mkdtemp(path.join(nodeOs().tmpdir(), "capability-graph-codex-"));
    try {
      return await this.#run(program, environment, folder, job);
    } finally {
      await fs.rm(folder, { recursive: true, force: true });
    }
  }

  async close(): Promise<void> {
    await this.#trees.stopAll();
  }

  /**
   * The checks of executors.md section 10 before any run, bounded by the job's deadline and
   * signal; resolves with the program's path. A passed check is remembered for the same binary.
   */
  async checkPrerequisites(job: ExecutorJob): Promise<string> {
    const environment = this.#environment();
    const sandbox = sandboxPlatform();
    if (sandbox === undefined) throw unsafe("the platform is neither Linux nor macOS");
    const program = await findOnPath("codex", environment.PATH);
    if (program === undefined) {
      throw new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config", NOT_ON_PATH);
    }
    const identity = await binaryIdentity(program);
    if (this.#verified.has(identity)) return program;

    const probe = (args: string[]): Promise<TreeOutcome> =>
      runTree(
        { program, args, env: environment, deadline: job.deadline, signal: job.signal },
        this.#trees,
      );
    const version = await probe(["--version"]);
    stopUnlessExited(version);
    if (version.kind !== "exited") throw cannotStart(program);
    if (version.exitCode !== 0 || !meetsFloor(version.stdout)) {
      throw unsafe(
        `${program} --version does not report a version of at least ${CODEX_VERSION_FLOOR.join(".")}`,
      );
    }
    const sandboxProbe = await probe(["sandbox", sandbox, "--", "true"]);
    stopUnlessExited(sandboxProbe);
    if (sandboxProbe.kind !== "exited") throw cannotStart(program);
    if (sandboxProbe.exitCode !== 0) {
      throw unsafe(
        `the platform sandbox does not work (${program} sandbox ${sandbox} -- true failed)`,
      );
    }
    this.#verified.add(identity);
    return program;
  }

  async #run(
    program: string,
    environment: Readonly<Record<string, string | undefined>>,
    folder: string,
    job: ExecutorJob,
  ): Promise<unknown> {
    const work = path.join(folder, "work");
    const schemaFile = path.join(folder, "schema.json");
    const answerFile = path.join(folder, "last-message.json");
    await fs.mkdir(work);
    await fs.writeFile(schemaFile, JSON.stringify(STRICT_OUTPUT_SCHEMA));
    const args = [
      "exec",
      "--sandbox",
      "read-only",
      "--skip-git-repo-check",
      "--cd",
      work,
      "--color",
      "never",
      "--output-schema",
      schemaFile,
      "--output-last-message",
      answerFile,
    ];
    if (this.#options.model !== undefined) args.push("--model", this.#options.model);
    args.push("-");
    const input = `${MATCH_INSTRUCTIONS}\n\n${jobText(job)}\n`;
    const outcome = await runTree(
      {
        program,
        args,
        cwd: work,
        env: environment,
        input,
        deadline: job.deadline,
        signal: job.signal,
      },
      this.#trees,
    );
    stopUnlessExited(outcome);
    if (outcome.kind !== "exited") throw new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config");
    if (outcome.exitCode !== 0) throw failedRunError(`${outcome.stdout}\n${outcome.stderr}`);
    return dropEmptyReasons(await readAnswer(answerFile, job.maxOutputBytes));
  }
}

// The messages below are for doctor's report to the host; the match pipeline never shows them.
function unsafe(reason: string): ExecutorError {
  return new ExecutorError("CG_MODEL_EXECUTOR_UNSAFE", undefined, reason);
}

function cannotStart(program: string): ExecutorError {
  return new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config", `${program} cannot be started`);
}

/** A run that was stopped is a timeout or a cancellation, whatever the program printed. */
function stopUnlessExited(outcome: TreeOutcome): void {
  if (outcome.kind === "timeout") {
    throw new ExecutorError(
      "CG_MODEL_TIMEOUT",
      undefined,
      "the codex program did not finish in time",
    );
  }
  if (outcome.kind === "cancelled") {
    throw new ExecutorError("CG_MODEL_CANCELLED", undefined, "the codex program was stopped");
  }
}

/** The classification of a non-zero exit, by what the program wrote (executors.md section 10). */
function failedRunError(output: string): ExecutorError {
  if (RETRYABLE_WORDS.test(output)) return new ExecutorError("CG_MODEL_UNAVAILABLE", "retry");
  if (CREDENTIAL_WORDS.test(output))
    return new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config");
  if (CONTEXT_WORDS.test(output)) return new ExecutorError("CG_MODEL_CONTEXT_EXCEEDED");
  return new ExecutorError("CG_MODEL_UNAVAILABLE", "retry");
}

/**
 * The last message: at most maxOutputBytes of UTF-8 JSON. Only a regular file the run wrote is
 * read (executors.md section 10): a link, fifo, device or folder planted in its place is neither
 * followed nor waited on. The entry is examined without following it, opened with O_NOFOLLOW |
 * O_NONBLOCK (a fifo swapped in after the examination does not block the open, and a link is
 * refused), its type checked again on the open file, and its size judged before a byte is read;
 * at most maxOutputBytes + 1 bytes are read, so every step is bounded.
 */
async function readAnswer(file: string, maxOutputBytes: number): Promise<unknown> {
  const invalid = (): ExecutorError => new ExecutorError("CG_MODEL_OUTPUT_INVALID");
  let handle: fs.FileHandle | undefined;
  let bytes: Buffer;
  try {
    if (!(await fs.lstat(file)).isFile()) throw invalid();
    handle = await fs.open(
      file,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY,
    );
    const stat = await handle.stat();
    if (!stat.isFile()) throw invalid();
    if (stat.size > maxOutputBytes) throw new ExecutorError("CG_MODEL_OUTPUT_TOO_LARGE");
    const buffer = Buffer.alloc(maxOutputBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxOutputBytes) throw new ExecutorError("CG_MODEL_OUTPUT_TOO_LARGE");
    bytes = buffer.subarray(0, length);
  } catch (error) {
    if (error instanceof ExecutorError) throw error;
    throw invalid();
  } finally {
    await handle?.close().catch(() => undefined);
  }
  // By the rules of a request text, as the openai executor's content (CG-MODEL-26): no byte
  // order mark, no NaN, no duplicate member, no container at depth 33, JSON whitespace only.
  const read = parseJsonBytes(bytes, REQUEST_TEXT);
  if (!read.ok) throw invalid();
  return read.value;
}

/** The argument of `codex sandbox` for this platform, or undefined where none is supported. */
function sandboxPlatform(): "linux" | "macos" | undefined {
  if (process.platform === "linux") return "linux";
  if (process.platform === "darwin") return "macos";
  return undefined;
}

/** The first executable regular file named `name` in the PATH's folders (absolute ones only). */
async function findOnPath(
  name: string,
  searchPath: string | undefined,
): Promise<string | undefined> {
  for (const folder of (searchPath ?? "").split(path.delimiter)) {
    if (!path.isAbsolute(folder)) continue;
    const candidate = path.join(folder, name);
    try {
      const stat = await fs.stat(candidate);
      if (!stat.isFile()) continue;
      await fs.access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}

/** Real path, device, inode, size and modification time: a changed binary is probed again. */
async function binaryIdentity(program: string): Promise<string> {
  const real = await fs.realpath(program);
  const stat = await fs.stat(real, { bigint: true });
  return JSON.stringify([
    real,
    String(stat.dev),
    String(stat.ino),
    String(stat.size),
    String(stat.mtimeNs),
  ]);
}

/** Whether `codex --version` printed a version X.Y.Z at or above the floor. */
export function meetsFloor(versionOutput: string): boolean {
  // The version pattern of executors.md section 10: 1 to 6 digits per part, not inside a longer
  // dotted number.
  const found = /(?<![0-9.])([0-9]{1,6})\.([0-9]{1,6})\.([0-9]{1,6})(?![0-9.])/.exec(versionOutput);
  if (found === null) return false;
  const version = [Number(found[1]), Number(found[2]), Number(found[3])];
  for (let index = 0; index < 3; index += 1) {
    const have = version[index] ?? 0;
    const need = CODEX_VERSION_FLOOR[index] ?? 0;
    if (have !== need) return have > need;
  }
  return true;
}

function optionsOf(model: ModelSection): CodexExecutorOptions {
  return typeof model.model === "string" ? { model: model.model } : {};
}

/** The registry entry of `codex`. */
export const codexExecutorFactory: ExecutorFactory = {
  create(model: ModelSection): Executor {
    return new CodexExecutor(optionsOf(model));
  },
  async diagnose(_model: ModelSection, signal: AbortSignal): Promise<ExecutorDiagnosis> {
    const probe = new CodexExecutor();
    const job: ExecutorJob = {
      request: "prerequisites",
      context: {},
      catalog: [],
      limit: 1,
      deadline: performance.now() + 30_000,
      maxOutputBytes: 1,
      signal,
    };
    try {
      const program = await probe.checkPrerequisites(job);
      return {
        status: "ok",
        message: `${program} meets the version floor ${CODEX_VERSION_FLOOR.join(".")} and its sandbox works`,
      };
    } catch (error) {
      if (error instanceof ExecutorError && error.message === NOT_ON_PATH) {
        return { status: "fail", message: "The codex executor needs the codex CLI on PATH" };
      }
      const reason =
        error instanceof ExecutorError ? error.message : "the prerequisites cannot be checked";
      return { status: "fail", message: `The codex executor cannot run safely: ${reason}` };
    } finally {
      await probe.close();
    }
  },
};
