/**
 * File sizes: a source file past 450 lines holds two ideas and is split beside itself
 * (DESIGN.md), a test file past 800 lines has no room for a module's own tests. Data files are
 * the only exception, each named below with why.
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");

/** The most lines a file under src/ may have. */
const SOURCE_LIMIT = 450;
/** The most lines a file under test/ may have. */
const TEST_LIMIT = 800;

/** Source files allowed past the limit, each a data file, with the reason. */
const DATA_FILES: Readonly<Record<string, string>> = {
  "src/testing/wording-samples.ts":
    "a table of real error bodies, one entry per server wording with its source; it grows by one entry per wording found and holds no logic to split",
};

function typeScriptFiles(folder: string): string[] {
  return readdirSync(resolve(root, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) =>
      relative(root, join(resolve(root, folder), name))
        .split("\\")
        .join("/"),
    )
    .sort();
}

/** Lines as `wc -l` counts them: newline characters. */
function lineCount(file: string): number {
  const text = readFileSync(resolve(root, file), "utf8");
  let lines = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

function oversized(files: string[], limit: number): string[] {
  return files.flatMap((file) => {
    const lines = lineCount(file);
    return lines > limit ? [`${file}: ${lines} lines`] : [];
  });
}

describe("file sizes", () => {
  it(`keeps every file under src/ within ${SOURCE_LIMIT} lines, data files excepted`, () => {
    const files = typeScriptFiles("src");
    expect(files.length).toBeGreaterThan(100);
    expect(
      oversized(
        files.filter((file) => !(file in DATA_FILES)),
        SOURCE_LIMIT,
      ),
    ).toEqual([]);
  });

  it("names only data files that exist, each with a reason", () => {
    for (const [file, why] of Object.entries(DATA_FILES)) {
      expect(existsSync(resolve(root, file)), file).toBe(true);
      expect(why.length, file).toBeGreaterThan(20);
    }
  });

  it(`keeps every file under test/ within ${TEST_LIMIT} lines`, () => {
    const files = typeScriptFiles("test");
    expect(files.length).toBeGreaterThan(100);
    expect(oversized(files, TEST_LIMIT)).toEqual([]);
  });

  it("catches a file past the limit: the exempt data file itself is past it", () => {
    expect(oversized(["src/testing/wording-samples.ts"], SOURCE_LIMIT)).toEqual([expect.stringMatching(/^src\/testing\/wording-samples\.ts: \d+ lines$/)]);
  });
});
