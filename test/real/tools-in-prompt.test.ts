/**
 * A real llama-server started with --no-jinja refuses `tools` with a 500 ("tools param requires
 * --jinja flag"). The loop learns that once, describes the tools in the system prompt, reads the
 * call the model writes as text, runs it, and sends the result back as text the server takes.
 * The model's weights are random, so a grammar in `extraBody` holds each reply to either one
 * JSON call or a plain answer; everything else is the real server.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { ToolIterationLimit } from "../../src/text/errors.js";
import type { ToolDefinition } from "../../src/shapes/config.js";
import { TOOLS_IN_PROMPT_LEAD } from "../../src/wire/message-shaping.js";
import { describeReal, startLlamaServer, type LlamaServer } from "../support/llama-server.js";

const READ: ToolDefinition = {
  type: "function",
  function: { name: "read", description: "Reads a file.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
};

/** One JSON call naming the tool, or a short answer. */
const GRAMMAR = 'root ::= "{\\"name\\": \\"read\\", \\"arguments\\": {\\"path\\": \\"a\\"}}" | "Done."';

describeReal("a real llama-server without --jinja runs tools through the prompt", () => {
  let server: LlamaServer;

  beforeAll(async () => {
    server = await startLlamaServer({ model: "tiny", contextSize: 2048, jinja: false, args: ["--no-jinja"] });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("learns the refusal once, then completes a run whose call was read from the text and whose result went back", async () => {
    const runtime = createRuntime();
    const notices: string[] = [];
    const sent: Array<Record<string, unknown>> = [];
    let completed = false;
    const seen: string[] = [];
    try {
      // The model is random: runs are made until one called the tool and then answered.
      for (let run = 0; run < 12 && !completed; run += 1) {
        const dispatched: unknown[] = [];
        const outcome = await runtime
          .runAgentLoop({
            config: { baseUrl: server.baseUrl, model: server.model, maxTokens: 40, maxToolIterations: 8, maxRetries: 0, extraBody: { grammar: GRAMMAR } },
            messages: [{ role: "user", content: "Read file a." }],
            tools: [READ],
            onNotice: (text) => notices.push(text),
            onRequest: (body) => sent.push(body),
            dispatch: ({ args }) => {
              dispatched.push(args);
              return "notes";
            },
          })
          .catch((error: unknown) => (ToolIterationLimit.is(error) ? undefined : Promise.reject(error)));
        for (const args of dispatched) expect(args).toEqual({ path: "a" });
        seen.push(`${dispatched.length} call(s), then ${outcome === undefined ? "the iteration limit" : JSON.stringify(outcome.turn.content)}`);
        if (outcome?.turn.content === "Done." && dispatched.length > 0) {
          completed = true;
          expect(outcome.messages.some((message) => message.role === "tool" && message.content === "notes")).toBe(true);
        }
      }
      expect(completed, seen.join("; ")).toBe(true);
      expect(notices.filter((text) => text.includes("described in the system prompt"))).toHaveLength(1);
      const later = sent.slice(1);
      expect(later.length).toBeGreaterThan(0);
      for (const body of later) {
        expect(body.tools).toBeUndefined();
        expect(String((body.messages as Array<{ content: unknown }>)[0]!.content)).toContain(TOOLS_IN_PROMPT_LEAD);
      }
      expect(later.some((body) => JSON.stringify(body.messages).includes("<tool_response>"))).toBe(true);
      const models = runtime.exportCapabilities().endpoints.flatMap((endpoint) => Object.values(endpoint.models ?? {}));
      expect(models).toEqual([expect.objectContaining({ toolsInPrompt: true })]);
    } finally {
      runtime.reset();
    }
  }, 240_000);
});
