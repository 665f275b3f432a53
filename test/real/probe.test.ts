/**
 * `agent-core probe` against a real llama-server, under each way it can be serving reasoning: its
 * table and the snapshot it writes come from the same records and agree row by row; a
 * reasoning_effort the server takes and does nothing with is reported as ignored, never as
 * working; a sampler failure is a json_schema refusal, not a strict-schema one.
 */
import { afterEach, expect, it } from "vitest";
import { probeEndpoint } from "../../src/cli/probe.js";
import type { ProbeReport } from "../../src/cli/probe-types.js";
import { describeReal, startLlamaServer, type LlamaServer, type LlamaServerOptions } from "../support/llama-server.js";
import { disagreements } from "../support/probe-agreement.js";

const running: LlamaServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
});

async function probe(options: LlamaServerOptions): Promise<ProbeReport> {
  const server = await startLlamaServer({ contextSize: 2048, ...options });
  running.push(server);
  return probeEndpoint({ baseUrl: server.baseUrl, timeoutSeconds: 120 });
}

function statuses(report: ProbeReport): Record<string, string> {
  return Object.fromEntries(report.findings.map((finding) => [finding.capability, finding.status]));
}

/** A reasoning effort row may say the lowest rung works only where no reasoning came back under it. */
function effortIsHonest(report: ProbeReport): void {
  const row = report.findings.find((finding) => finding.capability === "reasoningEffort")!;
  if (row.status === "supported") expect(row.detail).toMatch(/lowest rung taken: none; no reasoning came/);
  else
    expect(row).toMatchObject({
      status: "ignored",
      detail: expect.stringMatching(/^reasoning_effort none was taken, yet \d+ characters of reasoning still came/),
    });
}

describeReal("agent-core probe against a real llama-server", () => {
  it("agrees with its snapshot for tiny.gguf, a grammar server with no reasoning", async () => {
    const report = await probe({ model: "tiny" });
    expect(disagreements(report)).toEqual([]);
    expect(statuses(report)).toMatchObject({
      window: "supported",
      usageInStream: "supported",
      maxTokens: "supported",
      temperature: "supported",
      grammar: "supported",
      strictSchemas: "ignored",
      jsonSchema: "supported",
      prefill: "supported",
    });
    expect(report.window).toEqual({ tokens: 2048, source: "the model listing (meta.n_ctx, the window each slot serves)" });
    effortIsHonest(report);
    expect(report.snapshot.endpoints).toEqual([expect.objectContaining({ grammarConstrained: true, strictSchemas: false })]);
  }, 180_000);

  it("agrees with its snapshot for tiny-think.gguf under --reasoning-format deepseek, calling an ignored effort ignored", async () => {
    const report = await probe({ model: "tiny-think", args: ["--reasoning-format", "deepseek"] });
    expect(disagreements(report)).toEqual([]);
    expect(statuses(report)).toMatchObject({ grammar: "supported", strictSchemas: "ignored", jsonSchema: "supported" });
    effortIsHonest(report);
  }, 180_000);

  it("agrees with its snapshot for tiny-think.gguf under --reasoning-format none, where json_schema cannot be held", async () => {
    const report = await probe({ model: "tiny-think", args: ["--reasoning-format", "none"] });
    expect(disagreements(report)).toEqual([]);
    expect(statuses(report)).toMatchObject({ grammar: "supported", strictSchemas: "ignored", jsonSchema: "refused" });
    expect(report.findings.find((finding) => finding.capability === "jsonSchema")?.words).toBe("Failed to initialize samplers: std::exception");
    expect(report.snapshot.endpoints[0]?.models?.[report.model]).toMatchObject({ structuredOutput: false });
    effortIsHonest(report);
  }, 180_000);
});
