/**
 * createRuntime on a backend: checked on creation, started with the backend's latches, and reset
 * without losing them.
 */
import { describe, expect, it } from "vitest";
import { createRuntime, defaultRuntime, type RuntimeBackend } from "../../src/index.js";
import { sharedHub } from "../support/shared-backend.js";

describe("createRuntime({ backend })", () => {
  it("refuses a backend that lacks the interface's methods, naming them", () => {
    expect(() => createRuntime({ backend: {} as RuntimeBackend })).toThrow(/lacks appendEvents, endRun, followRun, publishLatches, loadLatches, onLatches/);
    expect(() => createRuntime({ backend: null as unknown as RuntimeBackend })).toThrow(TypeError);
    expect(() => createRuntime({})).not.toThrow();
  });

  it("starts with every latch the backend holds, and loads them again on reset", () => {
    const hub = sharedHub();
    hub.replica().publishLatches({ version: 1, endpoints: [{ baseUrl: "http://h/v1", key: "", usageInStream: false }] });
    const runtime = createRuntime({ backend: hub.replica() });
    expect(runtime.capabilitiesFor("http://h/v1").usageInStream).toBe(false);
    runtime.emit("r", { kind: "output", text: "x" });
    runtime.reset();
    expect(runtime.history("r")).toEqual([]);
    expect(runtime.capabilitiesFor("http://h/v1").usageInStream).toBe(false);
    expect(defaultRuntime.capabilitiesFor("http://h/v1").usageInStream).toBe(true);
    runtime.reset();
    defaultRuntime.reset();
  });

  it("hands the backend each event as it is emitted, with the bus's settings, and each endRun", () => {
    const backend = sharedHub().replica();
    const runtime = createRuntime({ backend });
    runtime.configureEvents({ maxEvents: 50 });
    runtime.emit("r", { kind: "output", text: "a" });
    runtime.emit("r", { kind: "done" });
    runtime.emit("r", { kind: "output", text: "after done" });
    runtime.endRun("r");
    runtime.emit("", { kind: "output", text: "no run id" });
    expect(backend.calls.appended.map((call) => [call.runId, call.events.map((event) => event.seq), call.settings.maxEvents])).toEqual([
      ["r", [1], 50],
      ["r", [2], 50],
    ]);
    expect(backend.calls.ended).toEqual(["r"]);
    runtime.reset();
  });
});
