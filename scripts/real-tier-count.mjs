// Prints how many tests of the real-server tier (test/real/) ran in a vitest JSON report, and
// fails when the tier was enabled but none ran. Usage: node scripts/real-tier-count.mjs REPORT
import { readFileSync } from "node:fs";

const report = JSON.parse(readFileSync(process.argv[2], "utf8"));
let ran = 0;
let skipped = 0;
const files = new Set();
for (const file of report.testResults ?? []) {
  if (!/[\\/]test[\\/]real[\\/]/.test(file.name)) continue;
  for (const test of file.assertionResults ?? []) {
    if (test.status === "passed" || test.status === "failed") {
      ran += 1;
      files.add(file.name);
    } else skipped += 1;
  }
}
const enabled = Boolean(process.env.AGENT_CORE_LLAMA_SERVER && process.env.AGENT_CORE_LLAMA_MODELS);
console.log(
  `ci: ${ran} real-server tests ran in ${files.size} files (${skipped} skipped)${enabled ? "" : "; the tier is off: AGENT_CORE_LLAMA_SERVER is unset"}`,
);
if (enabled && ran === 0) {
  console.error("ci: the real-server tier was enabled but no test of it ran");
  process.exit(1);
}
