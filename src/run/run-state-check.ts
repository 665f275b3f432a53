/**
 * @module run-state-check
 * The checks parseRunState makes of a stored run state: each field's shape, and the transcript's
 * own rule — every call answered once, straight after the message that made it, except the
 * paused step's open calls, which must be exactly the ones it has no answer for.
 */

import { isPlainRecord } from "../text/guards.js";

/** What is wrong with a state, as sentences naming where: its fields, and its transcript. */
export interface RunStateFindings {
  shape: string[];
  transcript: string[];
}

const ROLES: ReadonlySet<string> = new Set(["system", "developer", "user", "assistant", "tool"]);
const DIGEST = /^[0-9a-f]{32}$/;

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0;
const isTotal = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;
const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === "string");

function checkContent(content: unknown, where: string, nullable: boolean, problems: string[]): void {
  if (typeof content === "string" || (nullable && (content === null || content === undefined))) return;
  if (Array.isArray(content) && content.every((part) => isPlainRecord(part) && typeof part.type === "string")) return;
  problems.push(`${where}.content: not text or a list of parts`);
}

/** Checks the shape of one message, its calls included. */
function checkMessage(message: unknown, where: string, problems: string[]): void {
  if (!isPlainRecord(message)) return void problems.push(`${where}: not an object`);
  const role = message.role;
  if (typeof role !== "string" || !ROLES.has(role)) return void problems.push(`${where}.role: ${JSON.stringify(role) ?? "missing"} is not a role`);
  if (role === "tool") {
    if (typeof message.tool_call_id !== "string" || message.tool_call_id === "") problems.push(`${where}.tool_call_id: not a string`);
    checkContent(message.content, where, false, problems);
    return;
  }
  checkContent(message.content, where, role === "assistant", problems);
  if (role !== "assistant" || message.tool_calls === undefined) return;
  if (!Array.isArray(message.tool_calls)) return void problems.push(`${where}.tool_calls: not an array`);
  message.tool_calls.forEach((call: unknown, index: number) => {
    const at = `${where}.tool_calls[${index}]`;
    if (!isPlainRecord(call) || typeof call.id !== "string" || call.id === "") return void problems.push(`${at}.id: not a string`);
    const fn = call.function;
    if (!isPlainRecord(fn) || typeof fn.name !== "string" || typeof fn.arguments !== "string") problems.push(`${at}.function: not a name and arguments`);
  });
}

function checkRequest(request: unknown, where: string, problems: string[]): void {
  if (!isPlainRecord(request)) return void problems.push(`${where}: not an object`);
  if (typeof request.id !== "string" || request.id === "") problems.push(`${where}.id: not a string`);
  if (typeof request.name !== "string") problems.push(`${where}.name: not a string`);
  if (!isPlainRecord(request.args)) problems.push(`${where}.args: not an object`);
  if (typeof request.raw !== "string") problems.push(`${where}.raw: not a string`);
}

function checkOutcome(outcome: unknown, where: string, problems: string[]): void {
  if (!isPlainRecord(outcome)) return void problems.push(`${where}: not an object`);
  if (typeof outcome.id !== "string" || outcome.id === "") problems.push(`${where}.id: not a string`);
  if (typeof outcome.name !== "string") problems.push(`${where}.name: not a string`);
  if (!isPlainRecord(outcome.args)) problems.push(`${where}.args: not an object`);
  if (typeof outcome.ok !== "boolean") problems.push(`${where}.ok: not a boolean`);
  if (typeof outcome.content !== "string") problems.push(`${where}.content: not a string`);
  if (outcome.durationMs !== undefined && !isTotal(outcome.durationMs)) problems.push(`${where}.durationMs: not a number`);
}

function checkTurn(turn: unknown, problems: string[]): void {
  if (!isPlainRecord(turn)) return void problems.push("turn: not an object");
  if (typeof turn.content !== "string") problems.push("turn.content: not a string");
  if (typeof turn.reasoning !== "string") problems.push("turn.reasoning: not a string");
  if (typeof turn.finishReason !== "string") problems.push("turn.finishReason: not a string");
  if (!Array.isArray(turn.toolCalls)) problems.push("turn.toolCalls: not an array");
  const usage = turn.usage;
  if (!isPlainRecord(usage) || !["prompt", "completion", "total", "cached"].every((key) => isTotal(usage[key])))
    problems.push("turn.usage: not a turn's token counts");
}

function checkPrint(print: unknown, where: string, fields: Record<string, "count" | "digest">, problems: string[]): void {
  if (print === undefined) return;
  if (!isPlainRecord(print)) return void problems.push(`${where}: not an object`);
  for (const [key, kind] of Object.entries(fields)) {
    const value = print[key];
    if (kind === "count" ? !isTotal(value) : typeof value !== "string" || !DIGEST.test(value))
      problems.push(`${where}.${key}: not ${kind === "count" ? "a count" : "a digest"}`);
  }
}

function checkFields(state: Record<string, unknown>, problems: string[]): void {
  if (!isCount(state.step)) problems.push("step: not a whole number");
  const messages = Array.isArray(state.messages) ? state.messages : undefined;
  if (!messages) problems.push("messages: not an array");
  else messages.forEach((message, index) => checkMessage(message, `messages[${index}]`, problems));
  if (!Array.isArray(state.open)) problems.push("open: not an array");
  else
    state.open.forEach((entry: unknown, index: number) => {
      const where = `open[${index}]`;
      if (isPlainRecord(entry) && entry.kind === "held") checkRequest(entry.request, `${where}.request`, problems);
      else if (isPlainRecord(entry) && entry.kind === "answered") checkOutcome(entry.outcome, `${where}.outcome`, problems);
      else problems.push(`${where}: neither held nor answered`);
    });
  checkTurn(state.turn, problems);
  const question = state.question;
  if (typeof question !== "number" || !Number.isInteger(question) || question < -1 || (messages && question >= messages.length))
    problems.push("question: not an index into messages");
  else if (messages && question >= 0 && (messages[question] as { role?: unknown } | undefined)?.role !== "user")
    problems.push(`question: messages[${question}] is not a user message`);
  const hooks = state.hooks;
  if (!isPlainRecord(hooks) || typeof hooks.context !== "string" || typeof hooks.preface !== "string") problems.push("hooks: not a context and a preface");
  if (!isStrings(state.shortlist)) problems.push("shortlist: not a list of names");
  const tools = state.tools;
  if (!isPlainRecord(tools) || !isStrings(tools.loaded) || !isStrings(tools.recent)) problems.push("tools: not the loaded and recent names");
  if (!isStrings(state.used)) problems.push("used: not a list of names");
  if (!Array.isArray(state.toolCalls)) problems.push("toolCalls: not an array");
  else state.toolCalls.forEach((outcome: unknown, index: number) => checkOutcome(outcome, `toolCalls[${index}]`, problems));
  const usage = state.usage;
  if (!isPlainRecord(usage) || !["prompt", "completion", "total", "cached"].every((key) => isTotal(usage[key])))
    problems.push("usage: not the run's token counts");
  if (!Array.isArray(state.ledger)) problems.push("ledger: not an array");
  else
    state.ledger.forEach((entry: unknown, index: number) => {
      const fine = isPlainRecord(entry) && isCount(entry.through) && isTotal(entry.prompt) && entry.prompt > 0 && Number.isInteger(entry.epoch);
      if (!fine) problems.push(`ledger[${index}]: not a ledger entry`);
      else if (messages && (entry.through as number) >= messages.length) problems.push(`ledger[${index}].through: past the transcript's end`);
    });
  const budget = state.budget;
  if (!isPlainRecord(budget) || (budget.used !== undefined && !isTotal(budget.used))) problems.push("budget: not a budget");
  if (state.cache !== undefined) {
    if (!isPlainRecord(state.cache)) problems.push("cache: not an object");
    else {
      checkPrint(
        state.cache.sent,
        "cache.sent",
        { messages: "count", head: "count", system: "digest", history: "digest", tools: "digest", prompt: "count", completion: "count" },
        problems,
      );
      checkPrint(state.cache.recorded, "cache.recorded", { messages: "count", transcript: "digest", system: "digest", tools: "digest" }, problems);
    }
  }
  if (typeof state.compactionWarned !== "boolean") problems.push("compactionWarned: not a boolean");
}

/** The ids of an assistant message's calls. */
function callIds(message: unknown): string[] {
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  return Array.isArray(calls) ? calls.map((call) => (call as { id: string }).id) : [];
}

/**
 * Checks the transcript's rule: every call answered once, straight after its message; for the
 * paused step, the last message that made calls, the answers written and the open calls together
 * are exactly its calls, the open ones in call order.
 */
function checkTranscript(messages: readonly Record<string, unknown>[], open: readonly Record<string, unknown>[], problems: string[]): void {
  let last = -1;
  messages.forEach((message, index) => {
    if (message.role === "assistant" && callIds(message).length > 0) last = index;
  });
  if (last < 0) return void problems.push("the transcript has no step with calls to resume");
  let waiting: { at: number; ids: Set<string> } | undefined;
  messages.forEach((message, index) => {
    if (message.role === "tool") {
      const id = message.tool_call_id as string;
      if (!waiting) problems.push(`messages[${index}] answers ${id}, which no call just before it made`);
      else if (!waiting.ids.delete(id)) problems.push(`messages[${index}] answers ${id}, which messages[${waiting.at}] did not make or was already answered`);
      return;
    }
    if (waiting && waiting.ids.size > 0 && waiting.at !== last) problems.push(`messages[${waiting.at}] leaves ${[...waiting.ids].join(", ")} unanswered`);
    if (waiting && waiting.at === last) problems.push(`messages[${index}] comes after the paused step's calls`);
    const ids = message.role === "assistant" ? callIds(message) : [];
    if (new Set(ids).size !== ids.length) problems.push(`messages[${index}] uses a call id twice`);
    waiting = ids.length > 0 ? { at: index, ids: new Set(ids) } : undefined;
  });
  const unanswered = callIds(messages[last]).filter((id) => waiting?.at === last && waiting.ids.has(id));
  const openIds = open.map((entry) => (entry.kind === "held" ? (entry.request as { id: string }).id : (entry.outcome as { id: string }).id));
  if (openIds.join("\u0000") !== unanswered.join("\u0000")) {
    problems.push(`the paused step's unanswered calls are ${unanswered.join(", ") || "none"}, but the open calls are ${openIds.join(", ") || "none"}`);
  }
}

/** Checks a stored run state of the current version: its fields, then, where they are in shape, its transcript. @internal */
export function checkRunState(state: Record<string, unknown>): RunStateFindings {
  const shape: string[] = [];
  checkFields(state, shape);
  const transcript: string[] = [];
  if (shape.length === 0) checkTranscript(state.messages as Record<string, unknown>[], state.open as Record<string, unknown>[], transcript);
  return { shape, transcript };
}
