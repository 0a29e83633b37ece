// Shared paths of the tests: the package folder and the repository's spec and conformance data.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// Tests run from dist/test/; the package root is two levels up.
export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const repositoryRoot = resolve(packageRoot, "..");
export const conformanceRoot = resolve(repositoryRoot, "conformance");
