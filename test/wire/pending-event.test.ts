import { describe, expect, it } from "vitest";
import { MalformedStreamEvent, streamTurn } from "../../src/wire/stream.js";
import { chunk, streamBody as body, streamEndpoints } from "../support/stream-endpoint.js";

const { endpoint } = streamEndpoints();

describe("streamTurn", () => {
  describe("bad input", () => {
    it("rejects a data line that is not JSON, and joins an event spread over two data lines", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: [chunk({ content: "a" }), "data: {not json\n\n", chunk({ content: "b" })] });
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(MalformedStreamEvent.is(error)).toBe(true);
      expect((error as MalformedStreamEvent).line).toBe("{not json");

      const split = JSON.stringify(chunk({ content: "joined" }, "stop"));
      // Multi-line data is joined with a newline, so the server can only break where JSON allows whitespace.
      const half = split.indexOf(',"choices"') + 1;
      server.script({ kind: "stream", chunks: [`data: ${split.slice(0, half)}\ndata: ${split.slice(half)}\n\n`] });
      expect((await streamTurn(client, body)).content).toBe("joined");
    });

    it("reads an event spread over thousands of data lines in one network chunk", async () => {
      const { server, client } = await endpoint();
      // Each line opens an array the next closes only at the end (the bench times this shape).
      const words = Array.from({ length: 80_000 }, (_, index) => `data: ${index === 0 ? '{"choices":[{"index":0,"delta":{"content":"x"},"pad":[' : "[1],"}`);
      server.script({ kind: "stream", chunks: [`${words.join("\n")}\ndata: [0]]}]}\n\n`] });
      expect((await streamTurn(client, body)).content).toBe("x");
    });

    it("quotes the start of an event that can no longer parse, however many lines follow it", async () => {
      const { server, client } = await endpoint();
      const lines = Array.from({ length: 50_000 }, () => "data: x");
      server.script({ kind: "stream", chunks: [`data: {"choices":[{"delta":{"content":"\n${lines.join("\n")}\ndata: "}}]}\n\n`] });
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(MalformedStreamEvent.is(error)).toBe(true);
      expect((error as MalformedStreamEvent).line.startsWith('{"choices":[{"delta":{"content":"\nx\nx')).toBe(true);
    });

    it("reports an event whose joined lines can never be JSON once its blank line comes", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: ['data: {"a":\ndata: 1}}\ndata: {"b":2}\n\n'] });
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(MalformedStreamEvent.is(error)).toBe(true);
      expect((error as MalformedStreamEvent).line).toContain('{"a":\n1}}');
      server.script({ kind: "stream", chunks: ['data: {"a":"open\ndata: string"}\n\n'] });
      const broken = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect((broken as MalformedStreamEvent).line).toBe('{"a":"open\nstring"}');
    });
  });
});
