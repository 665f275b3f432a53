/**
 * @module bench/wire-adversarial
 * Times the wire layer's readers of text from outside on adversarial shapes at 25, 50, 100 and
 * 200 KB, and reports the ratio of the 200 KB time to the 25 KB time (8 for linear work).
 */
import { capabilitiesForIn } from "../src/wire/capabilities.js";
import { getClientIn, resolveApiKey } from "../src/wire/client.js";
import { importCapabilitiesIn, CAPABILITIES_SNAPSHOT_VERSION } from "../src/wire/snapshot.js";
import { streamTurn } from "../src/wire/stream.js";
import { clearState, createState } from "../src/state/state.js";
import { startEndpoint } from "../src/testing.js";

const SIZES = [25, 50, 100, 200];

function slashes(kb: number): string {
  return `http://h/${"/".repeat(kb * 1024 - 10)}x`;
}

async function median(times: number, work: () => unknown): Promise<number> {
  const taken: number[] = [];
  for (let round = 0; round < times; round += 1) {
    const started = performance.now();
    await work();
    taken.push(performance.now() - started);
  }
  taken.sort((a, b) => a - b);
  return taken[Math.floor(taken.length / 2)]!;
}

/** Runs a synchronous call 200 times, so its time is above the timer's grain. */
const quietly = (work: () => unknown) => () => {
  for (let round = 0; round < 200; round += 1) {
    try {
      work();
    } catch {
      // A refusal is the documented result for a base URL past the cap.
    }
  }
};

/** Runs the bench and prints its table. */
export async function run(): Promise<void> {
  const endpoint = await startEndpoint();
  const state = createState();
  const client = getClientIn(state, { baseUrl: endpoint.baseUrl });
  const body = { model: "loopback-model", messages: [{ role: "user" as const, content: "hi" }] };
  const event = (kb: number): string => {
    const lines = Math.floor((kb * 1024) / 10);
    const words = Array.from({ length: lines }, (_, index) => `data: ${index === 0 ? '{"choices":[{"index":0,"delta":{"content":"x"},"pad":[' : "[1],"}`);
    return `${words.join("\n")}\ndata: [0]]}]}\n\n`;
  };
  const shapes: Array<{ name: string; work: (kb: number) => () => unknown }> = [
    {
      name: "streamTurn reader: one event over many data lines, one chunk",
      work: (kb) => {
        const text = event(kb);
        return async () => {
          endpoint.requests.length = 0;
          endpoint.script({ kind: "stream", chunks: [text] });
          await streamTurn(client, body).catch(() => undefined);
        };
      },
    },
    {
      name: "capabilitiesFor: slashes (refused past 8 KB)",
      work: (kb) => {
        const url = slashes(kb);
        return quietly(() => capabilitiesForIn(state, url));
      },
    },
    {
      name: "getClient: slashes (refused past 8 KB)",
      work: (kb) => {
        const baseUrl = slashes(kb);
        return quietly(() => getClientIn(state, { baseUrl }));
      },
    },
    {
      name: "resolveApiKey: slashes (refused past 8 KB)",
      work: (kb) => {
        const baseUrl = slashes(kb);
        return quietly(() => resolveApiKey({ baseUrl }, { baseUrl: "http://h/v1" }, {}));
      },
    },
    {
      name: "importCapabilities: long base URLs, 8 KB of slashes each",
      work: (kb) => {
        const entries = Array.from({ length: Math.max(1, Math.floor(kb / 8)) }, () => ({
          baseUrl: `http://h/${"/".repeat(8000)}`,
          key: "",
          supports: {},
          models: {},
        }));
        const blob = JSON.stringify({ version: CAPABILITIES_SNAPSHOT_VERSION, endpoints: entries });
        return () => importCapabilitiesIn(state, blob);
      },
    },
  ];
  const rows: string[] = ["| shape | 25 KB ms | 50 KB ms | 100 KB ms | 200 KB ms | 200/25 |", "|---|---|---|---|---|---|"];
  try {
    for (const shape of shapes) {
      const times: number[] = [];
      await median(3, shape.work(SIZES[0]!));
      for (const kb of SIZES) times.push(await median(7, shape.work(kb)));
      const ratio = times[3]! / Math.max(times[0]!, 0.001);
      rows.push(`| ${shape.name} | ${times.map((time) => time.toFixed(2)).join(" | ")} | ${ratio.toFixed(1)} |`);
    }
  } finally {
    clearState(state);
    await endpoint.close();
  }
  console.log(rows.join("\n"));
}
