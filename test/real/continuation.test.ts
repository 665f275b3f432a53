/**
 * Continuation against a real llama-server: a cut-off answer carried on is the answer plus new
 * text, never the answer twice, whether the server is asked to continue outright or streams the
 * prefill back first; and the model's assistantPrefill stays on in the exported snapshot.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { continueTurn, streamTurn, type StreamBody, type Turn } from "../../src/index.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import { describeReal, startLlamaServer, type LlamaServer } from "../support/llama-server.js";

const SEEDS = Array.from({ length: 12 }, (_, index) => index + 1);

/** A real server on a shared machine can be slow: each test gets this long. */
const TEST_MS = 120_000;

describeReal("continuation against llama-server", () => {
  let server: LlamaServer;
  beforeAll(async () => {
    server = await startLlamaServer();
  }, TEST_MS);
  afterAll(async () => {
    await server?.stop();
  });

  /** Cuts an answer off at the ceiling for each seed, carries it on, and checks the joined turn. */
  async function continueEach(runtime: Runtime): Promise<{ first: Turn; fresh: string }[]> {
    const endpoint = { baseUrl: server.baseUrl };
    const client = runtime.getClient(endpoint);
    const supports = runtime.capabilitiesFor(server.baseUrl);
    const carried: { first: Turn; fresh: string }[] = [];
    for (const seed of SEEDS) {
      // Enough once a continuation has written new text and another has been read.
      if (carried.length >= 2 && carried.some(({ fresh }) => fresh.trim() !== "")) break;
      const body: StreamBody = { model: server.model, messages: [{ role: "user", content: "Tell me about Paris." }], max_tokens: 4, seed };
      const first = await streamTurn(client, body, { fences: [] });
      if (first.finishReason !== "length" || first.content.trim() === "") continue;
      const shown: string[] = [];
      const notices: string[] = [];
      const joined = await continueTurn(client, supports, body, first, {
        fences: [],
        onOutput: (text) => shown.push(text),
        onNotice: (text) => notices.push(text),
      });
      const fresh = shown.join("");
      expect(joined.content, `seed ${seed}: ${notices.join(" / ")}`).toBe(first.content + fresh);
      expect(joined.continuations).toBe(1);
      if (fresh.trim() !== "") expect(fresh.startsWith(first.content)).toBe(false);
      expect(notices.some((notice) => /started the answer over|refused to continue|failed/.test(notice))).toBe(false);
      carried.push({ first, fresh });
    }
    return carried;
  }

  it(
    "continues with only the new text under continue_final_message, keeping assistantPrefill on",
    async () => {
      const runtime = createRuntime();
      try {
        const carried = await continueEach(runtime);
        expect(carried.length).toBeGreaterThan(0);
        expect(carried.some(({ fresh }) => fresh.trim() !== "")).toBe(true);
        expect(runtime.modelCapabilitiesFor(server.baseUrl, undefined, server.model)).toMatchObject({ assistantPrefill: true, droppedFields: [] });
        expect(runtime.exportCapabilities().endpoints).toEqual([]);
      } finally {
        runtime.reset();
      }
    },
    TEST_MS,
  );

  it(
    "takes off the prefill the server streams back when the continuation fields are not sent",
    async () => {
      // The server does echo: the first content delta of a plain prefilled stream is the whole prefill.
      const response = await fetch(`${server.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: server.model,
          stream: true,
          max_tokens: 4,
          messages: [
            { role: "user", content: "hi" },
            { role: "assistant", content: "Paris is the capital" },
          ],
        }),
      });
      expect((await response.text()).match(/"content":"([^"]*)"/)?.[1]?.startsWith("Paris is the capital")).toBe(true);

      const runtime = createRuntime();
      try {
        runtime.modelCapabilitiesFor(server.baseUrl, undefined, server.model).droppedFields.push("continue_final_message");
        const carried = await continueEach(runtime);
        expect(carried.some(({ fresh }) => fresh.trim() !== "")).toBe(true);
        const stored = runtime.exportCapabilities().endpoints[0]?.models?.[server.model];
        expect(stored).toEqual({ droppedFields: ["continue_final_message"] });
        expect(runtime.modelCapabilitiesFor(server.baseUrl, undefined, server.model).assistantPrefill).toBe(true);
      } finally {
        runtime.reset();
      }
    },
    TEST_MS,
  );
});
