// The API parity table (docs/api.md) lists every public name of the npm package once, and pairs
// it with its Python name or says why there is none. The Python side of the same table is
// checked by python/capability-graph/tests/test_api_parity.py.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PAGE = join(ROOT, "..", "docs", "api.md");
const ROW = /^\| (`[^`]+`|—) \| (`[^`]+`|—) \| (.*) \|$/;

interface Row {
  python: string | undefined;
  typescript: string | undefined;
  reason: string;
}

function table(): Row[] {
  const rows: Row[] = [];
  for (const line of readFileSync(PAGE, "utf8").split("\n")) {
    const match = ROW.exec(line);
    if (match === null) continue;
    const [python, typescript] = [match[1], match[2]].map((cell) => cell?.replaceAll("`", ""));
    rows.push({
      python: python === "—" ? undefined : python,
      typescript: typescript === "—" ? undefined : typescript,
      reason: (match[3] ?? "").trim(),
    });
  }
  return rows;
}

/** Every name src/index.ts exports (values and types), and the public members of its classes. */
function publicNames(): string[] {
  const entry = join(ROOT, "src", "index.ts");
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(entry);
  assert.ok(file !== undefined);
  const module = checker.getSymbolAtLocation(file);
  assert.ok(module !== undefined);
  const names: string[] = [];
  for (const exported of checker.getExportsOfModule(module)) {
    names.push(exported.name);
    const target =
      exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declaration = target.declarations?.[0];
    if (declaration === undefined || !ts.isClassDeclaration(declaration)) continue;
    for (const member of declaration.members) {
      if (member.name === undefined || ts.isPrivateIdentifier(member.name)) continue;
      if (ts.isConstructorDeclaration(member)) continue;
      const flags = ts.getCombinedModifierFlags(member);
      if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
      names.push(`${exported.name}.${member.name.getText()}`);
    }
  }
  return names;
}

test("every public TypeScript name has exactly one row", () => {
  const listed = table().flatMap((row) => (row.typescript === undefined ? [] : [row.typescript]));
  assert.deepEqual([...listed].sort(), publicNames().sort());
});

test("a row that names only one language says why", () => {
  const unexplained = table().filter(
    (row) => (row.python === undefined || row.typescript === undefined) && row.reason === "",
  );
  assert.deepEqual(unexplained, []);
});
