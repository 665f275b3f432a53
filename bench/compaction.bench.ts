/**
 * @module bench/compaction
 * planCompaction and tokensBetween as a transcript grows from 1,000 to 10,000 messages, with the
 * time per message at each size and its ratio to the 1,000-message figure (1.0 is linear).
 *
 * The transcript is questions, each followed by tool steps (an assistant call and its result)
 * and an answer; the ledger has an entry after every question and every tool result, one epoch,
 * as runAgentLoop would keep it. A baseline row times requestTokens over the same messages: the
 * plainest pass over a transcript there is.
 */
import { planCompaction } from "../src/run/compaction.js";
import type { Message } from "../src/shapes/config.js";
import { estimateFrom, tokensBetween, type LedgerEntry } from "../src/run/ledger.js";
import { messageTokens, requestTokens } from "../src/text/tokens.js";

const SIZES = [1_000, 2_000, 5_000, 10_000];
const ROUNDS = 21;

function transcript(size: number): Message[] {
  const messages: Message[] = [{ role: "system", content: "You are a careful agent. ".repeat(20) }];
  let step = 0;
  while (messages.length < size) {
    messages.push({ role: "user", content: `Question ${step}: what does file ${step} say about the ledger?` });
    for (let tool = 0; tool < 3 && messages.length < size; tool += 1) {
      const id = `call_${step}_${tool}`;
      messages.push({
        role: "assistant",
        content: "",
        tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: `{"path":"src/f${step}.ts"}` } }],
      });
      messages.push({ role: "tool", tool_call_id: id, content: `export const value${step} = ${step};\n`.repeat(20 + (step % 30)) });
    }
    messages.push({ role: "assistant", content: `File ${step} defines value${step}.` });
    step += 1;
  }
  return messages.slice(0, size);
}

function ledgerOf(messages: readonly Message[]): LedgerEntry[] {
  const ledger: LedgerEntry[] = [];
  let prompt = 800;
  messages.forEach((message, index) => {
    prompt += messageTokens(message, { charsPerToken: 3.3 }) + 4;
    const next = messages[index + 1];
    const boundary = message.role === "user" || (message.role === "tool" && next?.role !== "tool");
    if (boundary) ledger.push({ through: index, prompt, epoch: 0 });
  });
  return ledger;
}

/** The fewest milliseconds one call took; each sample repeats the call until it has run for at least 10 ms. */
function time(work: () => unknown): number {
  let repeat = 1;
  for (;;) {
    const start = performance.now();
    for (let index = 0; index < repeat; index += 1) work();
    if (performance.now() - start >= 10) break;
    repeat *= 2;
  }
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const start = performance.now();
    for (let index = 0; index < repeat; index += 1) work();
    samples.push((performance.now() - start) / repeat);
  }
  // The fastest sample: on a shared machine the others measure the neighbours, not the code.
  return Math.min(...samples);
}

interface Row {
  name: string;
  /** Nanoseconds per message at each size. */
  perMessage: number[];
  /** Milliseconds for the whole 10,000-message transcript. */
  whole?: number;
}

/** Runs the benchmark, prints its table and returns it as markdown for RESULTS.md. */
export async function run(): Promise<string> {
  const rows: Row[] = [
    { name: "requestTokens (baseline)", perMessage: [] },
    { name: "planCompaction", perMessage: [] },
    { name: "planCompaction + estimateFrom", perMessage: [] },
    { name: "tokensBetween (whole transcript)", perMessage: [] },
  ];
  let sink = 0;
  // One untimed pass over every size first, so the 1,000-message figures are not the JIT's warm-up.
  for (const size of SIZES) {
    const messages = transcript(size);
    const ledger = ledgerOf(messages);
    const limit = Math.ceil(requestTokens({ messages }) / 0.8);
    for (let warm = 0; warm < 3; warm += 1) {
      sink += requestTokens({ messages }) + (planCompaction(messages, { limit, estimate: estimateFrom(ledger, messages) })?.through ?? 0);
      sink += (planCompaction(messages, { limit })?.through ?? 0) + tokensBetween(ledger, 0, messages.length, messages);
    }
  }
  for (const size of SIZES) {
    const messages = transcript(size);
    const ledger = ledgerOf(messages);
    const all = requestTokens({ messages });
    const limit = Math.ceil(all / 0.8);
    const timings = [
      time(() => (sink += requestTokens({ messages }))),
      time(() => (sink += planCompaction(messages, { limit })?.through ?? 0)),
      time(() => (sink += planCompaction(messages, { limit, estimate: estimateFrom(ledger, messages) })?.through ?? 0)),
      time(() => (sink += tokensBetween(ledger, 0, messages.length, messages))),
    ];
    timings.forEach((ms, index) => {
      rows[index]!.perMessage.push((ms * 1e6) / size);
      if (size === SIZES.at(-1)) rows[index]!.whole = ms;
    });
  }
  const header = `| per message | ${SIZES.map((size) => `${size.toLocaleString("en-US")} msgs`).join(" | ")} | 10k ÷ 1k | whole 10k |`;
  const rule = `|---|${SIZES.map(() => "---:").join("|")}|---:|---:|`;
  const lines = rows.map((row) => {
    const cells = row.perMessage.map((nano) => `${nano.toFixed(0)} ns`);
    const ratio = row.perMessage.at(-1)! / row.perMessage[0]!;
    return `| ${row.name} | ${cells.join(" | ")} | ${ratio.toFixed(2)} | ${row.whole!.toFixed(2)} ms |`;
  });
  const table = [header, rule, ...lines].join("\n");
  console.log("Time per message (fastest of 21 samples of at least 10 ms each); a ratio near or under 1.0 is linear or better.\n");
  console.log(table);
  if (sink === Number.MIN_VALUE) console.log(sink);
  return table;
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
