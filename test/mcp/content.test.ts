import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readMcpResult } from "../../src/mcp.js";

describe("readMcpResult", () => {
  it("joins text blocks with a newline and keeps isError as a failure", () => {
    expect(
      readMcpResult({
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      }),
    ).toEqual({ ok: true, text: "one\ntwo" });
    expect(readMcpResult({ content: [{ type: "text", text: "no such file" }], isError: true })).toEqual({ ok: false, text: "no such file" });
  });

  it("describes image and audio data by type and size instead of pasting it", () => {
    const data = Buffer.alloc(3000, 7).toString("base64");
    expect(readMcpResult({ content: [{ type: "image", data, mimeType: "image/png" }] }).text).toBe("[image image/png, 2.9 kB, not shown]");
    expect(readMcpResult({ content: [{ type: "audio", data: Buffer.alloc(10).toString("base64"), mimeType: "audio/wav" }] }).text).toBe(
      "[audio audio/wav, 10 bytes, not shown]",
    );
  });

  it("gives an embedded resource's text under its URI, and a binary one's size", () => {
    expect(readMcpResult({ content: [{ type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "hello" } }] }).text).toBe(
      "[resource file:///a.txt (text/plain)]\nhello",
    );
    expect(readMcpResult({ content: [{ type: "resource", resource: { uri: "file:///a.bin", blob: Buffer.alloc(4).toString("base64") } }] }).text).toBe(
      "[resource file:///a.bin] 4 bytes of binary data, not shown",
    );
  });

  it("names a resource link with its URI and description", () => {
    expect(readMcpResult({ content: [{ type: "resource_link", name: "a.txt", uri: "file:///a.txt", description: "A note." }] }).text).toBe(
      "[resource link] a.txt <file:///a.txt>: A note.",
    );
  });

  it("writes a block of an unknown kind as its JSON without its data", () => {
    expect(readMcpResult({ content: [{ type: "video", data: "AAAA", seconds: 3 }] }).text).toBe('{"type":"video","seconds":3}');
  });

  it("falls back to structuredContent, then an older server's toolResult, then nothing", () => {
    expect(readMcpResult({ content: [], structuredContent: { temperature: 21 } })).toEqual({ ok: true, text: '{"temperature":21}' });
    expect(readMcpResult({ toolResult: "plain" })).toEqual({ ok: true, text: "plain" });
    expect(readMcpResult({ toolResult: { n: 1 } })).toEqual({ ok: true, text: '{"n":1}' });
    expect(readMcpResult({})).toEqual({ ok: true, text: "" });
    expect(readMcpResult(undefined)).toEqual({ ok: true, text: "" });
  });

  it("never throws and always answers text, whatever it is handed", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const read = readMcpResult(value);
        expect(typeof read.text).toBe("string");
        expect(typeof read.ok).toBe("boolean");
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.constantFrom("type", "text", "data", "resource", "uri", "name"), fc.anything())), (content) => {
        expect(typeof readMcpResult({ content }).text).toBe("string");
      }),
    );
  });
});
