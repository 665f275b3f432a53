/**
 * The import graph of src/: no cycles, lower layers never import higher ones (DESIGN.md), the
 * ./spec entry imports nothing but types, and no module keeps mutable state at module level.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { describe, expect, it } from "vitest";

const src = resolve(import.meta.dirname, "../src");

const LAYERS: Record<string, number> = {
  config: 1,
  catalog: 1,
  tokens: 2,
  thinking: 2,
  "tool-calls": 2,
  "schema-compat": 2,
  errors: 2,
  retry: 2,
  "internal/state": 3,
  client: 4,
  stream: 4,
  capabilities: 4,
  "request-body": 4,
  calibration: 4,
  continuation: 4,
  snapshot: 4,
  "run-turn": 5,
  "side-task": 5,
  "run-calls": 6,
  "tool-loading": 6,
  preselect: 6,
  hooks: 6,
  events: 6,
  compaction: 6,
  ledger: 6,
  "agent-loop": 6,
  runtime: 7,
  reset: 7,
  index: 7,
  spec: 7,
  testing: 8,
  cli: 8,
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

function moduleName(file: string): string {
  return relative(src, file).replace(/\.ts$/, "").split("\\").join("/");
}

interface Edge {
  to: string;
  typeOnly: boolean;
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(file, "utf8");
  const edges: Edge[] = [];
  const pattern = /^\s*(import|export)\s+(type\s+)?(?:[^"';]*?\s+from\s+)?["'](\.[^"']+)["']/gm;
  for (const match of text.matchAll(pattern)) {
    const target = resolve(dirname(file), match[3]!.replace(/\.js$/, ".ts"));
    edges.push({ to: moduleName(target), typeOnly: Boolean(match[2]) });
  }
  return edges;
}

const modules = files(src).map((file) => ({ name: moduleName(file), file, edges: importsOf(file) }));

/** An internal helper sits at the layer of the lowest module that imports it. */
function layerOf(name: string): number | undefined {
  if (name in LAYERS) return LAYERS[name];
  if (!name.startsWith("internal/")) return undefined;
  const users = modules.filter((module) => module.edges.some((edge) => edge.to === name) && !module.name.startsWith("internal/"));
  const layers = users.map((module) => LAYERS[module.name]).filter((layer): layer is number => layer !== undefined);
  return layers.length > 0 ? Math.min(...layers) : 0;
}

describe("the import graph", () => {
  it("names a layer for every module", () => {
    const unknown = modules.map((module) => module.name).filter((name) => layerOf(name) === undefined);
    expect(unknown).toEqual([]);
  });

  it("has no cycle among runtime imports", () => {
    const graph = new Map(modules.map((module) => [module.name, module.edges.filter((edge) => !edge.typeOnly).map((edge) => edge.to)]));
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (name: string, path: string[]) => {
      if (state.get(name) === "done") return;
      if (state.get(name) === "open") {
        cycles.push([...path.slice(path.indexOf(name)), name].join(" → "));
        return;
      }
      state.set(name, "open");
      for (const next of graph.get(name) ?? []) visit(next, [...path, name]);
      state.set(name, "done");
    };
    for (const name of graph.keys()) visit(name, []);
    expect(cycles).toEqual([]);
  });

  it("never imports a higher layer at run time", () => {
    const upward: string[] = [];
    for (const module of modules) {
      const from = layerOf(module.name) ?? 0;
      for (const edge of module.edges) {
        if (edge.typeOnly) continue;
        const to = layerOf(edge.to) ?? 0;
        if (to > from && !edge.to.startsWith("internal/")) upward.push(`${module.name} (${from}) → ${edge.to} (${to})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("keeps ./spec free of anything but type imports, and unimported by the rest of src", () => {
    const spec = modules.filter((module) => module.name === "spec" || module.name.startsWith("internal/spec"));
    for (const module of spec) {
      const text = readFileSync(module.file, "utf8");
      expect(text).not.toMatch(/from\s+["']node:/);
      expect(module.edges.filter((edge) => !edge.typeOnly)).toEqual(
        module.edges.filter((edge) => !edge.typeOnly && edge.to.startsWith("internal/spec")),
      );
    }
    const importers = modules.filter((module) => !module.name.startsWith("internal/spec") && module.name !== "spec" && module.edges.some((edge) => edge.to === "spec" && !edge.typeOnly));
    expect(importers.map((module) => module.name)).toEqual([]);
  });

  it("keeps no mutable state at module level", () => {
    const offenders: string[] = [];
    for (const module of modules) {
      const lines = readFileSync(module.file, "utf8").split("\n");
      lines.forEach((line, index) => {
        if (/^(?:export\s+)?(?:let|var)\s/.test(line)) offenders.push(`${module.name}:${index + 1}: ${line.trim()}`);
        const table = /^(?:export\s+)?const\s+\w+\s*(:[^=]+)?=\s*new\s+(?:Map|Set|WeakMap|WeakSet)\b/.exec(line);
        // A lookup table is allowed when its type says it cannot change (ReadonlySet, ReadonlyMap).
        if (table && !/^:\s*Readonly(?:Set|Map)</.test(table[1]?.trim() ?? "")) {
          offenders.push(`${module.name}:${index + 1}: ${line.trim()}`);
        }
      });
    }
    expect(offenders).toEqual([]);
  });
});
