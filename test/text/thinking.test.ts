import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ALL_FENCES, DEFAULT_FENCES, type Fence, FenceSplitter, type FenceSplitterOptions, stripThinking } from "../../src/text/thinking.js";
import { FENCE_SHAPES } from "../support/adversarial.js";

/** Feeds `chunks` through a splitter the way a stream consumer would, applying `moved`. */
function splitChunks(chunks: readonly string[], options: FenceSplitterOptions = {}) {
  const splitter = new FenceSplitter(options);
  let content = "";
  let reasoning = "";
  let movedCount = 0;
  for (const chunk of chunks) {
    const part = splitter.push(chunk);
    if (part.moved !== undefined) {
      expect(content.startsWith(part.moved)).toBe(true);
      content = content.slice(part.moved.length);
      movedCount++;
    }
    content += part.answer;
    reasoning += part.reasoning;
  }
  const rest = splitter.end();
  expect(rest.moved).toBeUndefined();
  content += rest.answer;
  reasoning += rest.reasoning;
  return { content, reasoning, movedCount };
}

function cutAt(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let last = 0;
  for (const point of points) {
    chunks.push(text.slice(last, point));
    last = point;
  }
  chunks.push(text.slice(last));
  return chunks;
}

describe("stripThinking", () => {
  it("takes a <think> block out of the answer", () => {
    expect(stripThinking("<think>\nThe user greets me.\n</think>\n\nHello!")).toEqual({
      content: "Hello!",
      reasoning: "The user greets me.",
    });
  });

  it("leaves a reply without fences untouched", () => {
    expect(stripThinking("  Just an answer.\n")).toEqual({ content: "  Just an answer.\n", reasoning: "" });
  });

  it("reads everything as answer with fences: []", () => {
    expect(stripThinking("<think>x</think>y", [])).toEqual({ content: "<think>x</think>y", reasoning: "" });
  });

  it("reads gpt-oss harmony served raw, dropping the final channel header", () => {
    // Raw output quoted in https://github.com/johnbean393/Sidekick/issues/75
    const raw =
      '<|channel|>analysis<|message|>User says "hi". Likely they want to start conversation. We should reply politely.<|end|><|start|>assistant<|channel|>final<|message|>Hello Armando! How can I help you today?';
    expect(stripThinking(raw)).toEqual({
      content: "Hello Armando! How can I help you today?",
      reasoning: 'User says "hi". Likely they want to start conversation. We should reply politely.',
    });
  });

  it("reads a harmony reply that starts with the assistant header and ends with <|return|>", () => {
    const raw = "<|start|>assistant<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>";
    expect(stripThinking(raw)).toEqual({ content: "Done.", reasoning: "Think." });
  });

  it("ends the analysis at the final channel's header where the server left out <|end|>", () => {
    // llama-server without a reasoning parser; the harmony format starts each message with
    // <|start|>assistant, so that header ends the analysis message before it.
    const raw = "<|channel|>analysis<|message|>User asks 2+2. Simple.<|start|>assistant<|channel|>final<|message|>4";
    expect(stripThinking(raw)).toEqual({ content: "4", reasoning: "User asks 2+2. Simple." });
    expect(stripThinking("<|channel|>analysis<|message|>Simple.<|channel|>final<|message|>4<|return|>")).toEqual({ content: "4", reasoning: "Simple." });
  });

  it("leaves a commentary-channel call in the answer for recovery, without its <|call|> tail", () => {
    const raw =
      '<|channel|>analysis<|message|>Need the weather.<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|call|>';
    expect(stripThinking(raw)).toEqual({
      content: '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}',
      reasoning: "Need the weather.",
    });
  });

  it("reads Gemma 4's thought channel as reasoning", () => {
    // The channel as llama.cpp's models/templates/google-gemma-4-31B-it-interleaved.jinja writes it.
    expect(stripThinking("<|channel>thought\nThe user greets me.<channel|>Hello!")).toEqual({ content: "Hello!", reasoning: "The user greets me." });
  });

  it("keeps an unclosed channel as reasoning rather than losing it", () => {
    expect(stripThinking("<|channel>thought\nStill thinking")).toEqual({ content: "", reasoning: "Still thinking" });
    expect(stripThinking("<|channel|>analysis<|message|>Still thinking")).toEqual({ content: "", reasoning: "Still thinking" });
  });

  it("keeps near misses of the channel tags as answer text", () => {
    for (const text of ["<|channel|>analysis<|messag", "<|channel>though", "<channel|", "<|start|>assistan"])
      expect(stripThinking(text)).toEqual({ content: text, reasoning: "" });
  });

  it("drops the final channel header even with no analysis before it", () => {
    // The shape reported in https://github.com/vllm-project/vllm/issues/23694
    expect(stripThinking('<|channel|>final<|message|>{"issues":[]}<|return|>')).toEqual({
      content: '{"issues":[]}',
      reasoning: "",
    });
  });

  it("reads Kimi's ◁think▷ fence", () => {
    expect(stripThinking("◁think▷Short plan.◁/think▷The answer.")).toEqual({
      content: "The answer.",
      reasoning: "Short plan.",
    });
  });

  it("leaves <thinking> alone by default and takes it out with ALL_FENCES", () => {
    const text = "<thinking>plan</thinking>answer";
    expect(stripThinking(text)).toEqual({ content: text, reasoning: "" });
    expect(stripThinking(text, ALL_FENCES)).toEqual({ content: "answer", reasoning: "plan" });
    expect(stripThinking("<reasoning>r</reasoning>a", ALL_FENCES)).toEqual({ content: "a", reasoning: "r" });
  });

  it("leaves <reasoning> alone by default too, since a model can be quoting it", () => {
    expect(stripThinking("<reasoning>r</reasoning>a")).toEqual({ content: "<reasoning>r</reasoning>a", reasoning: "" });
    expect(DEFAULT_FENCES.map((fence) => fence.open)).toEqual(["<think>", "<|channel|>analysis<|message|>", "◁think▷", "<|channel>thought"]);
  });

  it("keeps a reply cut off inside a fence as reasoning with an empty answer", () => {
    expect(stripThinking("<think>Let me work through this step by st")).toEqual({
      content: "",
      reasoning: "Let me work through this step by st",
    });
  });

  it("keeps the answer written before a fence that was then cut off", () => {
    expect(stripThinking("Sure. <think>hmm")).toEqual({ content: "Sure. ", reasoning: "hmm" });
  });

  it("moves everything before a lone closing tag to reasoning", () => {
    expect(stripThinking("The template opened the fence.\n</think>\n\nAnswer.")).toEqual({
      content: "Answer.",
      reasoning: "The template opened the fence.",
    });
  });

  it("reads a template-opened fence with startInReasoning", () => {
    expect(stripThinking("plan</think>Answer", DEFAULT_FENCES, { startInReasoning: true })).toEqual({
      content: "Answer",
      reasoning: "plan",
    });
  });

  it("drops an opening tag the model writes again after a template-opened fence", () => {
    expect(stripThinking("\n<think>\nplan</think>Answer", DEFAULT_FENCES, { startInReasoning: true })).toEqual({
      content: "Answer",
      reasoning: "plan",
    });
  });

  it("drops a stray closing tag after a closed fence, keeping the text either side as answer", () => {
    expect(stripThinking("<think>a</think>b</think>c")).toEqual({ content: "bc", reasoning: "a" });
    expect(stripThinking("<think>a</think>b\n</think>\nc")).toEqual({ content: "b\n\nc", reasoning: "a" });
    expect(stripThinking("plan</think>b</think>c", DEFAULT_FENCES, { startInReasoning: true })).toEqual({ content: "bc", reasoning: "plan" });
    expect(stripThinking("x</think>y</think>z")).toEqual({ content: "yz", reasoning: "x" });
  });

  it("joins two fenced passages with a blank line", () => {
    expect(stripThinking("<think>one</think>mid<think>two</think>end")).toEqual({
      content: "midend",
      reasoning: "one\n\ntwo",
    });
  });

  it("keeps tags nested inside a fence as reasoning text", () => {
    expect(stripThinking("<think>a<think>b</think>c")).toEqual({ content: "c", reasoning: "a<think>b" });
  });

  it("drops whitespace that only lays out the reply before a fence", () => {
    expect(stripThinking("\n\n<think>x</think>\n\ny")).toEqual({ content: "y", reasoning: "x" });
  });

  it("keeps a half tag at the end of a reply as text", () => {
    expect(stripThinking("answer <thi")).toEqual({ content: "answer <thi", reasoning: "" });
  });
});

describe("on real model outputs", () => {
  const { cases } = JSON.parse(readFileSync(new URL("../fixtures/model-outputs/fenced-reasoning.json", import.meta.url), "utf8")) as {
    cases: Array<{ source: string; model: string; text: string; content: string; reasoning: string }>;
  };
  it.each(cases.map((entry) => [`${entry.model} (${entry.source})`, entry] as const))("splits %s", (_name, entry) => {
    expect(stripThinking(entry.text)).toEqual({ content: entry.content, reasoning: entry.reasoning });
    const chunks = entry.text.match(/[\s\S]{1,3}/g) ?? [];
    expect(splitChunks(chunks)).toMatchObject({ content: entry.content, reasoning: entry.reasoning });
  });
});

describe("FenceSplitter", () => {
  it("holds back a tail that could be half a tag", () => {
    const splitter = new FenceSplitter();
    expect(splitter.push("Hello <th")).toEqual({ answer: "Hello ", reasoning: "" });
    expect(splitter.push("ink>x")).toEqual({ answer: "", reasoning: "x" });
    expect(splitter.inReasoning).toBe(true);
    expect(splitter.push("</think>done")).toEqual({ answer: "done", reasoning: "" });
    expect(splitter.end()).toEqual({ answer: "", reasoning: "" });
  });

  it("releases a held tail as soon as it cannot be a tag", () => {
    const splitter = new FenceSplitter();
    expect(splitter.push("a <t")).toEqual({ answer: "a ", reasoning: "" });
    expect(splitter.push("able>")).toEqual({ answer: "<table>", reasoning: "" });
  });

  it("reports answer already handed out as moved when a lone closing tag arrives", () => {
    const splitter = new FenceSplitter();
    expect(splitter.push("Thinking it over")).toEqual({ answer: "Thinking it over", reasoning: "" });
    expect(splitter.push(" still.</think>\n\nAnswer")).toEqual({
      answer: "Answer",
      reasoning: "Thinking it over still.",
      moved: "Thinking it over",
    });
  });

  it("hands nothing out as answer before the close with startInReasoning", () => {
    const splitter = new FenceSplitter({ startInReasoning: true });
    expect(splitter.inReasoning).toBe(true);
    expect(splitter.push("Thinking")).toEqual({ answer: "", reasoning: "Thinking" });
    expect(splitter.push("</think>Answer")).toEqual({ answer: "Answer", reasoning: "" });
  });

  it("reads everything as answer with fences: [] even with startInReasoning", () => {
    const splitter = new FenceSplitter({ fences: [], startInReasoning: true });
    expect(splitter.push("<think>x</think>")).toEqual({ answer: "<think>x</think>", reasoning: "" });
  });

  it("accepts fences of its caller's own", () => {
    const fences: Fence[] = [{ open: "[[", close: "]]" }];
    expect(stripThinking("a[[b]]c", fences)).toEqual({ content: "ac", reasoning: "b" });
  });
});

/** Pieces a generated reply is built from: every tag of every fence, near misses and text. */
const allTags = ALL_FENCES.flatMap((fence) => [fence.open, fence.close, ...(fence.ends ?? []), ...(fence.markers ?? [])]);
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...allTags) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("<", "</", "<thi", "<|", "<|channel|>", "◁", "\n", "  ", "\n\n", "<|end", "<|channel>", "<channel", "<|start|>", "<|call"),
  },
  { weight: 3, arbitrary: fc.string({ maxLength: 8 }) },
);
const reply = fc.array(piece, { maxLength: 14 }).map((pieces) => pieces.join(""));
const fenceSet = fc.constantFrom<readonly Fence[]>(DEFAULT_FENCES, ALL_FENCES, [], [{ open: "<<", close: "<</" }]);

describe("chunking", () => {
  it("gives the same answer and reasoning however a reply is cut into chunks", () => {
    fc.assert(
      fc.property(reply, fc.array(fc.nat(), { maxLength: 12 }), fenceSet, fc.boolean(), (text, cuts, fences, start) => {
        const options = { fences, startInReasoning: start };
        const whole = stripThinking(text, fences, { startInReasoning: start });
        const single = splitChunks([text], options);
        const chunked = splitChunks(cutAt(text, cuts), options);
        expect(single.content).toBe(whole.content);
        expect(single.reasoning).toBe(whole.reasoning);
        expect(chunked.content).toBe(whole.content);
        expect(chunked.reasoning).toBe(whole.reasoning);
      }),
      { numRuns: 1500 },
    );
  });

  it("gives the same result fed one character at a time", () => {
    fc.assert(
      fc.property(reply, fenceSet, fc.boolean(), (text, fences, start) => {
        const whole = stripThinking(text, fences, { startInReasoning: start });
        const byCharacter = splitChunks([...text], { fences, startInReasoning: start });
        expect(byCharacter).toMatchObject({ content: whole.content, reasoning: whole.reasoning });
      }),
      { numRuns: 500 },
    );
  });

  it("reports moved text at most once", () => {
    fc.assert(
      fc.property(reply, fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
        expect(splitChunks(cutAt(text, cuts)).movedCount).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it("never loses text that holds no tag", () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.nat(), { maxLength: 6 }), (text, cuts) => {
        fc.pre(!allTags.some((tag) => text.includes(tag)));
        expect(splitChunks(cutAt(text, cuts)).content).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});

describe("a template-opened fence holding text", () => {
  it("ends only at a closing tag, even one that overlaps an opening tag, however the reply is cut", () => {
    // Found by the chunking property: an opening tag after text used to hide the closing tag
    // that started inside it when the reply came whole, but not when it came a character at a time.
    const fences: Fence[] = [{ open: "<<", close: "<</" }];
    const text = "<think><<</thinking>";
    const whole = stripThinking(text, fences, { startInReasoning: true });
    expect(whole).toMatchObject({ content: "thinking>", reasoning: "<think><" });
    expect(splitChunks([...text], { fences, startInReasoning: true })).toMatchObject({ content: whole.content, reasoning: whole.reasoning });
  });
});

describe("adversarial shapes, as the bench times them", () => {
  const size = fc.integer({ min: 1, max: 6_000 });
  const count = (text: string, unit: string) => text.split(unit).length - 1;

  /** Per fence shape, the answer and reasoning stripThinking documents for it (with ALL_FENCES). */
  const results: Record<string, (text: string) => { content: string; reasoning: string }> = {
    "<think>a</think> repeated": (text) => ({ content: "", reasoning: Array(count(text, "<think>")).fill("a").join("\n\n") }),
    // Tags inside a fence are its text; the reply ends inside it.
    "unclosed <think> repeated": (text) => ({ content: "", reasoning: text.slice("<think>".length) }),
    // The first closing tag moves what came before (nothing) to reasoning; later ones are stray, and dropped.
    "closing tags repeated": (text) => ({ content: "b".repeat(count(text, "</think>")), reasoning: "" }),
    "harmony analysis blocks": (text) => ({ content: "", reasoning: Array(count(text, "<|end|>")).fill("x").join("\n\n") }),
    "tag starts with nothing after": (text) => ({ content: text, reasoning: "" }),
    "half harmony tags": (text) => ({ content: text, reasoning: "" }),
    "Kimi fences": (text) => ({ content: "", reasoning: Array(count(text, "◁/think▷")).fill("a").join("\n\n") }),
    "answer then one fence at the end": (text) => ({ content: text.slice(0, -"<think>x</think>".length), reasoning: "x" }),
  };

  it.each(FENCE_SHAPES.map((shape) => [shape.name, shape] as const))("splits %s as documented, whole or in chunks", (_name, shape) => {
    fc.assert(
      fc.property(size, fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const text = shape.build(bytes);
        const expected = (results[shape.name] as (text: string) => { content: string; reasoning: string })(text);
        expect(stripThinking(text, ALL_FENCES)).toEqual(expected);
        expect(splitChunks(cutAt(text, cuts), { fences: ALL_FENCES })).toMatchObject(expected);
      }),
      { numRuns: 30 },
    );
  });
});
