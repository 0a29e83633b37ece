// Fake `codex` programs for the codex executor tests: small POSIX shell scripts written into a
// fresh folder that the executor finds on PATH. Each records its calls, its standard input and
// its working folder next to itself, so a test can see what the executor ran.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface FakeCodexOptions {
  /** What `codex --version` prints (exit 0). */
  readonly version?: string;
  /** Replaces the whole `--version` branch (e.g. to hang or fail). */
  readonly versionScript?: string;
  /** The exit status of `codex sandbox linux -- true`. */
  readonly sandboxExit?: number;
  /**
   * Shell text run for `codex exec` after the arguments were parsed: `$answer` is the
   * `--output-last-message` file, `$work` the `--cd` folder, `$here` the fake's folder.
   */
  readonly exec?: string;
}

export interface FakeCodex {
  /** The folder holding the fake (put it first on PATH). */
  readonly folder: string;
  readonly program: string;
  /** PATH with the fake first and the system folders the script needs. */
  readonly searchPath: string;
  /** The argument lines of every call, in order. */
  calls(): string[];
  /** A file the fake wrote next to itself, or undefined when it did not write it. */
  recorded(name: string): string | undefined;
  /** Rewrite the program (same folder), e.g. to play an upgraded binary. */
  rewrite(options: FakeCodexOptions): void;
}

const createdFolders: string[] = [];
process.on("exit", () => {
  for (const folder of createdFolders) rmSync(folder, { recursive: true, force: true });
});

/** A fake in a new temporary folder, removed when the test process exits. */
export function fakeCodex(options: FakeCodexOptions): FakeCodex {
  const folder = mkdtempSync(path.join(tmpdir(), "cg-fake-codex-"));
  createdFolders.push(folder);
  const program = path.join(folder, "codex");
  const write = (current: FakeCodexOptions): void => {
    writeFileSync(program, script(current));
    chmodSync(program, 0o755);
  };
  write(options);
  const recorded = (name: string): string | undefined => {
    const file = path.join(folder, name);
    return existsSync(file) ? readFileSync(file, "utf8") : undefined;
  };
  return {
    folder,
    program,
    searchPath: `${folder}:/usr/bin:/bin`,
    calls: () => (recorded("calls.log") ?? "").split("\n").filter((line) => line !== ""),
    recorded,
    rewrite: write,
  };
}

function script(options: FakeCodexOptions): string {
  const versionBranch =
    options.versionScript ?? `echo "codex-cli ${options.version ?? "0.46.0"}"; exit 0`;
  return `#!/bin/sh
here=$(dirname "$0")
echo "$*" >> "$here/calls.log"
case "$1" in
  --version) ${versionBranch} ;;
  sandbox) exit ${options.sandboxExit ?? 0} ;;
  exec) ;;
  *) exit 64 ;;
esac
answer=""
work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --output-last-message) answer="$2"; shift ;;
    --cd) work="$2"; shift ;;
  esac
  shift
done
cat > "$here/stdin.txt"
pwd > "$here/cwd.txt"
ls -A "$work" > "$here/work-listing.txt"
echo "$work" > "$here/work.txt"
${options.exec ?? "exit 0"}
`;
}

/** Shell text: write `json` as the last message and exit 0. */
export function answerWith(json: string): string {
  return `printf '%s' '${json.replaceAll("'", "'\\''")}' > "$answer"; exit 0`;
}

/** Shell text: start a grandchild that sleeps, record its pid, and wait forever. */
export function hangWithGrandchild(ignoreTerm: boolean): string {
  return `${ignoreTerm ? "trap '' TERM" : ""}
sleep 1000 &
echo $! > "$here/grandchild.pid"
while :; do sleep 1; done`;
}
