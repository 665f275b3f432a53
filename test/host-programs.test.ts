/**
 * The examples and the host programs in test/fixtures/host-programs/ compile under the strictest
 * common settings a host uses (`strict` with `exactOptionalPropertyTypes`), where an option typed
 * `?: T` refuses the `T | undefined` a process.env value is.
 */
import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
const project = resolve(root, "test/fixtures/host-programs/tsconfig.json");

describe("host programs under exactOptionalPropertyTypes", () => {
  it("type-check with 0 errors: the examples and a host passing process.env values straight into the config", () => {
    const read = ts.readConfigFile(project, (path) => ts.sys.readFile(path));
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, resolve(root, "test/fixtures/host-programs"));
    expect(parsed.options.exactOptionalPropertyTypes).toBe(true);
    expect(parsed.options.strict).toBe(true);
    const hosts = parsed.fileNames.filter((file) => file.includes("/examples/") || file.includes("/host-programs/"));
    expect(hosts.some((file) => file.endsWith("examples/quick-start.ts"))).toBe(true);
    expect(hosts.some((file) => file.endsWith("host-programs/env-config.ts"))).toBe(true);
    const program = ts.createProgram({ rootNames: hosts, options: parsed.options });
    // What a host sees: its own files checked against the package's types (the library's own
    // bodies are not compiled by a host, which reads the declarations).
    const errors = hosts.flatMap((file) => {
      const source = program.getSourceFile(file);
      return source ? [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)] : [];
    });
    const said = errors.map((error) => `${error.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(error.messageText, "\n")}`);
    expect(said).toEqual([]);
  }, 120_000);
});
