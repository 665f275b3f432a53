import { describe, expect, it } from "vitest";
import type { AgentLoopConfig, AgentLoopOptions } from "../../../src/run/agent-loop/options.js";
import { DEFAULT_MAX_TOOL_ITERATIONS } from "../../../src/shapes/limits.js";
import { LOOP_DEFAULTS, resolveSettings } from "../../../src/run/agent-loop/settings.js";

const config: AgentLoopConfig = { baseUrl: "http://127.0.0.1:1/v1", model: "m", maxToolIterations: 5 };

/** Resolves the settings of a run with only the given options and config fields. */
function settingsOf(options: Partial<AgentLoopOptions> = {}, fields: Partial<AgentLoopConfig> = {}) {
  const merged = { ...config, ...fields } as AgentLoopConfig;
  return resolveSettings({ config: merged, messages: [], dispatch: () => "", ...options } as AgentLoopOptions, merged);
}

describe("resolveSettings", () => {
  it("declares every tool (eager) where toolDiscovery is absent or unknown", () => {
    expect(settingsOf({}, { toolDiscovery: undefined }).toolDiscovery).toBe("eager");
    expect(settingsOf({}, { toolDiscovery: "lazy" as never }).toolDiscovery).toBe("eager");
    expect(settingsOf({}, { toolDiscovery: "proxy" }).toolDiscovery).toBe("proxy");
  });

  it("allows the agent document's 20 tool-calling steps where maxToolIterations is absent or unreadable, and a whole number otherwise", () => {
    expect(settingsOf({}, { maxToolIterations: undefined }).maxToolIterations).toBe(DEFAULT_MAX_TOOL_ITERATIONS);
    expect(settingsOf({}, { maxToolIterations: -3 }).maxToolIterations).toBe(20);
    expect(settingsOf({}, { maxToolIterations: 0.5 }).maxToolIterations).toBe(1);
    expect(settingsOf({}, { maxToolIterations: 7.9 }).maxToolIterations).toBe(7);
  });

  it("weighs nothing against a window where contextLength is absent or not above zero", () => {
    expect(settingsOf().contextLength).toBeUndefined();
    expect(settingsOf({}, { contextLength: 0 }).contextLength).toBeUndefined();
    expect(settingsOf({}, { contextLength: 8192 }).contextLength).toBe(8192);
  });

  it("leaves maxRetries to runTurn where it is absent", () => {
    expect(settingsOf().maxRetries).toBeUndefined();
    expect(settingsOf({}, { maxRetries: 0 }).maxRetries).toBe(0);
  });

  it("leaves the loading wait to runTurn where it is absent or unreadable, and keeps 0 as no wait", () => {
    expect(settingsOf().loadingTimeoutSeconds).toBeUndefined();
    expect(settingsOf({}, { loadingTimeoutSeconds: -1 }).loadingTimeoutSeconds).toBeUndefined();
    expect(settingsOf({}, { loadingTimeoutSeconds: 0 }).loadingTimeoutSeconds).toBe(0);
  });

  it("sends no system prompt of its own where system is absent or not a string", () => {
    expect(settingsOf().system).toBe("");
    expect(settingsOf({ system: 42 as never }).system).toBe("");
    expect(settingsOf({ system: "Be brief." }).system).toBe("Be brief.");
  });

  it("routes a shortlist exclusively unless append is asked for", () => {
    expect(settingsOf().preselectRouting).toBe("exclusive");
    expect(settingsOf({ preselectRouting: "sideways" as never }).preselectRouting).toBe("exclusive");
    expect(settingsOf({ preselectRouting: "append" }).preselectRouting).toBe("append");
  });

  it("runs a step's calls one after another unless parallel is true", () => {
    expect(settingsOf().parallel).toBe(false);
    expect(settingsOf({ parallel: "yes" as never }).parallel).toBe(false);
    expect(settingsOf({ parallel: true }).parallel).toBe(true);
  });

  it("makes an identical call once per step unless dedupeToolCalls is false, asking a predicate where given", () => {
    const predicate = () => false;
    expect(settingsOf().dedupeToolCalls).toBe(true);
    expect(settingsOf({ dedupeToolCalls: false }).dedupeToolCalls).toBe(false);
    expect(settingsOf({ dedupeToolCalls: predicate }).dedupeToolCalls).toBe(predicate);
  });

  it("orders the tools by name where toolOrder is absent", () => {
    expect(settingsOf().toolOrder).toBe(true);
    expect(settingsOf({ toolOrder: false }).toolOrder).toBe(false);
  });

  it("looks for calls written as text unless recoverToolCalls is false", () => {
    expect(settingsOf().recoverToolCalls).toBe(true);
    expect(settingsOf({ recoverToolCalls: false }).recoverToolCalls).toBe(false);
  });

  it("continues no cut-off answer where maxContinuations is absent, and a whole number otherwise", () => {
    expect(settingsOf().maxContinuations).toBe(0);
    expect(settingsOf({ maxContinuations: -2 }).maxContinuations).toBe(0);
    expect(settingsOf({ maxContinuations: 2.5 }).maxContinuations).toBe(2);
  });

  it("makes no preselection unless preselect is true", () => {
    expect(settingsOf().preselect).toBe(false);
    expect(settingsOf({ preselect: 1 as never }).preselect).toBe(false);
    expect(settingsOf({ preselect: true }).preselect).toBe(true);
  });

  it("folds nothing unless compact is set", () => {
    expect(settingsOf().compact).toBe(false);
    expect(settingsOf({ compact: true }).compact).toBe(true);
  });

  it("asks no approve policy unless one is a function, and checks arguments unless validateArguments is false", () => {
    const approve = () => "ask" as const;
    expect(settingsOf().approve).toBeUndefined();
    expect(settingsOf({ approve: "ask" as never }).approve).toBeUndefined();
    expect(settingsOf({ approve }).approve).toBe(approve);
    expect(settingsOf().validateArguments).toBe(true);
    expect(settingsOf({ validateArguments: 0 as never }).validateArguments).toBe(true);
    expect(settingsOf({ validateArguments: false }).validateArguments).toBe(false);
  });

  it("runs no hooks without a runner, and gathers beforeTurn where the hooks name no events", () => {
    const run = async () => [];
    expect(settingsOf().hooks).toBeUndefined();
    expect(settingsOf({ hooks: { run: "not a function" as never } }).hooks).toBeUndefined();
    expect(settingsOf({ hooks: { run } }).hooks?.events).toEqual(["beforeTurn"]);
    expect(settingsOf({ hooks: { run, events: [] } }).hooks?.events).toEqual(["beforeTurn"]);
    expect(settingsOf({ hooks: { run, events: ["beforeTurn", "afterTurn"] } }).hooks?.events).toEqual(["beforeTurn", "afterTurn"]);
  });

  it("keeps time on Date.now unless a clock is given", () => {
    const clock = () => 42;
    expect(settingsOf().now).toBe(Date.now);
    expect(settingsOf({ now: 7 as never }).now).toBe(Date.now);
    expect(settingsOf({ now: clock }).now).toBe(clock);
  });

  it("leaves the wait between attempts to runTurn unless a sleep function is given", () => {
    const sleep = async () => undefined;
    expect(settingsOf().sleep).toBeUndefined();
    expect(settingsOf({ sleep }).sleep).toBe(sleep);
  });

  it("takes every default from LOOP_DEFAULTS", () => {
    expect(settingsOf({}, { maxToolIterations: undefined as never })).toEqual(LOOP_DEFAULTS);
  });
});
