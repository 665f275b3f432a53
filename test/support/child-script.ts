/**
 * Runs a TypeScript script of test/support in a second Node process: the input written to its
 * stdin as JSON, its stdout read back as JSON, and a failure that says what the child said.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";

/** Runs `test/support/<name>` under tsx with `flags` (such as `--expose-gc`) and returns what it printed, parsed. */
export function runChildScript<T>(name: string, input: unknown, flags: readonly string[] = []): Promise<T> {
  const script = resolve(import.meta.dirname, name);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...flags, "--import", "tsx", script], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => {
      if (code !== 0) return fail(new Error(`the child exited ${code}: ${err}`));
      try {
        done(JSON.parse(out) as T);
      } catch (error) {
        fail(new Error(`the child wrote ${out.slice(0, 200)} (${String(error)}); stderr: ${err}`));
      }
    });
    child.stdin.end(JSON.stringify(input));
  });
}
