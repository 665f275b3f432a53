import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SseSplitter } from "../../src/wire/sse.js";
import { streamTurn } from "../../src/wire/stream.js";
import { chunk, streamBody as body, streamEndpoints } from "../support/stream-endpoint.js";

const { endpoint } = streamEndpoints();

describe("streamTurn", () => {
  describe("bad input", () => {
    it("reads past comments, ids and keep-alive lines", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: [": OPENROUTER PROCESSING\n\n", "id: 7\nretry: 100\n\n", chunk({ content: "ok" }, "stop"), "data:\n\n"] });
      expect((await streamTurn(client, body)).content).toBe("ok");
    });
  });
});

describe("SseSplitter", () => {
  it("hands over the same data lines however the bytes are cut, UTF-8 and CRLF included", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: "grapheme", maxLength: 20 }).filter((value) => !/[\r\n]/.test(value)),
          { maxLength: 10 },
        ),
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 8 }),
        (values, newline, points) => {
          const text = values.map((value) => `event: e\ndata: ${value}${newline}: comment${newline}${newline}`).join("");
          const bytes = new TextEncoder().encode(text);
          const cutAt = [...new Set(points.map((point) => point % (bytes.length + 1)))].sort((a, b) => a - b);
          const seen: Array<[string, string]> = [];
          const splitter = new SseSplitter((data, name) => seen.push([data, name]));
          let from = 0;
          for (const point of [...cutAt, bytes.length]) {
            splitter.push(bytes.subarray(from, point));
            from = point;
          }
          splitter.end();
          expect(seen).toEqual(values.map((value) => [value, "e"]));
        },
      ),
    );
  });

  it("hands over a last line that had no line ending", () => {
    const seen: string[] = [];
    const splitter = new SseSplitter((data) => seen.push(data));
    splitter.pushText("data: one\n\ndata: two");
    splitter.end();
    expect(seen).toEqual(["one", "two"]);
  });
});
