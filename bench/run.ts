/**
 * @module bench/run
 * Runs every benchmark in this folder: each `*.bench.ts`, in name order, through its exported
 * `run()`. Pass names (or parts of names) as arguments to run only those.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((name) => name.endsWith(".bench.ts"))
  .filter((name) => wanted.length === 0 || wanted.some((part) => name.includes(part)))
  .sort();

let failed = 0;
for (const file of files) {
  const module = (await import(pathToFileURL(join(here, file)).href)) as { run?: () => unknown };
  if (typeof module.run !== "function") {
    console.error(`${file}: exports no run()`);
    failed++;
    continue;
  }
  console.log(`\n## ${file}`);
  try {
    await module.run();
  } catch (error) {
    console.error(`${file} failed:`, error);
    failed++;
  }
}
if (failed > 0) process.exitCode = 1;
