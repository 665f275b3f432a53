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
 *
 * Then one table per wire shape a turn arrives in — plain content deltas, reasoning in
 * `reasoning_content`, content as a list of parts, and gpt-oss harmony served raw — each read by
 * the floor and by streamTurn (fences off, and as a turn runs it), with streamTurn's ratio to the
 * floor: what reading that shape costs beyond parsing its events.
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

/** The floor: the raw response read with a naive line split and one `JSON.parse` per data line, each delta handed on. */
async function readFloor(
  client: OpenAI,
  body: { model: string; messages: Array<{ role: "user"; content: string }> },
  take: (delta: Record<string, unknown>) => void,
): Promise<void> {
  const response = await client.chat.completions.create({ ...body, stream: true }).asResponse();
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let rest = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const lines = (rest + decoder.decode(value, { stream: true })).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data: {")) continue;
      const parsed = JSON.parse(line.slice(6)) as { choices: Array<{ delta?: Record<string, unknown> }> };
      take(parsed.choices[0]?.delta ?? {});
    }
  }
}

/** Each reader's times over alternating rounds after the warm-up; `check` rejects a wrong read. */
async function alternate<T>(readers: Record<string, () => Promise<T>>, check: (name: string, read: T) => void): Promise<Record<string, number[]>> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(readers).map((name) => [name, []]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const [name, read] of Object.entries(readers)) {
      const started = performance.now();
      const value = await read();
      const took = performance.now() - started;
      check(name, value);
      if (round >= WARMUP) times[name]?.push(took);
    }
  }
  return times;
}

/**
 * A loopback endpoint answering every request with these events, rendered once and written in
 * blocks of 200, so the server's share of a round is moving bytes and what is measured is the reading.
 */
function serveEvents(chunks: readonly unknown[]): ReturnType<typeof startEndpoint> {
  const events = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  const blocks: string[] = [];
  for (let i = 0; i < events.length; i += 200) blocks.push(events.slice(i, i + 200).join(""));
  return startEndpoint({ profile: "openai", respond: () => ({ kind: "stream", chunks: blocks }) });
}

/** The chunk a delta travels in. */
function chunkOf(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "loopback-model", choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** Each wire shape's deltas, 20,000 of them, with what the floor collects from each. */
const SHAPES: Record<string, () => Array<Record<string, unknown>>> = {
  "content deltas": () => Array.from({ length: CHUNKS }, (_, index) => ({ content: `w${index % 997} ` })),
  "reasoning_content then content": () =>
    Array.from({ length: CHUNKS }, (_, index) => (index < CHUNKS / 2 ? { reasoning_content: `r${index % 997} ` } : { content: `w${index % 997} ` })),
  "content as parts": () =>
    Array.from({ length: CHUNKS }, (_, index) =>
      index < CHUNKS / 2
        ? { content: [{ type: "thinking", thinking: [{ type: "text", text: `r${index % 997} ` }] }] }
        : { content: [{ type: "text", text: `w${index % 997} ` }] },
    ),
  "harmony served raw": () => [
    { content: "<|channel|>analysis<|message|>" },
    ...Array.from({ length: CHUNKS / 2 - 1 }, (_, index) => ({ content: `r${index % 997} ` })),
    { content: "<|end|><|start|>assistant<|channel|>final<|message|>" },
    ...Array.from({ length: CHUNKS / 2 - 1 }, (_, index) => ({ content: `w${index % 997} ` })),
  ],
};

/** Text the floor takes from a delta: a string field as it is, a list of parts by their text. */
function floorText(delta: Record<string, unknown>): number {
  let length = 0;
  for (const value of Object.values(delta)) {
    if (typeof value === "string") length += value.length;
    else if (Array.isArray(value)) length += JSON.stringify(value).length;
  }
  return length;
}

/** Per wire shape: the floor, and streamTurn fences off and as a turn runs it, alternating; medians. */
async function shapes(): Promise<void> {
  console.log(`\nPer wire shape, ${CHUNKS} chunks, ${ROUNDS} alternating rounds after ${WARMUP} warm-up, medians:`);
  for (const [shape, deltas] of Object.entries(SHAPES)) {
    const server = await serveEvents([...deltas().map((delta) => chunkOf(delta)), chunkOf({}, "stop")]);
    const state = createState();
    try {
      const client = getClientIn(state, { baseUrl: server.baseUrl });
      const body = { model: "loopback-model", messages: [{ role: "user" as const, content: "go" }] };
      let told = 0;
      const readers: Record<string, () => Promise<number>> = {
        floor: async () => {
          let read = 0;
          await readFloor(client, body, (delta) => void (read += floorText(delta)));
          return read;
        },
        "streamTurn, fences off": async () => {
          const turn = await streamTurn(client, body, { fences: [] });
          return turn.content.length + turn.reasoning.length;
        },
        "streamTurn as a turn runs it": async () => {
          const turn = await streamTurn(client, body, { idleMs: 30_000, onOutput: (text) => void (told += text.length), onNotice: () => undefined });
          return turn.content.length + turn.reasoning.length;
        },
      };
      const times = await alternate(readers, (name, length) => {
        if (length === 0) throw new Error(`${shape}: ${name} read nothing`);
      });
      const floor = median(times.floor ?? []);
      const row = Object.entries(times)
        .filter(([name]) => name !== "floor")
        .map(([name, list]) => `${name} ${(median(list) / floor).toFixed(2)}×`)
        .join(", ");
      console.log(`  ${shape.padEnd(32)} floor ${floor.toFixed(1).padStart(7)} ms; against it: ${row}`);
      void told;
    } finally {
      clearState(state);
      await server.close();
    }
  }
}

export async function run(): Promise<void> {
  const words = Array.from({ length: CHUNKS }, (_, index) => `w${index % 997} `).join("");
  const server = await serveEvents(turn({ content: words, pieces: CHUNKS }).chunks);
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
        let content = "";
        await readFloor(client, body, (delta) => void (content += typeof delta.content === "string" ? delta.content : ""));
        return content;
      },
    };
    const times = await alternate(readers, (name, content) => {
      if (content !== words) throw new Error(`${name} read ${content.length} characters, expected ${words.length}`);
    });
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
  await shapes();
}
