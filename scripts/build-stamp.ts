/**
 * @module build-stamp
 * Tells whether `dist/` was built from the sources as they stand, so `npm pack` right after
 * `npm run build` does not build everything a second time.
 *
 * `write` (the last step of `npm run build`) stores a digest of every input of the build in
 * `dist/.build-stamp`; `fresh` exits 0 where that digest matches the sources now and the built
 * entries are all there, 1 otherwise. The inputs are every file under `src/`, the build's
 * configuration (package.json, tsconfig.json, tsup.config.ts) and the llms.txt generator with
 * its output.
 */

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const STAMP = join(ROOT, "dist", ".build-stamp");
const INPUTS = ["src", "package.json", "tsconfig.json", "tsup.config.ts", "scripts/llms.ts", "llms.txt"];

/** Every file under a path, in a fixed order. */
function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(join(path, name)));
}

/** The digest of every input's path and bytes. */
export function sourceDigest(): string {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    for (const file of filesUnder(join(ROOT, input))) {
      hash.update(relative(ROOT, file).split("\\").join("/"));
      hash.update("\0");
      hash.update(readFileSync(file));
      hash.update("\0");
    }
  }
  return hash.digest("hex");
}

/** The built files package.json's exports and bin point to. */
function builtEntries(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    exports: Record<string, string | { types?: string; import?: string }>;
    bin?: Record<string, string>;
  };
  const paths = Object.values(manifest.exports).flatMap((target) => (typeof target === "string" ? [] : [target.types, target.import]));
  return [...paths, ...Object.values(manifest.bin ?? {})].filter((path): path is string => typeof path === "string" && path.startsWith("./dist/"));
}

/** Whether dist/ holds a build of the sources as they stand. */
export function isFresh(): boolean {
  if (!existsSync(STAMP)) return false;
  if (builtEntries().some((path) => !existsSync(join(ROOT, path)))) return false;
  return readFileSync(STAMP, "utf8").trim() === sourceDigest();
}

const command = process.argv[2];
if (command === "write") {
  writeFileSync(STAMP, `${sourceDigest()}\n`);
} else if (command === "fresh") {
  const fresh = isFresh();
  process.stdout.write(fresh ? "dist/ is built from the current sources; not building again.\n" : "dist/ is missing or older than the sources; building.\n");
  process.exitCode = fresh ? 0 : 1;
} else if (command !== undefined) {
  process.stderr.write(`build-stamp: unknown command "${command}"; use write or fresh.\n`);
  process.exitCode = 2;
}
