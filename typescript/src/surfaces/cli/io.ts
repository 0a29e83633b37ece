// The CLI's standard streams and what a failure of one means ([CG-CLI-7]): stdout that is closed,
// full or broken ends the command with exit status 74 (with one line on stderr, and none when the
// reader of stdout went away); a failure of stderr itself changes nothing.
import type { Readable, Writable } from "node:stream";
import type { ErrorObject } from "../../core/errors.js";

/** Exit statuses of the CLI (spec section 11.4). */
export const EXIT = {
  ok: 0,
  graphError: 1,
  usage: 2,
  conflict: 3,
  defect: 70,
  stream: 74,
  interrupted: 130,
} as const;

/** A standard stream the command needs failed: the command ends with exit status 74. */
export class StreamFailure extends Error {
  readonly stream: "stdin" | "stdout";
  /** The reader of stdout went away (EPIPE): nothing is written on stderr about it. */
  readonly readerGone: boolean;

  constructor(stream: "stdin" | "stdout", readerGone = false) {
    super(`${stream} failed`);
    this.name = "StreamFailure";
    this.stream = stream;
    this.readerGone = readerGone;
  }
}

function write(stream: Writable, text: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableEnded) {
      resolve(Object.assign(new Error("closed"), { code: "EPIPE" }));
      return;
    }
    try {
      stream.write(text, (error) => resolve(error ?? undefined));
    } catch (error) {
      resolve(error as NodeJS.ErrnoException);
    }
  });
}

export class Io {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;

  constructor(stdin: Readable, stdout: Writable, stderr: Writable) {
    this.stdin = stdin;
    this.stdout = stdout;
    this.stderr = stderr;
    // A broken pipe is reported through the write callbacks below; without a listener Node would
    // also raise it as an uncaught 'error' event.
    stdout.on("error", () => {});
    stderr.on("error", () => {});
  }

  /** Write to stdout; throws StreamFailure when stdout fails. */
  async out(text: string): Promise<void> {
    const error = await write(this.stdout, text);
    if (error !== undefined) throw new StreamFailure("stdout", error.code === "EPIPE");
  }

  /** Write to stderr; a failure of stderr itself is ignored (the exit status is unchanged). */
  async err(text: string): Promise<void> {
    await write(this.stderr, text);
  }

  /** The error envelope of a failed graph command: one line on stderr ([CG-CLI-2]). */
  async envelope(error: ErrorObject): Promise<void> {
    await this.err(`${JSON.stringify({ ok: false, error })}\n`);
  }
}
