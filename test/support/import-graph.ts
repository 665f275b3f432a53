/**
 * Reads the relative imports of a source tree and checks them against the layering DESIGN.md
 * states: a file's layer is its folder, type-only imports count like any other, and no import
 * may close a cycle.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** The layer folders from the bottom up; a file may import its own layer and those below. */
export const LAYER_ORDER: readonly string[] = ["shapes", "text", "state", "wire", "turn", "run"];

/** Entry files at the top of src/ that make up the public API. */
export const PUBLIC_ENTRIES: readonly string[] = ["index", "runtime", "reset", "spec", "testing"];

/**
 * The folders (with their entry file of the same name) that may use only the public entries: the
 * command, the testing entry, and the optional entries, each on its own optional peer.
 */
export const PUBLIC_ONLY: readonly string[] = ["cli", "testing", "otel", "redis", "mcp"];

/** Every file allowed at the top of src/: the public entries and the public-only rooms' entries. */
export const TOP_FILES: readonly string[] = [...new Set([...PUBLIC_ENTRIES, ...PUBLIC_ONLY])];

/** One relative import of one file. */
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Every module under a source folder, named by its path without extension. */
export function readImports(srcDir: string): { modules: string[]; edges: ImportEdge[] } {
  const root = resolve(srcDir);
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
    );
  const nameOf = (file: string) => relative(root, file).replace(/\.ts$/, "").split(sep).join("/");
  const pattern = /^\s*(import|export)\s+(type\s+)?(?:[^"';]*?\s+from\s+)?["'](\.[^"']+)["']/gm;
  const files = walk(root);
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(pattern)) {
      const target = resolve(dirname(file), match[3]!.replace(/\.js$/, ".ts"));
      edges.push({ from: nameOf(file), to: nameOf(target), typeOnly: Boolean(match[2]) });
    }
  }
  return { modules: files.map(nameOf), edges };
}

/** The folder a module lives in, or the entry's own name for a file at the top of src/. */
export function roomOf(module: string): string {
  return module.includes("/") ? module.slice(0, module.indexOf("/")) : module;
}

/** The rank of a layer folder, undefined for entries and the special rooms. */
function rankOf(room: string): number | undefined {
  const index = LAYER_ORDER.indexOf(room);
  return index < 0 ? undefined : index;
}

/** Every import that breaks the layering, as one readable line each. */
export function layerViolations(modules: readonly string[], edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  const known = new Set(modules);
  for (const module of modules) {
    const room = roomOf(module);
    if (module.includes("/") && rankOf(room) === undefined && !PUBLIC_ONLY.includes(room) && room !== "spec") {
      problems.push(`${module}: ${room}/ is not a layer folder`);
    }
  }
  for (const edge of edges) {
    const line = `${edge.from} → ${edge.to}${edge.typeOnly ? " (type-only)" : ""}`;
    if (!known.has(edge.to)) {
      problems.push(`${line}: no such module`);
      continue;
    }
    const fromRoom = roomOf(edge.from);
    const toRoom = roomOf(edge.to);
    const toEntry = !edge.to.includes("/");
    if (fromRoom === "spec") {
      if (toRoom !== "spec" && toRoom !== "shapes") problems.push(`${line}: ./spec may import only its own helpers and shapes/`);
      continue;
    }
    if (toRoom === "spec") {
      problems.push(`${line}: nothing but the ./spec entry imports spec/`);
      continue;
    }
    if (PUBLIC_ONLY.includes(fromRoom)) {
      if (toRoom !== fromRoom && !(toEntry && PUBLIC_ENTRIES.includes(edge.to))) {
        problems.push(`${line}: ${fromRoom} may import only the public entries and its own folder`);
      }
      continue;
    }
    if (PUBLIC_ONLY.includes(toRoom) && !(toEntry && PUBLIC_ENTRIES.includes(edge.to))) {
      problems.push(`${line}: ${toRoom} sits above the library and is imported by nothing in it`);
      continue;
    }
    const fromRank = rankOf(fromRoom);
    const toRank = rankOf(toRoom);
    if (fromRank === undefined) continue; // the entries at the top may import any layer
    if (toRank === undefined) problems.push(`${line}: a layer imports the entry ${edge.to}`);
    else if (toRank > fromRank) problems.push(`${line}: ${fromRoom}/ (layer ${fromRank + 1}) imports the higher ${toRoom}/ (layer ${toRank + 1})`);
  }
  return problems;
}

/** Every cycle in the import graph, type-only imports included, each as a path of modules. */
export function importCycles(modules: readonly string[], edges: readonly ImportEdge[]): string[] {
  const graph = new Map<string, string[]>(modules.map((module) => [module, []]));
  for (const edge of edges) graph.get(edge.from)?.push(edge.to);
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
  return cycles;
}
