import { describe, expect, it } from "vitest";
import { isTransient } from "../../src/text/retry.js";
import { UnexpectedReply, streamTurn } from "../../src/wire/stream.js";
import { streamBody as body, streamEndpoints } from "../support/stream-endpoint.js";

const { endpoint } = streamEndpoints();

describe("streamTurn", () => {
  describe("bad input", () => {
    it("rejects a page that is not the API, and JSON that is no completion, with UnexpectedReply naming type, URL and words", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "json",
        status: 200,
        body: "<!DOCTYPE html><html><head><title>Access denied</title></head><body><h1>Sign in to continue</h1></body></html>",
      });
      const page = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(UnexpectedReply.is(page)).toBe(true);
      expect(page).toMatchObject({ status: 200, contentType: "text/html; charset=utf-8", url: `${server.baseUrl}/chat/completions` });
      expect((page as Error).message).toContain("Access denied: Sign in to continue");
      expect(isTransient(page)).toBe(false);
      server.script({ kind: "json", status: 200, body: { object: "list", data: [] } });
      const other = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(UnexpectedReply.is(other)).toBe(true);
      expect((other as Error).message).toContain('{"object":"list","data":[]}');
    });
  });
});
