import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import "../support/fast-check-seed.js";
import { createState, clearState } from "../../src/state/state.js";
import { getClientIn } from "../../src/wire/client.js";
import { streamTurn } from "../../src/wire/stream.js";
import type { Turn } from "../../src/shapes/config.js";
import { startEndpoint, type EndpointServer } from "../support/endpoint.js";

const here = dirname(fileURLToPath(import.meta.url));
const folder = join(here, "../fixtures/recorded");

/** Text pinned whole, or by its length, its start and its digest where it is long. */
type Pinned = string | { length: number; start: string; sha256: string };

interface Entry {
  file: string;
  exchange?: string;
  provider: string;
  framing: "lines" | "json" | "events";
  source: Record<string, string>;
  license: string;
  note?: string;
  /** The Turn the recording reads to; absent where the recording is a failure (`error`). */
  turn?: Omit<Turn, "content" | "reasoning" | "durationMs" | "firstTokenMs"> & { content: Pinned; reasoning: Pinned; notices?: string[] };
  /** The failure a recording of a broken reply must give: its class, words and what it had shown. */
  error?: {
    name: string;
    message: string;
    serverFault: boolean;
    produced: boolean;
    partial: { content: string; reasoning: string; toolCalls: Turn["toolCalls"] };
  };
}

const manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8")) as { entries: Entry[] };

/** The body the server sent, as bytes, and its content type. */
function recordedBody(entry: Entry): { bytes: Buffer; contentType: string } {
  if (entry.exchange !== undefined) {
    const fixture = JSON.parse(readFileSync(join(folder, entry.file), "utf8")) as {
      exchanges: Record<string, { response: { headers: Record<string, string>; body?: unknown; events?: unknown[] } }>;
    };
    const { response } = fixture.exchanges[entry.exchange]!;
    if (entry.framing === "json") return { bytes: Buffer.from(JSON.stringify(response.body)), contentType: "application/json; charset=utf-8" };
    const events = response.events ?? [];
    const text = events.map((event) => `data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`).join("");
    return { bytes: Buffer.from(text), contentType: "text/event-stream" };
  }
  const raw = readFileSync(join(folder, entry.file));
  if (entry.framing === "json") return { bytes: raw, contentType: "application/json" };
  // One data payload a line, as the source project keeps them: each becomes a `data:` event.
  const lines = raw
    .toString("utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  return { bytes: Buffer.from(lines.map((line) => `data: ${line}\n\n`).join("") + "data: [DONE]\n\n"), contentType: "text/event-stream" };
}

function cut(bytes: Buffer, at: readonly number[]): Buffer[] {
  const points = [...new Set(at.map((point) => point % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    if (point > from) parts.push(bytes.subarray(from, point));
    from = Math.max(from, point);
  }
  if (from < bytes.length) parts.push(bytes.subarray(from));
  return parts;
}

function expectPinned(actual: string, pinned: Pinned, what: string): void {
  if (typeof pinned === "string") {
    expect(actual, what).toBe(pinned);
    return;
  }
  expect({ length: actual.length, start: actual.slice(0, pinned.start.length) }, what).toEqual({ length: pinned.length, start: pinned.start });
  expect(createHash("sha256").update(actual).digest("hex"), what).toBe(pinned.sha256);
}

const state = createState();
let server: EndpointServer;
let client: ReturnType<typeof getClientIn>;

beforeAll(async () => {
  server = await startEndpoint();
  client = getClientIn(state, { baseUrl: server.baseUrl });
});

afterAll(async () => {
  clearState(state);
  await server.close();
});

async function replay(parts: readonly Buffer[], contentType: string): Promise<{ turn: Turn; notices: string[] }> {
  server.script({ kind: "bytes", parts, contentType });
  const notices: string[] = [];
  const turn = await streamTurn(
    client,
    { model: "recorded", messages: [{ role: "user", content: "replay" }], stream: true },
    { onNotice: (text) => notices.push(text), newCallId: () => "call_generated" },
  );
  return { turn, notices };
}

function expectTurn(entry: Entry, turn: Turn, notices: string[]): void {
  const pinned = entry.turn;
  if (pinned === undefined) throw new Error(`${entry.file}: pins no turn`);
  const label = `${entry.file}${entry.exchange ? `#${entry.exchange}` : ""}`;
  expectPinned(turn.content, pinned.content, `${label}: content`);
  expectPinned(turn.reasoning, pinned.reasoning, `${label}: reasoning`);
  expect(turn.toolCalls, `${label}: tool calls`).toEqual(pinned.toolCalls);
  expect(turn.finishReason, `${label}: finish reason`).toBe(pinned.finishReason);
  expect(turn.usage, `${label}: usage`).toEqual(pinned.usage);
  expect(turn.timings, `${label}: timings`).toEqual(pinned.timings);
  expect(notices, `${label}: notices`).toEqual(pinned.notices ?? []);
}

/** A recording of a broken reply rejects with its pinned class, words and what it had shown. */
async function expectFailure(entry: Entry, parts: readonly Buffer[], contentType: string): Promise<void> {
  const pinned = entry.error!;
  const error = await replay(parts, contentType).then(
    () => undefined,
    (caught: unknown) => caught as Record<string, unknown>,
  );
  expect(error, `${entry.file}: answered`).toBeDefined();
  expect(error).toMatchObject({ name: pinned.name, message: pinned.message, serverFault: pinned.serverFault, produced: pinned.produced });
  const partial = error!.partial as Turn;
  expect({ content: partial.content, reasoning: partial.reasoning, toolCalls: partial.toolCalls }).toEqual(pinned.partial);
}

describe("the recorded corpus", () => {
  it("holds at least 40 recordings from at least 8 providers or servers, each with its source and licence", () => {
    expect(manifest.entries.length).toBeGreaterThanOrEqual(40);
    expect(new Set(manifest.entries.map((entry) => entry.provider)).size).toBeGreaterThanOrEqual(8);
    for (const entry of manifest.entries) {
      expect(entry.license, entry.file).toMatch(/\S/);
      expect(Object.keys(entry.source).length, entry.file).toBeGreaterThan(0);
      if (entry.source.repository !== undefined) expect(entry.source.commit, entry.file).toMatch(/^[0-9a-f]{40}$/);
      expect(entry.turn === undefined, `${entry.file}: pins a turn or an error, one of the two`).toBe(entry.error !== undefined);
    }
  });

  it("keeps the files of other projects byte for byte as their source has them", () => {
    for (const entry of manifest.entries.filter((item) => item.exchange === undefined)) {
      const raw = readFileSync(join(folder, entry.file));
      expect(createHash("sha256").update(raw).digest("hex"), entry.file).toBe(entry.source.sha256);
    }
  });
});

describe.each(manifest.entries.map((entry) => [`${entry.provider}: ${entry.file}${entry.exchange ? `#${entry.exchange}` : ""}`, entry] as const))(
  "replaying %s",
  (_name, entry) => {
    const { bytes, contentType } = recordedBody(entry);

    it(entry.error ? "fails as pinned in one piece, never as an answer" : "reads to its pinned Turn in one piece", async () => {
      if (entry.error) await expectFailure(entry, [bytes], contentType);
      else {
        const { turn, notices } = await replay([bytes], contentType);
        expectTurn(entry, turn, notices);
      }
    });

    it(entry.error ? "fails the same cut at random byte boundaries" : "reads to the same Turn cut at random byte boundaries", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat({ max: bytes.length }), { minLength: 1, maxLength: 40 }), async (points) => {
          if (entry.error) await expectFailure(entry, cut(bytes, points), contentType);
          else {
            const { turn, notices } = await replay(cut(bytes, points), contentType);
            expectTurn(entry, turn, notices);
          }
        }),
        { numRuns: 3 },
      );
    });
  },
);

describe("replaying byte by byte", () => {
  it("reads Magistral's part list to its Turn with every byte in a write of its own", async () => {
    const entry = manifest.entries.find((item) => item.file === "mistral/mistral-reasoning.chunks.txt")!;
    const { bytes, contentType } = recordedBody(entry);
    const parts = Array.from({ length: bytes.length }, (_, index) => bytes.subarray(index, index + 1));
    const { turn, notices } = await replay(parts, contentType);
    expectTurn(entry, turn, notices);
    expect(turn.content).toBe("2 + 2 = 4");
  });
});
