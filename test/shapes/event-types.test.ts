import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RUN_EVENT_KINDS } from "../../src/shapes/event-types.js";

const page = readFileSync(resolve(import.meta.dirname, "../../docs/events.md"), "utf8");

/** The kinds docs/events.md has a row for: the first cell of each table row, in backticks. */
const documented = [...page.matchAll(/^\| `([a-z-]+)` \|/gm)].map((match) => match[1]);

describe("docs/events.md", () => {
  it("has a row for every event kind, and none for a kind that does not exist", () => {
    expect(RUN_EVENT_KINDS.length).toBeGreaterThan(10);
    expect([...documented].sort()).toEqual([...RUN_EVENT_KINDS].sort());
  });

  it("fills every cell of each kind's row", () => {
    for (const kind of RUN_EVENT_KINDS) {
      const row = page.split("\n").find((line) => line.startsWith(`| \`${kind}\` |`)) ?? "";
      const cells = row.split(" | ").map((cell) => cell.replace(/^\| |\s*\|$/g, "").trim());
      expect(cells, kind).toHaveLength(4);
      for (const cell of cells) expect(cell, kind).not.toBe("");
    }
  });
});
