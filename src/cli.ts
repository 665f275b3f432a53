/**
 * @module cli
 * The `agent-core` command: `agent-core demo` runs a short agent loop with two tools, printed
 * live, against a simulated endpoint or yours; `agent-core probe URL` finds out what an endpoint
 * and a model support and writes the capability snapshot `importCapabilities` loads. Run
 * `agent-core --help` for the options and exit codes.
 */
import { readFileSync } from "node:fs";
import { runDemo } from "./cli/demo.js";
import { runCli } from "./cli/main.js";
import { probeEndpoint } from "./cli/probe.js";

function packageVersion(): string | undefined {
  try {
    const text = readFileSync(new URL("../package.json", import.meta.url), "utf8");
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

await runCli(process.argv.slice(2), { demo: runDemo, probe: probeEndpoint }, packageVersion());
