/**
 * @module cli/demo
 * `agent-core demo`: one short agent run with two real tools, printed as it happens — tokens as
 * they stream, the scratchpad dimmed, each tool call and result, every notice — and the run's
 * metrics at the end. Without a URL it runs against the embedded loopback endpoint in the
 * llama.cpp profile, whose scripted model thinks, calls each tool and answers. That endpoint
 * refuses the `min_p` field once, in the wording a strict OpenAI-style proxy in front of
 * llama.cpp uses, so the negotiation shows; and the run's reply ceiling is low enough that the
 * answer is cut off, so the continuation shows too. The scripted model reads the transcript it is
 * sent to decide its next step — think, list the folder, think, calculate, answer, carry on a
 * cut-off answer — streamed a word at a time, and it keeps to the request's token ceiling.
 */
import { createRuntime, type AgentLoopConfig, type AgentLoopResult, type RunEventInput, type Runtime } from "../index.js";
import { startEndpoint, turn, type EndpointServer, type RecordedRequest, type Scripted } from "../testing.js";
import { DEMO_TOOLS, demoDispatch } from "./demo-tools.js";
import { formatMetrics, stylesFor, type Output, type Styles } from "./output.js";
import { oneLine } from "./errors.js";
import { redactUrls } from "./redact.js";

/** The question the demo asks, of the simulated model and of a real one alike. */
export const DEMO_QUESTION = "How many files and folders are in the project folder, and what is that count times 2.5, plus 4?";

/** The system prompt the demo sends. */
export const DEMO_SYSTEM =
  "You are a careful assistant with two tools. Use list_files to look at folders and calculate for any arithmetic, then answer in one or two sentences.";

/** Whether a value of a request body is a JSON object (not null, not an array). */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

interface Seen {
  listing?: string | undefined;
  result?: string | undefined;
}

/** Reads which tools have answered so far, by matching each tool message to the call it answers. */
function readTranscript(body: unknown): Seen {
  const messages = isPlainRecord(body) && Array.isArray(body.messages) ? body.messages : [];
  const names = new Map<string, string>();
  const seen: Seen = {};
  for (const message of messages) {
    if (!isPlainRecord(message)) continue;
    if (message.role === "assistant" && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        if (isPlainRecord(call) && typeof call.id === "string" && isPlainRecord(call.function)) names.set(call.id, String(call.function.name));
      }
    }
    if (message.role === "tool" && typeof message.tool_call_id === "string") {
      const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
      const name = names.get(message.tool_call_id);
      if (name === "list_files") seen.listing = content;
      if (name === "calculate") seen.result = content;
    }
  }
  return seen;
}

function wordsIn(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The reply ceiling a request sets (`max_tokens`, or `max_completion_tokens`), or undefined. */
function ceilingOf(body: unknown): number | undefined {
  if (!isPlainRecord(body)) return undefined;
  const value = body.max_tokens ?? body.max_completion_tokens;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

/**
 * Reads the answer so far a continuation request carries: the text of a trailing assistant
 * message without tool calls, which llama-server renders as the start of the reply (a prefill;
 * its default since ggml-org/llama.cpp#13174, turned off by `--no-prefill-assistant`).
 */
function prefillOf(body: unknown): string | undefined {
  const messages = isPlainRecord(body) && Array.isArray(body.messages) ? body.messages : [];
  const last: unknown = messages[messages.length - 1];
  if (!isPlainRecord(last) || last.role !== "assistant" || Array.isArray(last.tool_calls)) return undefined;
  return typeof last.content === "string" && last.content !== "" ? last.content : undefined;
}

/**
 * Cuts an answer where a model writing it would reach `ceiling` tokens (counted as the endpoint
 * counts them, four characters a token, the scratchpad included), at the last word boundary, so
 * the rest begins with its space as a tokenizer's next token would. Undefined when it all fits.
 */
function cutAt(ceiling: number | undefined, reasoning: string, content: string): string | undefined {
  if (ceiling === undefined) return undefined;
  const room = ceiling * 4 - reasoning.length;
  if (room <= 0 || content.length <= room) return undefined;
  const space = content.lastIndexOf(" ", room);
  return content.slice(0, space > 0 ? space : room);
}

/**
 * Builds the demo's scripted model: a `respond` function that answers each chat request with the
 * next step of the run, chunks spaced `delayMs` apart.
 *
 * Like llama.cpp it keeps to the request's reply ceiling: an answer that would pass it stops
 * there with finish reason "length" and the ceiling as its completion count, and a request ending
 * in an assistant message is read as a prefill and answered with the rest of the answer.
 *
 * @param delayMs - The pause before each streamed chunk, so the run reads as live. @default 12
 */
export function demoModel(delayMs = 12): (request: RecordedRequest) => Scripted {
  return (request) => {
    const seen = readTranscript(request.body);
    const ceiling = ceilingOf(request.body);
    const stream = (spec: Parameters<typeof turn>[0] & object): Scripted => {
      const pieces = Math.max(3, wordsIn(`${spec.reasoning ?? ""} ${spec.content ?? ""}`));
      return { ...turn({ ...spec, pieces }), delayMs };
    };
    const answer = (reasoning: string, content: string): Scripted => {
      const cut = cutAt(ceiling, reasoning, content);
      if (cut === undefined) return stream({ ...(reasoning ? { reasoning } : {}), content });
      return stream({ ...(reasoning ? { reasoning } : {}), content: cut, finishReason: "length", usage: { completion_tokens: ceiling } });
    };
    if (seen.listing === undefined) {
      return stream({
        reasoning:
          "The user wants to know how many entries the project folder holds, and then a little arithmetic on that count. I should look rather than guess: list the folder first.",
        toolCalls: [{ id: "call_list", name: "list_files", arguments: { path: "." } }],
      });
    }
    const entries = seen.listing.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("…"));
    const count = entries.length;
    if (seen.result === undefined) {
      return stream({
        reasoning: `The listing shows ${count} entries. Now (${count} × 2.5) + 4 — the calculator will get that exactly right.`,
        toolCalls: [{ id: "call_calc", name: "calculate", arguments: { expression: `(${count} * 2.5) + 4` } }],
      });
    }
    const folders = entries.filter((line) => line.endsWith("/")).length;
    const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
    const full =
      `The project folder holds ${counted(count, "entry", "entries")} (${counted(folders, "folder", "folders")} and ${counted(count - folders, "file", "files")}), and ${count} × 2.5 + 4 = ${seen.result}. ` +
      "I listed the folder with list_files rather than guessing, and left the arithmetic to calculate, so both figures come straight from the tools.";
    const soFar = prefillOf(request.body);
    // A prefill of this answer is carried on from its last character; any other prefill gets the
    // answer from the start, as a model that does not take prefills would give it.
    if (soFar !== undefined) return answer("", full.startsWith(soFar) ? full.slice(soFar.length) : full);
    return answer(
      `Both results are in: ${counted(count, "entry", "entries")}, ${folders} of them ${folders === 1 ? "a folder" : "folders"}, and the calculator says ${seen.result}. Two sentences will do.`,
      full,
    );
  };
}

/** The reply ceiling of a run against the simulated endpoint: room for each tool call, not for the whole answer. */
const SIMULATED_CEILING = 64;

/** The model name the simulated endpoint serves. */
export const DEMO_MODEL = "demo-model";

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** A real endpoint to run against; absent starts the simulated one. */
  baseUrl?: string | undefined;
  /** The model on the real endpoint; required with `baseUrl`. */
  model?: string | undefined;
  /** The key for the real endpoint. */
  apiKey?: string | undefined;
  /** Headers sent with every request to the real endpoint; never printed. */
  headers?: Record<string, string> | undefined;
  /** The folder list_files may read. @default process.cwd() */
  folder?: string | undefined;
  /** Where the run is printed. */
  stdout: Output;
  /** Whether to style the output with ANSI codes. */
  color: boolean;
  /** Stops the run. */
  signal?: AbortSignal | undefined;
  /** The runtime to run in; absent uses a fresh one from createRuntime, reset at the end. */
  runtime?: Runtime | undefined;
  /** The simulated model's pause before each chunk, in milliseconds. @default 12 */
  delayMs?: number | undefined;
}

/**
 * Prints run events as they arrive, keeping output, thinking and tool lines apart. Output that
 * resumes after a notice in the same turn is a continuation of a cut-off answer, and is labelled
 * as one.
 */
function createPrinter(out: Output, styles: Styles): (event: RunEventInput) => void {
  let mode: "line" | "output" | "thinking" = "line";
  let pieces = 0;
  const endLine = (): void => {
    if (mode !== "line") out.write("\n");
    mode = "line";
  };
  return (event) => {
    switch (event.kind) {
      case "thinking":
        if (mode !== "thinking") {
          endLine();
          out.write(styles.dim("thinking: "));
          mode = "thinking";
        }
        out.write(styles.dim(event.text));
        return;
      case "output":
        if (mode !== "output") {
          endLine();
          // A continuation's text usually opens with the space its first token carries.
          out.write(pieces === 0 ? styles.bold("answer: ") : `${styles.bold("answer, continued:")}${/^\s/.test(event.text) ? "" : " "}`);
          pieces += 1;
          mode = "output";
        }
        out.write(event.text);
        return;
      case "tool-call":
        endLine();
        out.write(`${styles.yellow("→ tool call")} ${event.name}(${oneLine(event.args, 160)})\n`);
        return;
      case "tool-result": {
        endLine();
        const lines = event.content.split("\n");
        const shown = oneLine(lines.slice(0, 6).join(", "), 160) + (lines.length > 6 ? `, … (${lines.length} lines)` : "");
        const label = event.ok ? styles.green("← result") : styles.red("← failed");
        out.write(`${label} ${event.name}: ${shown}${event.durationMs !== undefined ? styles.dim(` (${Math.round(event.durationMs)} ms)`) : ""}\n`);
        return;
      }
      case "notice":
        endLine();
        out.write(`${styles.yellow("! notice")} ${event.text}\n`);
        return;
      case "error":
        endLine();
        out.write(`${styles.red("✗ error")} ${event.message}\n`);
        return;
      case "usage": {
        endLine();
        const turn = event.turn;
        const continued = pieces > 1 ? `, over ${pieces} requests` : "";
        pieces = 0;
        out.write(
          styles.dim(
            `  turn: ${turn.prompt} prompt tokens (${turn.cached} cached), ${turn.completion} completion, finish ${turn.finishReason || "unsaid"}${continued}\n`,
          ),
        );
        return;
      }
      case "done":
        endLine();
        return;
      case "invalid-arguments":
      case "approval-requested":
      case "approval-decided":
      case "resumed":
        // The demo's tools take any arguments and need no approval.
        return;
      default:
        event satisfies never;
    }
  };
}

/**
 * Runs the demo and prints it; resolves with the run's result, rejects with what stopped it.
 *
 * Everything the demo starts (the simulated endpoint, a fresh runtime's connection pool) is closed
 * before it settles, however it ends.
 */
export async function runDemo(options: DemoOptions): Promise<AgentLoopResult> {
  const out = options.stdout;
  const styles = stylesFor(options.color);
  const runtime = options.runtime ?? createRuntime();
  let server: EndpointServer | undefined;
  try {
    let baseUrl = options.baseUrl;
    let model = options.model ?? DEMO_MODEL;
    if (baseUrl === undefined) {
      server = await startEndpoint({
        profile: "llama.cpp",
        models: [{ id: DEMO_MODEL }],
        respond: demoModel(options.delayMs),
        refuse: { fields: ["min_p"] },
        prefixCache: true,
      });
      baseUrl = server.baseUrl;
      model = DEMO_MODEL;
      out.write(
        `${styles.dim(`A simulated llama.cpp server is answering at ${redactUrls(baseUrl)} with a scripted model; pass --base-url and --model to use yours.`)}\n`,
      );
      out.write(`${styles.dim("It refuses min_p in OpenAI's wording, as a strict proxy in front of llama.cpp would; llama.cpp itself samples with min_p.")}\n`);
      out.write(`${styles.dim(`Replies are capped at ${SIMULATED_CEILING} tokens, so the answer is cut off and then continued.`)}\n`);
    } else {
      out.write(`${styles.dim(`Running against ${redactUrls(baseUrl)}, model ${model}.`)}\n`);
    }
    out.write(`${styles.bold("question:")} ${DEMO_QUESTION}\n`);
    const config: AgentLoopConfig = {
      baseUrl,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(options.headers && !server ? { headers: options.headers } : {}),
      model,
      maxToolIterations: 6,
      maxTokens: server ? SIMULATED_CEILING : 1024,
      temperature: 0.2,
      extraBody: { min_p: 0.05 },
    };
    const dispatch = demoDispatch(options.folder ?? process.cwd());
    const result = await runtime.runAgentLoop({
      config,
      system: DEMO_SYSTEM,
      messages: [{ role: "user", content: DEMO_QUESTION }],
      tools: DEMO_TOOLS,
      maxContinuations: 1,
      dispatch: (request) => dispatch(request),
      onEvent: createPrinter(out, styles),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if ((result.turn.continuations ?? 0) > 0) out.write(`${styles.bold("answer, joined:")} ${result.turn.content}\n`);
    out.write(`\n${styles.bold("run metrics")}\n${formatMetrics(result.metrics)}\n`);
    return result;
  } finally {
    await server?.close();
    if (!options.runtime) runtime.reset();
  }
}
