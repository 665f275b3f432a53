/**
 * The ./redis entry as a package sees it: published, on an optional peer that nothing else in
 * the library loads.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

describe("the ./redis entry", () => {
  it("is published on node-redis as an optional peer", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, { types: string; import: string }>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      dependencies: Record<string, string>;
    };
    expect(manifest.exports["./redis"]).toEqual({ types: "./dist/redis.d.ts", import: "./dist/redis.js" });
    expect(manifest.peerDependencies.redis).toBeDefined();
    expect(manifest.peerDependenciesMeta.redis?.optional).toBe(true);
    expect(manifest.dependencies.redis).toBeUndefined();
  });

  it("is the only part of the library that loads the redis client", () => {
    const loaders = sources(join(root, "src"))
      .filter((file) => /from\s+["'](?:redis|@redis\/[^"']+)["']|import\(\s*["']redis["']/.test(readFileSync(file, "utf8")))
      .map((file) => relative(join(root, "src"), file).split("\\").join("/"));
    expect(loaders.length).toBeGreaterThan(0);
    expect(loaders.filter((file) => !file.startsWith("redis/"))).toEqual([]);
  });
});
