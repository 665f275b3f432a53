/**
 * @module cli/output
 * How the `agent-core` command writes: where colour is allowed, aligned tables, the run metrics
 * table and the probe's report.
 */
import type { RunMetrics } from "../index.js";
import type { ProbeReport } from "./probe.js";

/** Where the command writes: a stream's `write`, and whether it is a terminal. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean | undefined;
}

/**
 * Decides whether ANSI styling may be written to a stream: FORCE_COLOR decides where it is set
 * ("0" and "false" turn it off), otherwise only a terminal gets colour, and NO_COLOR turns it off.
 */
export function colorAllowed(stream: Output, env: Record<string, string | undefined>): boolean {
  const forced = env.FORCE_COLOR;
  if (forced !== undefined) return forced !== "0" && forced.toLowerCase() !== "false";
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return stream.isTTY === true;
}

/** ANSI styles that collapse to plain text where colour is off. */
export interface Styles {
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
}

/** Makes the styles for a stream: ANSI codes where colour is allowed, the text unchanged otherwise. */
export function stylesFor(color: boolean): Styles {
  const wrap = (open: number, close: number) => (text: string) => (color && text !== "" ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return { dim: wrap(2, 22), bold: wrap(1, 22), red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39) };
}

/** Lays rows out as columns, each as wide as its widest cell (measured without ANSI codes). */
export function formatTable(rows: readonly (readonly string[])[], indent = "  "): string {
  const visible = (text: string): number => text.replace(/\u001b\[\d+m/g, "").length;
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, visible(cell))));
  return rows
    .map((row) => indent + row.map((cell, index) => (index === row.length - 1 ? cell : cell + " ".repeat((widths[index] ?? 0) - visible(cell)))).join("  "))
    .join("\n");
}

function count(value: number): string {
  return value.toLocaleString("en-US");
}

function ms(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

/** Formats a run's metrics as a two-column table of what was measured; absent figures are left out. */
export function formatMetrics(metrics: RunMetrics): string {
  const rows: string[][] = [
    ["turns", String(metrics.turns)],
    ["tokens", `${count(metrics.promptTokens)} prompt + ${count(metrics.completionTokens)} completion = ${count(metrics.totalTokens)}`],
    [
      "cached prompt tokens",
      count(metrics.cachedTokens) + (metrics.cacheHitRatio !== undefined ? ` (${Math.round(metrics.cacheHitRatio * 100)}% of the prompt)` : ""),
    ],
    ["cache breaks", String(metrics.cacheBreaks)],
    ["tool calls", `${metrics.toolCalls}${metrics.toolErrors > 0 ? ` (${metrics.toolErrors} failed)` : ""}`],
    ["notices", String(metrics.notices)],
  ];
  if (metrics.reasoningTokens !== undefined) rows.push(["reasoning tokens", count(metrics.reasoningTokens)]);
  if (metrics.prefillMs !== undefined)
    rows.push([
      "prefill",
      ms(metrics.prefillMs) + (metrics.prefillTokensPerSecond !== undefined ? ` (${Math.round(metrics.prefillTokensPerSecond)} tokens/s)` : ""),
    ]);
  if (metrics.decodeMs !== undefined)
    rows.push([
      "decode",
      ms(metrics.decodeMs) + (metrics.decodeTokensPerSecond !== undefined ? ` (${Math.round(metrics.decodeTokensPerSecond)} tokens/s)` : ""),
    ]);
  if (metrics.meanFirstTokenMs !== undefined) rows.push(["first token (mean)", ms(metrics.meanFirstTokenMs)]);
  if (metrics.toolMs !== undefined) rows.push(["tool time", ms(metrics.toolMs)]);
  if (metrics.largestPrompt !== undefined)
    rows.push([
      "largest prompt",
      `${count(metrics.largestPrompt)} tokens${metrics.largestPromptShare !== undefined ? ` (${Math.round(metrics.largestPromptShare * 100)}% of the window)` : ""}`,
    ]);
  if (metrics.durationMs !== undefined) rows.push(["duration", ms(metrics.durationMs)]);
  rows.push(["outcome", metrics.outcome]);
  return formatTable(rows);
}

/** Formats the probe's report: the table, the server's words under each refusal, and what it spent. */
export function formatProbeReport(report: ProbeReport, styles: Styles): string {
  const mark = (status: string): string => (status === "supported" ? styles.green(status) : status === "refused" ? styles.red(status) : styles.yellow(status));
  const rows: string[][] = [];
  const lines: string[] = [`${styles.bold(report.model)} at ${report.baseUrl}${report.listed ? "" : " (not in the endpoint's listing)"}`, ""];
  for (const finding of report.findings) rows.push([finding.label, mark(finding.status), finding.detail]);
  const table = formatTable(rows).split("\n");
  report.findings.forEach((finding, index) => {
    lines.push(table[index] ?? "");
    if (finding.words) lines.push(styles.dim(`      the server said: ${finding.words}`));
  });
  const methods = new Map<string, number>();
  for (const request of report.requests) methods.set(request.method, (methods.get(request.method) ?? 0) + 1);
  const split = [...methods].map(([method, n]) => `${n} ${method}`).join(", ");
  const { prompt, completion, unreported } = report.tokens;
  lines.push(
    "",
    `Spent ${report.requests.length} requests (${split || "none"}) and ${count(prompt)} prompt + ${count(completion)} completion tokens as reported${unreported > 0 ? `; ${unreported} answers carried no usage` : ""}.`,
  );
  return lines.join("\n");
}
