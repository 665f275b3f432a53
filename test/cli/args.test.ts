import { describe, expect, it } from "vitest";
import { HELP, parseCommandLine } from "../../src/cli/args.js";
import { CliFailure, keyRefused, KEY_ADVICE, readFailure } from "../../src/cli/errors.js";

/** The usage failure a command line is refused with. */
function refusal(argv: string[]): CliFailure {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (CliFailure.is(error)) return error;
    throw error;
  }
  throw new Error(`${argv.join(" ")} was read`);
}

describe("parseCommandLine", () => {
  it.each([
    [["probe", "http://x/v1", "--api-key", "sk-1"], "--api-key"],
    [["probe", "http://x/v1", "--api-key=sk-1"], "--api-key"],
    [["demo", "--base-url", "http://x/v1", "--model", "m", "--api-key", "sk-1"], "--api-key"],
  ])("refuses %j with advice to name a variable with --api-key-env, and never echoes the key", (argv, option) => {
    const failure = refusal(argv);
    expect(failure.kind).toBe("usage");
    expect(failure.message).toMatch(new RegExp(`^${option} is not an option: the command takes no key on the command line.*--api-key-env VAR`));
    expect(failure.message).not.toContain("sk-1");
    expect(failure.message).not.toContain("positional");
  });

  it("names an unknown option without node's positional-argument advice and its unclosed quote", () => {
    const failure = refusal(["probe", "http://x/v1", "--frob"]);
    expect(failure.message).toBe('"--frob" is not an option (see "agent-core probe --help").');
  });

  it("lists every option of probe on its usage line, --timeout included", () => {
    const usageLine = HELP.probe.split("\n")[0]!;
    const options = [...HELP.probe.matchAll(/^ {2}(--[a-z-]+)/gm)].map((match) => match[1]!).filter((option) => option !== "--verbose");
    expect(options).toContain("--timeout");
    for (const option of options) expect(usageLine, option).toContain(option);
  });
});

describe("keyRefused", () => {
  const unauthorized = () => readFailure(Object.assign(new Error("401 Incorrect API key provided"), { status: 401 }), "http://127.0.0.1:1/v1");

  it("advises passing a key where none was sent", () => {
    expect(keyRefused(unauthorized(), undefined).message).toContain(KEY_ADVICE);
  });

  it("says the key was refused where one was sent, naming its variable", () => {
    const message = keyRefused(unauthorized(), "OPENAI_API_KEY").message;
    expect(message).toMatch(/refused the key \(HTTP 401\): .*The key in OPENAI_API_KEY was sent and refused/);
    expect(message).not.toContain(KEY_ADVICE);
  });
});
