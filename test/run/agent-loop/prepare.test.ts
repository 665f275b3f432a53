import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/shapes/config.js";
import { configureHooksIn, withContextIn } from "../../../src/run/hooks.js";
import { withLoop, question, tool, calls, answer } from "./harness.js";

describe("hooks", () => {
  const runner = (context: string) => async (event: string) =>
    event === "afterTurn" ? [{ hook: "memory", ok: true, note: "remembered" }] : [{ hook: "memory", ok: true, context }];

  it("are gathered once onto the question and never written into the transcript that comes back", async () => {
    await withLoop({}, async ({ server, run }) => {
      let gathered = 0;
      server.script(calls(["read", {}]), answer());
      const result = await run({
        tools: [tool("read")],
        hooks: {
          run: async (event, _payload) => {
            if (event !== "afterTurn") gathered += 1;
            return runner("The notes folder is ~/notes.")(event);
          },
          context: { session: { id: "s1" } },
          preface: "Background:",
        },
      });
      expect(gathered).toBe(1);
      for (const body of server.chatBodies()) {
        const sent = (body.messages as Message[]).find((message) => message.role === "user")!;
        expect(sent.content).toBe(`Background:\n\n<context source="memory">\nThe notes folder is ~/notes.\n</context>\n\n${question[0]!.content}`);
      }
      expect(result.messages[0]).toEqual(question[0]);
      expect(result.context).toContain("~/notes");
      expect(result.preface).toBe("Background:");
      expect(await result.afterTurn).toEqual(['Hook "memory": remembered']);
    });
  });
});

describe("the hook context a run hands back", () => {
  it("rebuilds the question exactly as it was sent, with the configured preface, whatever the configuration says since", async () => {
    await withLoop({}, async ({ server, run, state }) => {
      configureHooksIn(state, { preface: "Added by the test host:" });
      server.script(answer());
      const result = await run({ hooks: { run: async () => [{ hook: "notes", ok: true, context: "The folder is ~/notes." }] } });
      expect(result.preface).toBe("Added by the test host:");
      const sent = (server.chatBodies()[0]!.messages as Message[]).find((message) => message.role === "user")!;
      configureHooksIn(state, { preface: "Something else entirely:" });
      const rebuilt = withContextIn(state, result.messages, 0, result.context, result.preface);
      expect(rebuilt[0]).toEqual(sent);
    });
  });

  it("does not wait on the afterTurn hooks to return", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(answer("Answered."));
      let told = 0;
      const result = await run({
        hooks: {
          run: (event) => {
            if (event !== "afterTurn") return Promise.resolve([]);
            told += 1;
            return new Promise(() => undefined);
          },
        },
      });
      expect(result.turn.content).toBe("Answered.");
      expect(told).toBe(1);
    });
  });

  it("is held to the run's hooks.maxTokens", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(answer(), answer());
      const long = "word ".repeat(4000);
      const hooks = { run: async () => [{ hook: "recall", ok: true, context: long }] };
      const roomy = await run({ hooks });
      const tight = await run({ hooks: { ...hooks, maxTokens: 50 } });
      expect(tight.context.length).toBeLessThan(roomy.context.length);
      expect(tight.context.length).toBeLessThanOrEqual(50 * 4 + 100);
    });
  });
});
