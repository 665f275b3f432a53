/**
 * @module bench/loop-profile
 * One case of loop.bench.ts run alone under the V8 profiler: runAgentLoop at S = 40 with 40 tools
 * declared eagerly (`eager`, the default), loaded on demand (`ondemand`) or the one tool
 * (`plain`); 30 runs profiled after 5 unprofiled warm-up runs, so start-up and compilation are
 * left out. Writes `loop-<case>.cpuprofile` into the folder given (default: the working folder).
 *
 * `npx tsx bench/loop-profile.ts [eager|ondemand|plain] [folder]`
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { libraryCase, manyTools, startLoopServer } from "./loop.bench.js";

const which = process.argv[2] ?? "eager";
const folder = process.argv[3] ?? ".";
const server = await startLoopServer();
const session = new Session();
session.connect();
try {
  const tools = manyTools(40);
  const run =
    which === "plain"
      ? libraryCase(server.baseUrl, tools.slice(0, 1), "eager")
      : libraryCase(server.baseUrl, tools, which === "ondemand" ? "ondemand" : "eager");
  for (let index = 0; index < 5; index++) await run(40);
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  const before = process.cpuUsage();
  for (let index = 0; index < 30; index++) await run(40);
  const spent = process.cpuUsage(before);
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(join(folder, `loop-${which}.cpuprofile`), JSON.stringify(profile));
  console.log(`${which}: ${((spent.user + spent.system) / 1000 / 30).toFixed(1)} ms of CPU a run, profile in ${join(folder, `loop-${which}.cpuprofile`)}`);
} finally {
  session.disconnect();
  await server.stop();
}
