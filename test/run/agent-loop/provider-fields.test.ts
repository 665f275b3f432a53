import { describe, expect, it } from "vitest";
import type { AssistantMessage, Message } from "../../../src/shapes/config.js";
import { exportCapabilitiesIn } from "../../../src/wire/snapshot.js";
import { withModelLoop, type ModelLoop } from "../../support/model-loop.js";
import type { EndpointOptions, Scripted } from "../../support/endpoint.js";
import { validateTranscript } from "../../support/transcript.js";

const question: Message[] = [{ role: "user", content: "Read a and b, then say what they hold." }];
const GEMINI = "gemini-3-pro-preview";
const SIGNATURE = "extra_content.google.thought_signature";

/**
 * A Gemini 3 tool-call step as its OpenAI-compatible endpoint streams it: each call whole in one
 * delta, without an index, with the thought signature under extra_content.google (the capture in
 * https://github.com/noho/dayu-agent/issues/45 and https://github.com/earendil-works/pi/issues/6733).
 */
const geminiStep = (id: string, path: string, signature: string): Scripted => ({
  kind: "stream",
  chunks: [
    {
      object: "chat.completion.chunk",
      model: GEMINI,
      choices: [
        {
          index: 0,
          delta: {
            role: "assistant",
            tool_calls: [
              {
                extra_content: { google: { thought_signature: signature } },
                function: { arguments: JSON.stringify({ path }), name: "read" },
                id,
                type: "function",
              },
            ],
          },
        },
      ],
    },
    { object: "chat.completion.chunk", model: GEMINI, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
  ],
});

const answerChunks = (content: string, extra: Record<string, unknown> = {}): Scripted => ({
  kind: "stream",
  chunks: [{ choices: [{ index: 0, delta: { role: "assistant", content, ...extra } }] }, { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }],
});

function withLoop(endpoint: EndpointOptions, body: (loop: ModelLoop) => Promise<void>): Promise<void> {
  return withModelLoop(endpoint, question, body);
}

type Wire = Record<string, unknown>;
const assistants = (body: Wire): Wire[] => (body.messages as Wire[]).filter((message) => message.role === "assistant");
const callsOf = (body: Wire): Wire[] => assistants(body).flatMap((message) => (message.tool_calls as Wire[] | undefined) ?? []);
const signatures = (body: Wire): unknown[] =>
  callsOf(body).map((call) => (call.extra_content as { google?: { thought_signature?: unknown } } | undefined)?.google?.thought_signature);

describe("provider fields in the loop", () => {
  it("sends each Gemini call's signature back unchanged on every follow-up of a three-step loop", async () => {
    await withLoop({ profile: "openai", models: [{ id: GEMINI }], refuse: { models: { [GEMINI]: { callField: SIGNATURE } } } }, async ({ server, run }) => {
      server.script(geminiStep("jm4owj31", "a", "EjQKMgEMOdbHsig-a"), geminiStep("kq2pzx07", "b", "EjQKMgEMOdbHsig-b"), answerChunks("They hold notes."));
      const result = await run(GEMINI);
      expect(result.turn.content).toBe("They hold notes.");
      const requests = server.chatRequests();
      expect(requests.map((request) => request.refused)).toEqual([undefined, undefined, undefined]);
      const bodies = server.chatBodies();
      expect(bodies.map(signatures)).toEqual([[], ["EjQKMgEMOdbHsig-a"], ["EjQKMgEMOdbHsig-a", "EjQKMgEMOdbHsig-b"]]);
      expect(JSON.stringify(bodies)).not.toContain("fieldsOrigin");
      const kept = result.messages.filter((message): message is AssistantMessage => message.role === "assistant" && Array.isArray(message.tool_calls));
      expect(validateTranscript(result.messages)).toEqual([]);
      expect(kept.map((message) => message.fieldsOrigin)).toEqual([
        { baseUrl: server.baseUrl, model: GEMINI, fields: [] },
        { baseUrl: server.baseUrl, model: GEMINI, fields: [] },
      ]);
    });
  });

  it("leaves the signatures out of the same transcript sent to another model", async () => {
    await withLoop({ profile: "openai", models: [{ id: GEMINI }, { id: "other-model" }] }, async ({ server, run }) => {
      server.script(geminiStep("jm4owj31", "a", "sig-a"), answerChunks("It holds notes."));
      const first = await run(GEMINI);
      server.script(answerChunks("Still notes."));
      await run("other-model", { messages: [...first.messages, { role: "user", content: "And now?" }] });
      const last = server.chatBodies().at(-1)!;
      expect(callsOf(last)).toHaveLength(1);
      expect(signatures(last)).toEqual([undefined]);
      expect(Object.keys(callsOf(last)[0]!).sort()).toEqual(["function", "id", "type"]);
      expect(JSON.stringify(last)).not.toContain("sig-a");
    });
  });

  it("round-trips OpenRouter's reasoning_details, streamed in pieces, on the assistant message", async () => {
    // The streamed shape of https://openrouter.ai/docs/use-cases/reasoning-tokens (reasoning_details
    // items carrying an index, their text in pieces and the signature last).
    const step: Scripted = {
      kind: "stream",
      chunks: [
        {
          choices: [
            {
              index: 0,
              delta: { role: "assistant", reasoning_details: [{ type: "reasoning.text", text: "Let me ", format: "anthropic-claude-v1", index: 0 }] },
            },
          ],
        },
        {
          choices: [
            {
              index: 0,
              delta: { role: "assistant", reasoning_details: [{ type: "reasoning.text", text: "read a.", format: "anthropic-claude-v1", index: 0 }] },
            },
          ],
        },
        {
          choices: [
            {
              index: 0,
              delta: { role: "assistant", reasoning_details: [{ type: "reasoning.text", signature: "ErUBCkYsig", format: "anthropic-claude-v1", index: 0 }] },
            },
          ],
        },
        {
          choices: [
            {
              index: 0,
              delta: { role: "assistant", tool_calls: [{ index: 0, id: "toolu_01", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }] },
            },
          ],
        },
        { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
      ],
    };
    await withLoop({ profile: "openrouter", models: [{ id: "anthropic/claude-sonnet-4" }] }, async ({ server, run }) => {
      server.script(step, answerChunks("Notes."));
      await run("anthropic/claude-sonnet-4");
      const details = assistants(server.chatBodies()[1]!)[0]!.reasoning_details;
      expect(details).toEqual([{ type: "reasoning.text", text: "Let me read a.", signature: "ErUBCkYsig", format: "anthropic-claude-v1", index: 0 }]);
    });
  });

  it("latches a refused provider field off for the model, in the snapshot, after one refusal", async () => {
    await withLoop(
      { profile: "openai", models: [{ id: GEMINI }], refuse: { messageFieldsForbidden: ["extra_content"] } },
      async ({ server, state, run, notices }) => {
        server.script(geminiStep("jm4owj31", "a", "sig-a"), geminiStep("kq2pzx07", "b", "sig-b"), answerChunks("Done."));
        const result = await run(GEMINI);
        expect(result.turn.content).toBe("Done.");
        expect(
          server
            .chatRequests()
            .filter((request) => request.refused !== undefined)
            .map((request) => request.refused),
        ).toEqual(["messageField"]);
        expect(server.chatBodies().slice(2).flatMap(signatures)).toEqual([undefined, undefined, undefined]);
        expect(notices.some((text) => text.includes("extra_content"))).toBe(true);
        expect(exportCapabilitiesIn(state).endpoints[0]!.models![GEMINI]).toMatchObject({ droppedMessageFields: ["extra_content"] });
      },
    );
  });

  it("leaves out a field that cannot be written as JSON, with a notice, and keeps the transcript valid", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run, notices }) => {
      server.script(answerChunks("Fine."));
      const history: Message[] = [
        { role: "user", content: "Earlier." },
        { role: "assistant", content: "Earlier answer.", opaque: 10n, fieldsOrigin: { baseUrl: server.baseUrl, model: "loopback-model", fields: ["opaque"] } },
        ...question,
      ];
      const result = await run("loopback-model", { messages: history });
      expect(result.turn.content).toBe("Fine.");
      expect(assistants(server.chatBodies()[0]!)[0]).toEqual({ role: "assistant", content: "Earlier answer." });
      expect(notices.some((text) => text.includes("opaque") && text.includes("JSON"))).toBe(true);
      expect(validateTranscript(result.messages.filter((message) => message.role !== "assistant" || !("opaque" in message)))).toEqual([]);
    });
  });

  it("does not keep a field over 64 KB on the transcript, says so, and finishes the run", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run, notices }) => {
      const huge = "x".repeat(70_000);
      server.script(
        {
          kind: "stream",
          chunks: [
            {
              choices: [
                {
                  index: 0,
                  delta: {
                    role: "assistant",
                    tool_calls: [{ index: 0, id: "call_1", type: "function", huge_blob: huge, function: { name: "read", arguments: '{"path":"a"}' } }],
                  },
                },
              ],
            },
            { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
          ],
        },
        answerChunks("Done."),
      );
      const result = await run("loopback-model");
      expect(result.turn.content).toBe("Done.");
      expect(JSON.stringify(result.messages)).not.toContain(huge);
      expect(callsOf(server.chatBodies()[1]!)).toEqual([{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }]);
      expect(notices.some((text) => text.includes("huge_blob") && text.includes("65536"))).toBe(true);
      expect(validateTranscript(result.messages)).toEqual([]);
    });
  });

  it("ends with a clear error when the server refuses a field the request never carried", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run }) => {
      server.script({
        kind: "error",
        status: 400,
        body: {
          object: "error",
          message: "messages.1.tool_calls.0.extra_content: Extra inputs are not permitted",
          type: "BadRequestError",
          param: null,
          code: 400,
        },
      });
      const failure = await run("loopback-model").catch((error: unknown) => error);
      expect(String((failure as Error).message)).toMatch(/extra_content/);
      expect(String((failure as Error).message) + String((failure as { cause?: Error }).cause?.message)).toMatch(/did not send/);
      expect(server.chatBodies()).toHaveLength(1);
    });
  });
});
