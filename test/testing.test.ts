import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");

describe("the ./testing entry", () => {
  it("is published with its own types and import paths, beside the agent-core bin", () => {
    const manifest = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
      bin: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.exports["./testing"]).toEqual({ types: "./dist/testing.d.ts", import: "./dist/testing.js" });
    expect(manifest.bin["agent-core"]).toBe("./dist/cli.js");
    expect(manifest.peerDependencies["gpt-tokenizer"]).toBeDefined();
    expect(manifest.peerDependenciesMeta["gpt-tokenizer"]?.optional).toBe(true);
    expect(manifest.devDependencies["gpt-tokenizer"]).toBeDefined();
  });

  it("loads the tokenizer only on demand and needs nothing else outside Node", async () => {
    const result = await build({
      entryPoints: [resolve(root, "src/testing.ts")],
      bundle: true,
      write: false,
      metafile: true,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "silent",
    });
    const imports = Object.values(result.metafile.outputs).flatMap((output) => output.imports);
    const packages = imports.filter((entry) => !entry.path.startsWith("node:") && !["http", "net"].includes(entry.path));
    expect(packages).toEqual([{ path: "gpt-tokenizer/encoding/o200k_base", kind: "dynamic-import", external: true }]);
  });
});
