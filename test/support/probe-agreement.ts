/**
 * Reads a probe report's table against the snapshot it wrote: every row that stands for a latch
 * must say what the snapshot says (a row "refused" exactly where the snapshot has the latch off,
 * strict schemas "ignored" exactly where it marks the server grammar-constrained). Used by the
 * simulator's probe tests and the real-server tier alike.
 */
import type { ProbeReport } from "../../src/cli/probe-types.js";

/** Lists each row that says something the snapshot does not; empty where the two agree. */
export function disagreements(report: ProbeReport): string[] {
  const trim = (url: string) => url.replace(/\/+$/, "").toLowerCase();
  const entry = report.snapshot.endpoints.find((candidate) => trim(candidate.baseUrl) === trim(report.baseUrl));
  const model = entry?.models?.[report.model] ?? {};
  const status = (capability: string) => report.findings.find((finding) => finding.capability === capability)?.status;
  const out: string[] = [];
  const check = (capability: string, rowSays: boolean, snapshotSays: boolean, what: string) => {
    if (rowSays !== snapshotSays)
      out.push(`${capability}: the table says ${status(capability) ?? "nothing"}, the snapshot ${snapshotSays ? "has" : "does not have"} ${what}`);
  };
  const grammar = entry?.grammarConstrained === true;
  check("usageInStream", status("usageInStream") === "refused", entry?.usageInStream === false, "usageInStream: false");
  check("grammar", status("grammar") === "supported", grammar, "grammarConstrained: true");
  check("strictSchemas", status("strictSchemas") === "ignored", grammar, "grammarConstrained: true");
  check("strictSchemas", status("strictSchemas") === "refused", entry?.strictSchemas === false && !grammar, "strictSchemas: false without grammarConstrained");
  if (status("strictSchemas") === "supported" && entry?.strictSchemas === false)
    out.push("strictSchemas: the table says supported, the snapshot has strictSchemas: false");
  check("maxTokens", status("maxTokens") === "refused", model.legacyTokenLimit === false, "legacyTokenLimit: false");
  check("temperature", status("temperature") === "refused", model.chosenTemperature === false, "chosenTemperature: false");
  check("reasoningEffort", status("reasoningEffort") === "refused", model.reasoningEffort === false, "reasoningEffort: false");
  const rungs = model.refusedEfforts ?? [];
  const detail = report.findings.find((finding) => finding.capability === "reasoningEffort")?.detail ?? "";
  if (rungs.some((rung) => !detail.includes(rung))) out.push(`reasoningEffort: the snapshot has refused ${rungs.join(", ")}, the table says "${detail}"`);
  check("jsonSchema", status("jsonSchema") === "refused", model.structuredOutput === false, "structuredOutput: false");
  check("prefill", status("prefill") === "refused", model.assistantPrefill === false, "assistantPrefill: false");
  return out;
}
