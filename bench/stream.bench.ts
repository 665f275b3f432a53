/**
 * @module bench/stream
 * streamTurn against the openai SDK's own `for await` loop over the same 20,000-chunk loopback
 * stream, alternating in one process, medians compared.
 *
 * Three readers of the same stream, all through the same pooled client:
 * - the SDK loop: `for await` over `chat.completions.create({ stream: true })`, appending each
 *   delta's content (what a caller writes by hand, with nothing else done);
 * - streamTurn with nothing to do but read (`fences: []`);
 * - streamTurn as a turn runs it: default fences, an `onOutput` callback and the idle watchdog.
 * Two rows for scale: the SDK loop on a client built with the SDK's defaults, and the floor — the
 * raw response read with a naive line split and one `JSON.parse` per data line, nothing else.
 */
import OpenAI from "openai";
import { getClientIn } from "../src/wire/client.js";
import { createState, clearState } from "../src/state/state.js";
import { streamTurn } from "../src/wire/stream.js";
import { startEndpoint, turn } from "../test/support/endpoint.js";

const CHUNKS = 20_000;
const ROUNDS = 9;
const WARMUP = 2;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export async function run(): Promise<void> {
  const words = Array.from({ length: CHUNKS }, (_, index) => `w${index % 997} `).join("");
  // Rendered once and written in blocks of 200 events, so the server's share of a round is
  // moving bytes and what is measured is the reading. The bytes are the same 20,000 events.
  const events = turn({ content: words, pieces: CHUNKS }).chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  const blocks: string[] = [];
  for (let i = 0; i < events.length; i += 200) blocks.push(events.slice(i, i + 200).join(""));
  const server = await startEndpoint({ profile: "openai", respond: () => ({ kind: "stream", chunks: blocks }) });
  const state = createState();
  try {
    const client = getClientIn(state, { baseUrl: server.baseUrl });
    const plain = new OpenAI({ baseURL: server.baseUrl, apiKey: "bench" });
    const body = { model: "loopback-model", messages: [{ role: "user" as const, content: "go" }] };

    const sdkLoop = (sdk: OpenAI) => async (): Promise<string> => {
      const stream = await sdk.chat.completions.create({ ...body, stream: true });
      let content = "";
      for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? "";
      return content;
    };
    let told = 0;
    const readers: Record<string, () => Promise<string>> = {
      "SDK for-await loop": sdkLoop(client),
      "streamTurn, fences off": async () => (await streamTurn(client, body, { fences: [] })).content,
      "streamTurn, fences + onOutput + watchdog": async () =>
        (await streamTurn(client, body, { idleMs: 30_000, onOutput: (text) => void (told += text.length) })).content,
      "SDK for-await loop, default client": sdkLoop(plain),
      "floor: raw body, split, JSON.parse": async () => {
        const response = await client.chat.completions.create({ ...body, stream: true }).asResponse();
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let rest = "";
        let content = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const lines = (rest + decoder.decode(value, { stream: true })).split("\n");
          rest = lines.pop() ?? "";
          for (const line of lines) {
            if (!line.startsWith("data: {")) continue;
            const parsed = JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> };
            content += parsed.choices[0]?.delta.content ?? "";
          }
        }
        return content;
      },
    };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(readers).map((name) => [name, []]));
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const [name, read] of Object.entries(readers)) {
        const started = performance.now();
        const content = await read();
        const took = performance.now() - started;
        if (content !== words) throw new Error(`${name} read ${content.length} characters, expected ${words.length}`);
        if (round >= WARMUP) times[name]?.push(took);
      }
    }
    const baseline = median(times["SDK for-await loop"] ?? []);
    console.log(`${CHUNKS} chunks, ${ROUNDS} alternating rounds after ${WARMUP} warm-up, medians:`);
    for (const [name, list] of Object.entries(times)) {
      const value = median(list);
      console.log(`  ${name.padEnd(44)} ${value.toFixed(1).padStart(8)} ms  ${(value / baseline).toFixed(2)}× the SDK loop`);
    }
    void told;
  } finally {
    clearState(state);
    await server.close();
  }
}
