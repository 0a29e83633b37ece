// `doctor` as a subprocess (spec section 12.2): the texts of its checks and warnings, the same as
// the reference implementation's where section 12 leaves the wording open.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { CLI } from "../surface-fixtures.js";

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "cg-doctor-cli-"));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

function write(name: string, value: unknown): string {
  const path = join(folder, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

const capability = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: id,
  description: `Capability ${id}.`,
  ...extra,
});
const provider = (capabilities: unknown[], providerId = "acme") => ({
  providerId,
  name: "Acme",
  version: "1",
  capabilities,
});

function doctor(config: string, json = true) {
  const done = spawnSync(
    process.execPath,
    [CLI, "doctor", "--config", config, ...(json ? ["--json"] : [])],
    { encoding: "utf8", cwd: folder, env: { ...process.env, CAPABILITY_GRAPH_CONFIG: "" } },
  );
  return { status: done.status, stdout: done.stdout, stderr: done.stderr };
}

interface Report {
  status: string;
  checks: { id: string; status: string; message: string }[];
  warnings: string[];
}

function report(config: string): Report {
  const done = doctor(config);
  return JSON.parse(done.stdout) as Report;
}

function check(result: Report, id: string) {
  const found = result.checks.find((entry) => entry.id === id);
  assert.ok(found, `the report has the check ${id}`);
  return { status: found.status, message: found.message };
}

test("a provider that declares no documents skips its documents check", () => {
  write("p.json", provider([capability("a")]));
  const config = write("capability-graph.json", { providers: [{ path: "p.json" }] });
  assert.deepEqual(check(report(config), "documents.0"), {
    status: "skip",
    message: "Provider acme declares no documents",
  });
});

test("a provider with only URL documents counts them and passes its documents check", () => {
  const documents = [{ id: "u", title: "U", url: "https://example.com/u" }];
  write("p.json", provider([capability("a", { documents })]));
  const config = write("capability-graph.json", { providers: [{ path: "p.json" }] });
  assert.deepEqual(check(report(config), "documents.0"), {
    status: "ok",
    message: "Provider acme: 0 local documents readable, 1 URL reference",
  });
});

test("a missing document fails its documents check: how many of the local documents, which, why", () => {
  const documents = [
    { id: "g", title: "G", path: "guide.md" },
    { id: "h", title: "H", path: "here.md" },
  ];
  write("p.json", provider([capability("a", { documents })]));
  write("docs/here.md", "# Here\n");
  const config = write("capability-graph.json", {
    providers: [{ path: "p.json", documentRoot: "docs" }],
  });
  const result = report(config);
  assert.equal(result.status, "failed");
  assert.deepEqual(check(result, "documents.0"), {
    status: "fail",
    message:
      "Provider acme: 1 of 2 local documents cannot be read: acme::a/g CG_DOCUMENT_NOT_FOUND",
  });
});

test("a path document of an inline source without documentRoot is CG_DOCUMENT_ROOT_REQUIRED", () => {
  const documents = [{ id: "g", title: "G", path: "g.md" }];
  const config = write("capability-graph.json", {
    providers: [{ definition: provider([capability("a", { documents })]) }],
  });
  assert.deepEqual(check(report(config), "documents.0"), {
    status: "fail",
    message:
      "Provider acme: 1 of 1 local document cannot be read: acme::a/g CG_DOCUMENT_ROOT_REQUIRED",
  });
});

test("one dangling relation: the warning's verb agrees with the count", () => {
  const relations = [{ kind: "requires", target: "other::b" }];
  write("p.json", provider([capability("a", { relations })]));
  const config = write("capability-graph.json", { providers: [{ path: "p.json" }] });
  const done = doctor(config, false);
  assert.equal(done.status, 0);
  assert.equal(done.stderr, "");
  assert.match(
    done.stdout,
    /^ {2}warning: 1 relation reaches a provider that is not loaded \(queries report them as partial\): acme::a requires other::b$/m,
  );
});

test("two dangling relations are listed in one warning", () => {
  const relations = [
    { kind: "requires", target: "other::b" },
    { kind: "related", target: "other::c" },
  ];
  write("p.json", provider([capability("a", { relations })]));
  const config = write("capability-graph.json", { providers: [{ path: "p.json" }] });
  assert.deepEqual(report(config).warnings, [
    "2 relations reach a provider that is not loaded (queries report them as partial): acme::a requires other::b; acme::a related other::c",
  ]);
});

test("a provider with local documents whose bodies are not approved is a warning", () => {
  const documents = [{ id: "g", title: "G", path: "g.md" }];
  write("p.json", provider([capability("a", { documents })]));
  write("g.md", "# G\n");
  const config = write("capability-graph.json", {
    providers: [{ path: "p.json", documentRoot: "." }],
    documents: { bodies: [] },
  });
  const result = report(config);
  assert.equal(result.status, "ok");
  assert.deepEqual(result.warnings, [
    "Document bodies of provider acme are not approved (documents.bodies): read_document answers CG_ACCESS_DENIED",
  ]);
});

test("an invalid definition names its file and provider", () => {
  const path = write("p.json", { providerId: "acme", capabilities: [] });
  const config = write("capability-graph.json", { providers: [{ path: "p.json" }] });
  assert.deepEqual(check(report(config), "source.0"), {
    status: "fail",
    message: `CG_DEFINITION_INVALID: / requires the key name (file ${path}; provider acme)`,
  });
});

test("an invalid relation names the file, the provider, the capability, the relation and the rule", () => {
  const path = write(
    "p.json",
    provider([capability("a", { relations: [{ kind: "requires", target: "a" }] })]),
  );
  const config = write("capability-graph.json", { providers: [{ path: "p.json" }] });
  assert.deepEqual(check(report(config), "source.0"), {
    status: "fail",
    message: `CG_RELATION_INVALID: Provider definition declares an invalid relation (file ${path}; provider acme; capability acme::a: relation requires -> a: a capability cannot relate to itself)`,
  });
});

test("an invalid relation of an inline definition says so instead of a file", () => {
  const relations = [{ kind: "requires", target: "zz" }];
  const config = write("capability-graph.json", {
    providers: [{ definition: provider([capability("a", { relations })]) }],
  });
  assert.deepEqual(check(report(config), "source.0"), {
    status: "fail",
    message:
      "CG_RELATION_INVALID: Provider definition declares an invalid relation (inline definition; provider acme; capability acme::a: relation requires -> zz: the target is not a capability of this provider)",
  });
});

test("a definition file that does not exist names it and the cause", () => {
  const config = write("capability-graph.json", { providers: [{ path: "nope.json" }] });
  assert.deepEqual(check(report(config), "source.0"), {
    status: "fail",
    message: `CG_CONFIG_INVALID: /providers/0/path is not a readable regular file (file ${join(folder, "nope.json")} does not exist)`,
  });
});

test("an invalid configuration fails the config check with the pointer message alone", () => {
  const config = write("capability-graph.json", { providers: [], budgets: { maxCapabilities: 0 } });
  const done = doctor(config, false);
  assert.equal(done.status, 1);
  assert.equal(done.stderr, "");
  assert.equal(
    done.stdout,
    [
      "capability-graph doctor: failed",
      "  [FAIL] config: CG_CONFIG_INVALID: /budgets/maxCapabilities must be at least 1",
      "  [skip] sources: Not checked: the configuration is invalid",
      "",
    ].join("\n"),
  );
});

test("a configuration path that is a folder cannot be read: the cause says it is a directory", () => {
  const config = join(folder, "capability-graph.json");
  mkdirSync(config);
  const done = doctor(config);
  assert.equal(done.status, 1);
  assert.deepEqual(check(JSON.parse(done.stdout) as Report, "config"), {
    status: "fail",
    message: `Cannot read the configuration: ${config} is a directory, not a file`,
  });
});

test("a configuration with a duplicate key cannot be read: the cause says it is not JSON data", () => {
  const config = write("capability-graph.json", '{"providers": [], "providers": []}');
  assert.deepEqual(check(report(config), "config"), {
    status: "fail",
    message: `Cannot read the configuration: ${config} is not JSON data: an object has a duplicate key`,
  });
});

test("a scope naming a provider that is not loaded fails the open check, not the relations check", () => {
  const config = write("capability-graph.json", { providers: [], scope: { providers: ["ghost"] } });
  const result = report(config);
  assert.deepEqual(check(result, "relations"), {
    status: "ok",
    message: "0 capabilities and 0 relations are valid",
  });
  assert.deepEqual(check(result, "open"), {
    status: "fail",
    message: "CG_CONFIG_INVALID: /scope/providers/0 names a provider that is not loaded",
  });
});

test("the scripted executor is configured", () => {
  write("p.json", provider([capability("a")]));
  const config = write("capability-graph.json", {
    providers: [{ path: "p.json" }],
    model: { executor: "scripted", steps: [] },
  });
  assert.deepEqual(check(report(config), "executor"), {
    status: "ok",
    message: "The scripted executor is configured",
  });
});
