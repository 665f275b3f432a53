/**
 * The import graph of src/: a file's layer is its folder, type-only imports count, lower layers
 * never import higher ones, there is no cycle, the command and the testing entry use only the
 * public entries, ./spec imports nothing but types, and no module keeps mutable state at module
 * level (DESIGN.md).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles, layerViolations, readImports, TOP_FILES } from "./support/import-graph.js";

const src = resolve(import.meta.dirname, "../src");
const fixtures = resolve(import.meta.dirname, "fixtures/import-graph");
const { modules, edges } = readImports(src);

describe("the import graph", () => {
  it("puts every file but the entries in a layer folder", () => {
    const loose = modules.filter((module) => !module.includes("/"));
    expect(loose.filter((module) => !TOP_FILES.includes(module))).toEqual([]);
    expect(loose).toEqual(expect.arrayContaining(["cli", "index", "reset", "runtime", "spec", "testing"]));
    expect(modules.filter((module) => module.startsWith("internal/"))).toEqual([]);
  });

  it("counts type-only imports as edges", () => {
    expect(edges.some((edge) => edge.typeOnly)).toBe(true);
  });

  it("never imports a higher layer, type-only imports included", () => {
    expect(layerViolations(modules, edges)).toEqual([]);
  });

  it("has no cycle, type-only imports included", () => {
    expect(importCycles(modules, edges)).toEqual([]);
  });

  it("fails a tree with a deliberate upward import", () => {
    const tree = readImports(resolve(fixtures, "upward/src"));
    expect(layerViolations(tree.modules, tree.edges)).toEqual(["shapes/turn → run/ledger (type-only): shapes/ (layer 1) imports the higher run/ (layer 6)"]);
  });

  it("fails a tree with a cycle closed by a type-only import", () => {
    const tree = readImports(resolve(fixtures, "cycle/src"));
    expect(layerViolations(tree.modules, tree.edges)).toEqual([]);
    expect(importCycles(tree.modules, tree.edges)).toEqual(["wire/client → wire/lookup → wire/client"]);
  });

  it("keeps the ./spec entry and the shapes it reads free of node: modules", () => {
    for (const module of modules.filter((name) => name === "spec" || name.startsWith("spec/") || name.startsWith("shapes/"))) {
      expect(readFileSync(resolve(src, `${module}.ts`), "utf8"), module).not.toMatch(/from\s+["']node:/);
    }
  });

  it("keeps no mutable state at module level", () => {
    const offenders: string[] = [];
    for (const module of modules) {
      const lines = readFileSync(resolve(src, `${module}.ts`), "utf8").split("\n");
      lines.forEach((line, index) => {
        if (/^(?:export\s+)?(?:let|var)\s/.test(line)) offenders.push(`${module}:${index + 1}: ${line.trim()}`);
        const table = /^(?:export\s+)?const\s+\w+\s*(:[^=]+)?=\s*new\s+(?:Map|Set|WeakMap|WeakSet)\b/.exec(line);
        // A lookup table is allowed when its type says it cannot change (ReadonlySet, ReadonlyMap).
        if (table && !/^:\s*Readonly(?:Set|Map)</.test(table[1]?.trim() ?? "")) {
          offenders.push(`${module}:${index + 1}: ${line.trim()}`);
        }
      });
    }
    expect(offenders).toEqual([]);
  });
});
