import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Message } from "../../src/shapes/config.js";
import { applyReplayForm, readReplayRefusal, replayFormOf, type ReplayField, type ReplayForm } from "../../src/wire/reasoning-replay.js";
import { decideRefusal, type ModelLatches } from "../../src/wire/refusal.js";
import { capabilitiesForIn, freshEndpointCapabilities, freshModelCapabilities, modelCapabilitiesForIn } from "../../src/wire/capabilities.js";
import { noteListingIn } from "../../src/wire/capabilities-server.js";
import { buildBody } from "../../src/wire/request-body.js";
import { CAPABILITIES_SNAPSHOT_VERSION, exportCapabilitiesIn, importCapabilitiesIn } from "../../src/wire/snapshot.js";
import { createState } from "../../src/state/state.js";
import { configureKeySaltIn } from "../../src/wire/key-fingerprint.js";
import { messageOf, PROFILES, refusalWording, WORDING_SAMPLES } from "../support/endpoint.js";
import "../support/fast-check-seed.js";

/** The words a loopback family refuses with, as a client reads them. */
const words = (profile: keyof typeof PROFILES, kind: Parameters<typeof refusalWording>[1], detail: object = {}): string =>
  messageOf(refusalWording(PROFILES[profile], kind).body({ model: "deepseek-v4-flash", ...detail }));

/** An error shaped the way the OpenAI SDK throws one: a status and the parsed body. */
const failure = (status: number, body: unknown): Error =>
  Object.assign(new Error(`${status} ${messageOf(body)}`), { status, error: (body as { error?: unknown }).error });

const withCall = (reasoning?: string, content = ""): Message =>
  ({
    role: "assistant",
    content,
    tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }],
    ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
  }) as Message;

const form = (field: ReplayField, everyTurn = false, foldContent = false): ReplayForm => ({ field, everyTurn, foldContent });

describe("readReplayRefusal", () => {
  it("reads each family's real words", () => {
    expect(readReplayRefusal(words("deepseek", "reasoningMissing"))).toEqual({ kind: "pass-back" });
    expect(readReplayRefusal(messageOf(refusalWording(PROFILES.deepseek, "reasoningMissing").body({ model: "deepseek-reasoner", value: 4 })))).toEqual({
      kind: "pass-back",
    });
    expect(readReplayRefusal(words("openai", "reasoningField", { field: "reasoning_content", value: 3 }))).toEqual({
      kind: "field",
      field: "reasoning_content",
    });
    expect(readReplayRefusal(words("openai", "reasoningField", { field: "reasoning", value: 3 }))).toEqual({ kind: "field", field: "reasoning" });
    expect(readReplayRefusal(words("llama.cpp", "reasoningBoth"))).toEqual({ kind: "both" });
    // Kimi K2's thinking mode, wanting reasoning_content on a tool-call turn.
    expect(readReplayRefusal(words("openai", "toolCallReasoning", { value: 5 }))).toEqual({ kind: "pass-back" });
    expect(readReplayRefusal("messages.1.reasoning_content: Extra inputs are not permitted")).toEqual({ kind: "field", field: "reasoning_content" });
  });

  it("reads every replay refusal among the real-world samples, and no other sample", () => {
    const replay = WORDING_SAMPLES.filter(
      (sample) => sample.kind === "reasoningMissing" || sample.kind === "reasoningField" || sample.kind === "toolCallReasoning",
    );
    expect(replay.length).toBeGreaterThanOrEqual(4);
    for (const sample of replay) {
      expect(readReplayRefusal(messageOf(sample.body)), sample.source).toEqual(
        sample.kind === "reasoningField" ? { kind: "field", field: "reasoning_content" } : { kind: "pass-back" },
      );
    }
    for (const sample of WORDING_SAMPLES.filter((sample) => !replay.includes(sample))) {
      expect(readReplayRefusal(messageOf(sample.body)), sample.source).toBeUndefined();
    }
  });

  it("says nothing of words about other things", () => {
    for (const text of [
      "",
      "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
      "Unrecognized request argument supplied: reasoning",
      "reasoning_effort: Input should be 'low', 'medium' or 'high'",
      "This model's maximum context length is 8192 tokens.",
      "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'name' is unsupported)]",
    ]) {
      expect(readReplayRefusal(text), text).toBeUndefined();
    }
    expect(readReplayRefusal(undefined as unknown as string)).toBeUndefined();
  });
});

describe("decideRefusal on replayed reasoning", () => {
  const model = (): ModelLatches => ({ ...freshModelCapabilities() });
  const sentWith = (field: string): Record<string, unknown> => ({
    messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: "", [field]: "r" },
    ],
  });

  it("answers DeepSeek's refusal with reasoning_content on every assistant turn, once", () => {
    const latches = model();
    const decision = decideRefusal(
      failure(400, refusalWording(PROFILES.deepseek, "reasoningMissing").body({ model: "m" })),
      freshEndpointCapabilities(),
      latches,
      "m",
      [],
      {},
    );
    expect(decision.kind).toBe("answer");
    if (decision.kind !== "answer") return;
    expect(decision.answers.map((answer) => [answer.latch, answer.already])).toEqual([["replay:pass-back", false]]);
    decision.answers[0]!.apply();
    expect([latches.replayField, latches.replayEveryTurn]).toEqual(["reasoning_content", true]);
    const again = decideRefusal(
      failure(400, refusalWording(PROFILES.deepseek, "reasoningMissing").body({ model: "m" })),
      freshEndpointCapabilities(),
      latches,
      "m",
      [],
      {},
    );
    expect(again.kind === "answer" && again.answers[0]!.already).toBe(true);
  });

  it("steps a refused field from reasoning_content to reasoning to none, and stops on a field the request did not carry", () => {
    const latches = model();
    const supports = freshEndpointCapabilities();
    const refusal = (field: string) => failure(400, refusalWording(PROFILES.openai, "reasoningField").body({ model: "m", field, value: 1 }));
    const first = decideRefusal(refusal("reasoning_content"), supports, latches, "m", [], sentWith("reasoning_content"));
    expect(first.kind).toBe("answer");
    if (first.kind === "answer") first.answers[0]!.apply();
    expect(latches.replayField).toBe("reasoning");
    const second = decideRefusal(refusal("reasoning"), supports, latches, "m", [], sentWith("reasoning"));
    if (second.kind === "answer") second.answers[0]!.apply();
    expect(latches.replayField).toBe("none");
    expect(decideRefusal(refusal("reasoning"), supports, model(), "m", [], sentWith("reasoning_content")).kind).toBe("stuck");
    // Without a model name nothing model-level is latched, and the refusal reaches the caller.
    expect(decideRefusal(refusal("reasoning_content"), supports, undefined, "", [], undefined).kind).toBe("pass");
  });

  it("answers llama.cpp's both-content-and-thinking failure by folding, even as a 500", () => {
    const latches = model();
    const decision = decideRefusal(
      failure(500, refusalWording(PROFILES["llama.cpp"], "reasoningBoth").body({ model: "m" })),
      freshEndpointCapabilities(),
      latches,
      "m",
      [],
      {},
    );
    expect(decision.kind).toBe("answer");
    if (decision.kind === "answer") decision.answers[0]!.apply();
    expect(latches.replayFoldContent).toBe(true);
  });

  it("reads a field refusal as already answered where the endpoint's form is not the refused field", () => {
    const supports = { ...freshEndpointCapabilities(), reasoningField: "reasoning" as const };
    const decision = decideRefusal(
      failure(400, refusalWording(PROFILES.openai, "reasoningField").body({ model: "m", field: "reasoning_content" })),
      supports,
      model(),
      "m",
      [],
      sentWith("reasoning_content"),
    );
    expect(decision.kind === "answer" && decision.answers[0]!.already).toBe(true);
  });
});

describe("applyReplayForm", () => {
  it("renames, strips, pads and folds as the form says, leaving the input alone", () => {
    const messages: Message[] = [
      { role: "user", content: "q" },
      withCall("r1", "Reading."),
      { role: "tool", tool_call_id: "c1", content: "x" },
      { role: "assistant", content: "done" },
    ];
    const frozen = structuredClone(messages);
    expect(applyReplayForm(messages, form("reasoning_content"), true)).toEqual(messages);
    expect(applyReplayForm(messages, form("reasoning_content"), true)[1]).toBe(messages[1]);
    expect(applyReplayForm(messages, form("reasoning"), true)[1]).toEqual({ ...withCall(undefined, "Reading."), reasoning: "r1" });
    expect(applyReplayForm(messages, form("none"), true)[1]).toEqual(withCall(undefined, "Reading."));
    expect(applyReplayForm(messages, form("reasoning_content", true), true)[3]).toEqual({ role: "assistant", content: "done", reasoning_content: "" });
    expect(applyReplayForm(messages, form("reasoning_content", true), false)[3]).toBe(messages[3]);
    expect(applyReplayForm(messages, form("reasoning_content", false, true), true)[1]).toEqual(withCall("r1\n\nReading.", ""));
    expect(messages).toEqual(frozen);
  });

  it("leaves every message but an assistant's untouched and puts any scratchpad under the form's field alone", () => {
    const text = fc.option(fc.string({ maxLength: 8 }), { nil: undefined });
    const message = fc.oneof(
      fc.record({ role: fc.constant("user" as const), content: fc.string({ maxLength: 8 }) }),
      fc.record({ role: fc.constant("tool" as const), tool_call_id: fc.constant("c1"), content: fc.string({ maxLength: 8 }) }),
      fc.tuple(fc.string({ maxLength: 8 }), text, text, fc.boolean()).map(([content, first, second, calls]) => {
        const built: Record<string, unknown> = { role: "assistant", content };
        if (calls) built.tool_calls = [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }];
        if (first !== undefined) built.reasoning_content = first;
        if (second !== undefined) built.reasoning = second;
        return built as unknown as Message;
      }),
    );
    const forms = fc.record({
      field: fc.constantFrom<ReplayField>("reasoning_content", "reasoning", "none"),
      everyTurn: fc.boolean(),
      foldContent: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), forms, fc.boolean(), (messages, chosen, tools) => {
        const before = structuredClone(messages);
        const out = applyReplayForm(messages, chosen, tools);
        expect(messages).toEqual(before);
        expect(out).toHaveLength(messages.length);
        out.forEach((sent, index) => {
          const given = messages[index] as unknown as Record<string, unknown>;
          const record = sent as unknown as Record<string, unknown>;
          if (given.role !== "assistant") return expect(sent).toBe(messages[index]);
          const other = chosen.field === "reasoning" ? "reasoning_content" : "reasoning";
          expect(other in record && chosen.field !== "none" ? record[other] : undefined).toBeUndefined();
          if (chosen.field === "none") expect("reasoning_content" in record || "reasoning" in record).toBe(false);
          const had = "reasoning_content" in given || "reasoning" in given;
          if (chosen.field !== "none" && (had || (chosen.everyTurn && tools))) expect(typeof record[chosen.field]).toBe("string");
          if (chosen.field !== "none" && !had && !(chosen.everyTurn && tools)) expect(chosen.field in record).toBe(false);
        });
      }),
    );
  });

  it("is applied by buildBody: the endpoint's vLLM field, then the model's latch", () => {
    const supports = freshEndpointCapabilities();
    const model = freshModelCapabilities();
    const messages: Message[] = [{ role: "user", content: "q" }, withCall("r1")];
    const config = { model: "gpt-oss", baseUrl: "http://x/v1" };
    expect(buildBody(config, supports, model, messages).messages[1]).toBe(messages[1]);
    supports.reasoningField = "reasoning";
    expect(buildBody(config, supports, model, messages).messages[1]).toMatchObject({ reasoning: "r1" });
    expect(buildBody(config, supports, undefined, messages).messages[1]).toMatchObject({ reasoning: "r1" });
    model.replayField = "none";
    expect(buildBody(config, supports, model, messages).messages[1]).toEqual(withCall());
    expect(replayFormOf(undefined)).toEqual(form("reasoning_content"));
  });
});

describe("the vLLM listing", () => {
  it("sets `reasoning` for a vLLM listing and nothing for another grammar server", () => {
    const state = createState();
    expect(noteListingIn(state, { baseUrl: "http://v/v1" }, [PROFILES.vllm.modelEntry("openai/gpt-oss-120b", 4096)])).toBe("vLLM");
    expect(capabilitiesForIn(state, "http://v/v1").reasoningField).toBe("reasoning");
    expect(noteListingIn(state, { baseUrl: "http://l/v1" }, [PROFILES["llama.cpp"].modelEntry("gpt-oss", 4096)])).toBe("llama.cpp");
    expect(capabilitiesForIn(state, "http://l/v1").reasoningField).toBeUndefined();
    expect(noteListingIn(state, { baseUrl: "http://d/v1" }, [PROFILES.deepseek.modelEntry("deepseek-v4-flash", 4096)])).toBeUndefined();
  });
});

describe("the replay latches in a snapshot", () => {
  it("round-trips the model latches and the endpoint's field at version 1", () => {
    const state = createState();
    configureKeySaltIn(state, "the salt both share");
    const model = modelCapabilitiesForIn(state, "http://x/v1", "k", "deepseek-v4-flash");
    model.replayField = "reasoning_content";
    model.replayEveryTurn = true;
    modelCapabilitiesForIn(state, "http://x/v1", "k", "gpt-oss").replayFoldContent = true;
    capabilitiesForIn(state, "http://v/v1").reasoningField = "reasoning";
    const blob = exportCapabilitiesIn(state);
    expect(blob.version).toBe(CAPABILITIES_SNAPSHOT_VERSION);
    expect(CAPABILITIES_SNAPSHOT_VERSION).toBe(1);
    const restored = createState();
    configureKeySaltIn(restored, "the salt both share");
    expect(importCapabilitiesIn(restored, JSON.parse(JSON.stringify(blob))).ignored).toEqual([]);
    expect(modelCapabilitiesForIn(restored, "http://x/v1", "k", "deepseek-v4-flash")).toMatchObject({
      replayField: "reasoning_content",
      replayEveryTurn: true,
      replayFoldContent: false,
    });
    expect(modelCapabilitiesForIn(restored, "http://x/v1", "k", "gpt-oss")).toMatchObject({ replayField: "", replayEveryTurn: false, replayFoldContent: true });
    expect(capabilitiesForIn(restored, "http://v/v1").reasoningField).toBe("reasoning");
    expect(exportCapabilitiesIn(restored)).toEqual(blob);
  });

  it("ignores bad values with where and why, and imports a blob without the latches as before", () => {
    const state = createState();
    const result = importCapabilitiesIn(state, {
      version: 1,
      endpoints: [
        {
          baseUrl: "http://x/v1",
          key: "",
          reasoningField: "thinking",
          models: { m: { replayField: "thinking", replayEveryTurn: "yes", replayFoldContent: 1 } },
        },
        { baseUrl: "http://y/v1", key: "", models: { n: { legacyTokenLimit: false } } },
      ],
    });
    expect(result.ignored).toEqual([
      "endpoints[0].reasoningField: not one of reasoning_content, reasoning, none",
      'endpoints[0].models["m"].replayField: not one of reasoning_content, reasoning, none',
      'endpoints[0].models["m"].replayEveryTurn: not a boolean',
      'endpoints[0].models["m"].replayFoldContent: not a boolean',
    ]);
    expect(modelCapabilitiesForIn(state, "http://x/v1", undefined, "m")).toMatchObject({ replayField: "", replayEveryTurn: false, replayFoldContent: false });
    expect(capabilitiesForIn(state, "http://x/v1").reasoningField).toBeUndefined();
    expect(modelCapabilitiesForIn(state, "http://y/v1", undefined, "n")).toMatchObject({ legacyTokenLimit: false, replayField: "" });
  });
});
