// Node's modules that only an executor at work needs — child processes (codex), HTTP (openai),
// timers (scripted), the temporary folder (codex) — loaded when first used, not when the graph
// opens: a command that never runs such an executor (every static query, and match with
// `lexical`) does not pay for loading them at start-up (test/startup.test.ts holds the CLI's graph
// commands to that). `require` is synchronous, so a call that needs one behaves exactly as with a
// static import.
import type ChildProcess from "node:child_process";
import type Http from "node:http";
import type Https from "node:https";
import { createRequire } from "node:module";
import type Os from "node:os";
import type TimersPromises from "node:timers/promises";

const require = createRequire(import.meta.url);

let childProcess: typeof ChildProcess | undefined;
let http: typeof Http | undefined;
let https: typeof Https | undefined;
let os: typeof Os | undefined;
let timersPromises: typeof TimersPromises | undefined;

export function nodeChildProcess(): typeof ChildProcess {
  childProcess ??= require("node:child_process") as typeof ChildProcess;
  return childProcess;
}

export function nodeHttp(): typeof Http {
  http ??= require("node:http") as typeof Http;
  return http;
}

export function nodeHttps(): typeof Https {
  https ??= require("node:https") as typeof Https;
  return https;
}

export function nodeOs(): typeof Os {
  os ??= require("node:os") as typeof Os;
  return os;
}

export function nodeTimersPromises(): typeof TimersPromises {
  timersPromises ??= require("node:timers/promises") as typeof TimersPromises;
  return timersPromises;
}
