/**
 * @module transcript
 * Checks that a transcript is one an OpenAI-compatible server accepts, and generates valid ones
 * for property tests.
 *
 * The rule checked: every tool call an assistant message makes is answered by exactly one tool
 * message, the answers come straight after that assistant message in the order of its calls,
 * and no tool message answers a call that was not made (or was already answered).
 */
import fc from "fast-check";
import type { Message, ToolCall } from "../../src/shapes/config.js";

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/**
 * Lists what is wrong with a transcript, as sentences naming the index; empty when it is valid.
 *
 * Never throws, whatever it is handed.
 */
export function validateTranscript(messages: unknown): string[] {
  if (!Array.isArray(messages)) return ["the transcript is not an array"];
  const problems: string[] = [];
  let pending: string[] = [];
  let callsAt = -1;
  messages.forEach((message: unknown, index) => {
    if (!message || typeof message !== "object") {
      problems.push(`message ${index} is not an object`);
      return;
    }
    const role = (message as { role?: unknown }).role;
    if (typeof role !== "string" || !ROLES.has(role)) {
      problems.push(`message ${index} has an unknown role ${JSON.stringify(role)}`);
      return;
    }
    if (role === "tool") {
      const id = (message as { tool_call_id?: unknown }).tool_call_id;
      if (typeof id !== "string") problems.push(`tool message ${index} names no tool_call_id`);
      else if (pending.length === 0) problems.push(`tool message ${index} answers ${id}, which no open assistant call made`);
      else if (pending[0] !== id) problems.push(`tool message ${index} answers ${id}, but call ${pending[0]} of message ${callsAt} is next`);
      else pending.shift();
      return;
    }
    if (pending.length > 0) {
      problems.push(
        `message ${index} (${role}) comes before call${pending.length > 1 ? "s" : ""} ${pending.join(", ")} of message ${callsAt} ${pending.length > 1 ? "are" : "is"} answered`,
      );
      pending = [];
    }
    if (role === "assistant") {
      const calls = (message as { tool_calls?: unknown }).tool_calls;
      if (calls === undefined) return;
      if (!Array.isArray(calls)) {
        problems.push(`assistant message ${index} has tool_calls that is not an array`);
        return;
      }
      const ids = calls.map((call: ToolCall) => call?.id);
      const seen = new Set<string>();
      for (const id of ids) {
        if (typeof id !== "string" || id.length === 0) problems.push(`assistant message ${index} has a call without an id`);
        else if (seen.has(id)) problems.push(`assistant message ${index} uses call id ${id} twice`);
        else seen.add(id);
      }
      pending = ids.filter((id): id is string => typeof id === "string");
      callsAt = index;
    }
  });
  if (pending.length > 0)
    problems.push(`call${pending.length > 1 ? "s" : ""} ${pending.join(", ")} of message ${callsAt} ${pending.length > 1 ? "are" : "is"} never answered`);
  return problems;
}

/** Options for {@link transcriptArbitrary}. */
export interface TranscriptShape {
  /** The most questions. @default 8 */
  maxQuestions?: number;
  /** The most tool-calling steps under one question. @default 4 */
  maxSteps?: number;
  /** The longest text of one message. @default 400 */
  maxChars?: number;
}

const text = (maxChars: number): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: Math.min(maxChars, 60) }) },
    { weight: 2, arbitrary: fc.nat({ max: maxChars }).map((n) => "x".repeat(n)) },
    { weight: 1, arbitrary: fc.nat({ max: maxChars }).map((n) => '{"k":1}\n'.repeat(Math.ceil(n / 8))) },
  );

/**
 * Generates valid transcripts: leading system messages, then questions, each followed by steps
 * of an assistant message with tool calls and their answers, and usually a closing answer.
 */
export function transcriptArbitrary(shape: TranscriptShape = {}): fc.Arbitrary<Message[]> {
  const maxChars = shape.maxChars ?? 400;
  const step = fc.record({
    content: text(maxChars),
    calls: fc.array(fc.record({ name: fc.constantFrom("read", "write", "search"), args: text(maxChars), result: text(maxChars * 4) }), {
      minLength: 1,
      maxLength: 3,
    }),
  });
  const question = fc.record({
    ask: text(maxChars),
    steps: fc.array(step, { maxLength: shape.maxSteps ?? 4 }),
    answer: fc.option(text(maxChars), { nil: undefined }),
  });
  return fc
    .record({
      system: fc.array(text(maxChars), { maxLength: 2 }),
      questions: fc.array(question, { minLength: 0, maxLength: shape.maxQuestions ?? 8 }),
    })
    .map(({ system, questions }) => {
      const messages: Message[] = system.map((content) => ({ role: "system", content }));
      let id = 0;
      for (const q of questions) {
        messages.push({ role: "user", content: q.ask });
        for (const s of q.steps) {
          const calls: ToolCall[] = s.calls.map((call) => ({
            id: `call_${id++}`,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify({ text: call.args }) },
          }));
          messages.push({ role: "assistant", content: s.content, tool_calls: calls });
          s.calls.forEach((call, at) => messages.push({ role: "tool", tool_call_id: calls[at]!.id, content: call.result }));
        }
        if (q.answer !== undefined) messages.push({ role: "assistant", content: q.answer });
      }
      return messages;
    });
}
