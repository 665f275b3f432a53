/**
 * A real llama-server is grammar-constrained: the library learns that from its listing before the
 * first request and sends the relaxed schemas, whose bounds its grammar enforces, so tool
 * arguments and askJson answers keep `maxLength`, `enum` and `minimum`/`maximum` in every call.
 * Each answer is checked against the schema as it was written, not as it was sent.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { ToolIterationLimit } from "../../src/text/errors.js";
import type { JsonSchema, ToolDefinition } from "../../src/shapes/config.js";
import { describeReal, startLlamaServer, type LlamaServer } from "../support/llama-server.js";

const COLOURS = ["red", "green", "blue"];

/** The schema as written: the bounds a strict rewrite would move into descriptions, and those it keeps. */
const ORIGINAL: JsonSchema = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 12 },
    colour: { type: "string", enum: COLOURS },
    count: { type: "integer", minimum: 1, maximum: 9 },
  },
  required: ["name", "colour", "count"],
  additionalProperties: false,
};

/** Where a value breaks ORIGINAL, read as JSON Schema reads it (maxLength counts code points). */
function violations(value: unknown): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return ["not an object"];
  const record = value as Record<string, unknown>;
  const out: string[] = [];
  for (const key of Object.keys(record)) if (!["name", "colour", "count"].includes(key)) out.push(`${key}: not allowed`);
  if (typeof record.name !== "string") out.push("name: not a string");
  else if ([...record.name].length > 12) out.push(`name: ${[...record.name].length} characters, over maxLength 12`);
  if (!COLOURS.includes(record.colour as string)) out.push(`colour: ${JSON.stringify(record.colour)} not in the enum`);
  if (typeof record.count !== "number" || !Number.isInteger(record.count)) out.push(`count: ${JSON.stringify(record.count)} not an integer`);
  else if (record.count < 1 || record.count > 9) out.push(`count: ${record.count} outside 1..9`);
  return out;
}

const TOOL: ToolDefinition = {
  type: "function",
  function: { name: "record_pick", description: "Records a name, a colour and a count.", parameters: ORIGINAL },
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
            config: {
              baseUrl: server.baseUrl,
              model: server.model,
              maxTokens: 90,
              maxToolIterations: 1,
              maxRetries: 0,
              extraBody: { tool_choice: "required" },
            },
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
      for (const given of args) expect(violations(given), JSON.stringify(given)).toEqual([]);
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

  it(`answers askJson inside the same bounds in every one of ${CALLS} answers`, async () => {
    const runtime = createRuntime();
    const notices: string[] = [];
    const answers: unknown[] = [];
    try {
      // llama-server now and then fails its own parse of a grammar-held reply with a 500; such a
      // call has no answer to check, and another is asked (at most three more).
      for (let call = 0; call < CALLS + 3 && answers.length < CALLS; call += 1) {
        const picked = await runtime.askJson({ baseUrl: server.baseUrl }, server.model, "Pick a name, a colour and a count.", "Pick.", ORIGINAL, {
          maxTokens: 200,
          onNotice: (text) => notices.push(text),
        });
        if (picked !== undefined) answers.push(picked);
      }
      expect(answers.length, notices.join("\n")).toBe(CALLS);
      for (const answer of answers) expect(violations(answer), JSON.stringify(answer)).toEqual([]);
      for (const notice of notices)
        expect(notice).toMatch(/500 Failed to update streamed response: The model produced output that does not match the expected peg-native format/);
    } finally {
      runtime.reset();
    }
  }, 240_000);
});
