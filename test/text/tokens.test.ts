import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message, ToolDefinition } from "../../src/shapes/config.js";
import {
  IMAGE_PART_TOKENS,
  contextChars,
  contextTokens,
  estimateTokens,
  messageChars,
  messageTokens,
  requestTokens,
  toolTokens,
} from "../../src/text/tokens.js";
import { transcriptArbitrary } from "../support/transcript.js";

const tools: ToolDefinition[] = [
  { type: "function", function: { name: "read_file", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } } },
];

const body = {
  messages: [
    { role: "system", content: "You are terse." },
    { role: "developer", content: "Prefer tools." },
    { role: "user", content: "Open the readme." },
    { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"README.md"}' } }] },
    { role: "tool", tool_call_id: "c1", content: "# Title\n".repeat(50) },
    { role: "assistant", content: "It has a title." },
  ] satisfies Message[],
  tools,
};

describe("estimators", () => {
  it("count characters over four, rounded up", () => {
    expect(estimateTokens("hello world")).toBe(3);
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcdefgh", { charsPerToken: 2 })).toBe(4);
  });

  it("count a message's text, reasoning and call arguments, and images flat", () => {
    const call: Message = {
      role: "assistant",
      content: "ok",
      reasoning_content: "hmm",
      tool_calls: [{ id: "1", type: "function", function: { name: "ab", arguments: "{}" } }],
    };
    expect(messageChars(call)).toBe(2 + 3 + 2 + 2);
    // Reasoning sent back under vLLM's input name counts the same as under reasoning_content.
    const { reasoning_content: _kept, ...bare } = call as Message & { reasoning_content: string };
    expect(messageChars({ ...bare, reasoning: "hmm" } as Message)).toBe(messageChars(call));
    expect(messageChars(bare as Message)).toBe(2 + 2 + 2);
    const image: Message = {
      role: "user",
      content: [
        { type: "text", text: "abcd" },
        { type: "image_url", image_url: { url: "x" } },
      ],
    };
    expect(messageTokens(image)).toBe(1 + IMAGE_PART_TOKENS);
  });

  it("count a request as its messages plus its tool block", () => {
    const expected = toolTokens(tools) + body.messages.reduce((sum, message) => sum + messageTokens(message), 0);
    expect(requestTokens(body)).toBe(expected);
  });
});

describe("contextChars", () => {
  it("counts the exact characters under each part", () => {
    const chars = contextChars(body);
    expect(chars.system).toBe("You are terse.".length + "Prefer tools.".length);
    expect(chars.tools).toBe(JSON.stringify(tools).length);
    expect(chars.toolResults).toBe("# Title\n".length * 50);
    expect(chars.history).toBe("Open the readme.".length + "read_file".length + '{"path":"README.md"}'.length + "It has a title.".length);
    expect(chars.total).toBe(chars.system + chars.tools + chars.history + chars.toolResults);
  });

  it("reads an empty or malformed body as nothing", () => {
    expect(contextChars({ messages: [] })).toEqual({ system: 0, tools: 0, history: 0, toolResults: 0, total: 0 });
    expect(contextChars(undefined as never).total).toBe(0);
  });
});

describe("contextTokens", () => {
  it("without a reported prompt, totals requestTokens and counts the tool block as toolTokens does", () => {
    const parts = contextTokens(body, { charsPerToken: 3 });
    expect(parts.total).toBe(requestTokens(body, { charsPerToken: 3 }));
    expect(parts.tools).toBe(toolTokens(tools, { charsPerToken: 3 }));
    expect(parts.toolResults).toBe(messageTokens(body.messages[4]!, { charsPerToken: 3 }));
  });

  it("given a reported prompt, shares exactly that total out, the largest part absorbing the rounding", () => {
    const parts = contextTokens(body, { promptTokens: 1001 });
    expect(parts.total).toBe(1001);
    expect(parts.system + parts.tools + parts.history + parts.toolResults).toBe(1001);
    // The tool result is the largest part by far.
    expect(parts.toolResults).toBeGreaterThan(parts.history);
    const chars = contextChars(body);
    expect(parts.system).toBe(Math.floor((1001 * chars.system) / chars.total));
  });

  it("reads a zero, negative or non-numeric prompt as absent", () => {
    for (const promptTokens of [0, -5, Number.NaN, Infinity]) {
      expect(contextTokens(body, { promptTokens }).total).toBe(requestTokens(body));
    }
  });

  it("puts a reported prompt for an empty request under history", () => {
    expect(contextTokens({ messages: [] }, { promptTokens: 40 })).toEqual({ system: 0, tools: 0, history: 40, toolResults: 0, total: 40 });
  });

  it("keeps its parts summing to the total, with and without a reported prompt", () => {
    fc.assert(
      fc.property(
        transcriptArbitrary({ maxQuestions: 4 }),
        fc.boolean(),
        fc.option(fc.integer({ min: -10, max: 2_000_000 }), { nil: undefined }),
        fc.option(fc.double({ min: 0.5, max: 8, noNaN: true }), { nil: undefined }),
        (messages, withTools, promptTokens, charsPerToken) => {
          const request = { messages, tools: withTools ? tools : undefined };
          const parts = contextTokens(request, { promptTokens, charsPerToken });
          expect(parts.system + parts.tools + parts.history + parts.toolResults).toBe(parts.total);
          for (const value of Object.values(parts)) expect(value).toBeGreaterThanOrEqual(0);
          if (promptTokens !== undefined && promptTokens > 0) expect(parts.total).toBe(promptTokens);
          else {
            expect(parts.total).toBe(requestTokens(request, { charsPerToken }));
            expect(parts.tools).toBe(toolTokens(request.tools, { charsPerToken }));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
