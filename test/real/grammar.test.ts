/**
 * A real llama-server is grammar-constrained: the library learns that from its listing before the
 * first request and sends the relaxed schemas, whose bounds its grammar enforces, so tool
 * arguments and askJson answers keep `maxLength`, `enum` and `minimum`/`maximum` in every call.
 * Each answer is checked against the schema as it was written, not as it was sent.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime } from "../../src/runtime.js";
import { ToolIterationLimit } from "../../src/text/errors.js";
import type { JsonSchema, ToolDefinition } from "../../src/shapes/config.js";
import { describeReal, startLlamaServer, type LlamaServer } from "../support/llama-server.js";

const Answer = z.object({
  name: z.string().max(12),
  colour: z.enum(["red", "green", "blue"]),
  count: z.number().int().min(1).max(9),
});
const { $schema: _dropped, ...original } = z.toJSONSchema(Answer) as Record<string, unknown>;

const TOOL: ToolDefinition = {
  type: "function",
  function: { name: "record_pick", description: "Records a name, a colour and a count.", parameters: original as JsonSchema },
};

const CALLS = 3;

describeReal("a real llama-server holds answers to the bounds of the schema", () => {
  let server: LlamaServer;

  beforeAll(async () => {
    server = await startLlamaServer({ model: "tiny", contextSize: 2048 });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it(`keeps tool arguments inside maxLength, enum and minimum/maximum in every one of at least ${CALLS} calls`, async () => {
    const runtime = createRuntime();
    const args: unknown[] = [];
    const sent: Array<Record<string, unknown>> = [];
    try {
      // The model is random: a reply may spend its ceiling before it calls; more runs are made until three calls were run.
      for (let run = 0; run < CALLS + 3 && args.length < CALLS; run += 1) {
        const outcome = await runtime
          .runAgentLoop({
            // The grammar lets one call follow another; a ceiling of 90 tokens ends the reply after the first or second, and a call it cuts off is not run.
            config: { baseUrl: server.baseUrl, model: server.model, maxTokens: 90, maxToolIterations: 1, maxRetries: 0, extraBody: { tool_choice: "required" } },
            messages: [{ role: "user", content: "Record a pick." }],
            tools: [TOOL],
            onRequest: (body) => sent.push(body),
            dispatch: ({ args: given }) => {
              args.push(given);
              return "recorded";
            },
          })
          .catch((error: unknown) => (ToolIterationLimit.is(error) ? error : Promise.reject(error)));
        expect(outcome).toBeDefined();
      }
      expect(args.length).toBeGreaterThanOrEqual(CALLS);
      for (const given of args) expect(Answer.safeParse(given).error?.issues, JSON.stringify(given)).toBeUndefined();
      for (const body of sent) {
        const declared = (body.tools as ToolDefinition[])[0]!.function as Record<string, unknown>;
        expect(declared.strict).toBeUndefined();
        expect(declared.parameters).toMatchObject({ properties: { name: { maxLength: 12 }, count: { minimum: 1, maximum: 9 } } });
      }
      expect(runtime.exportCapabilities().endpoints).toEqual([expect.objectContaining({ grammarConstrained: true, strictSchemas: false })]);
    } finally {
      runtime.reset();
    }
  }, 240_000);

  it(`answers askJson inside the same bounds in each of ${CALLS} calls`, async () => {
    const runtime = createRuntime();
    const notices: string[] = [];
    try {
      for (let call = 0; call < CALLS; call += 1) {
        const picked = await runtime.askJson({ baseUrl: server.baseUrl }, server.model, "Pick a name, a colour and a count.", "Pick.", Answer, {
          maxTokens: 120,
          onNotice: (text) => notices.push(text),
        });
        // askJson checks the answer with the zod schema itself: undefined would mean it failed.
        expect(picked, notices.join("\n")).toBeDefined();
        expect(Answer.safeParse(picked).success).toBe(true);
      }
      expect(notices).toEqual([]);
    } finally {
      runtime.reset();
    }
  }, 240_000);
});
