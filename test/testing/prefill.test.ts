import { describe, expect, it } from "vitest";
import { turn } from "../support/endpoint.js";
import { endpointsClosedAfterEach, messages, post, json, events } from "../support/endpoint-client.js";

const start = endpointsClosedAfterEach();

describe("a prefilled reply (llama.cpp)", () => {
  const prefilled = [...messages, { role: "assistant", content: "Paris is" }];
  const contents = (list: unknown[]): string[] =>
    list.flatMap((event) => {
      const content = (event as { choices?: { delta?: { content?: unknown } }[] }).choices?.[0]?.delta?.content;
      return typeof content === "string" && content !== "" ? [content] : [];
    });

  it("streams the whole prefill back in the first content delta, before the new text", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: " the capital", pieces: 2 }));
    const list = await events(await post(server, { model: "m", stream: true, messages: prefilled }));
    expect(contents(list)).toEqual(["Paris is the c", "apital"]);
  });

  it("streams the prefill alone where the model writes nothing more", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: "" }));
    const list = await events(await post(server, { model: "m", stream: true, messages: prefilled }));
    expect(contents(list)).toEqual(["Paris is"]);
  });

  it("streams only the new text under continue_final_message with add_generation_prompt false", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: " the capital", pieces: 2 }));
    const list = await events(
      await post(server, { model: "m", stream: true, messages: prefilled, continue_final_message: true, add_generation_prompt: false }),
    );
    expect(contents(list)).toEqual([" the c", "apital"]);
  });

  it("holds the prefill and the new text in a reply that is not streamed, counting only the new text", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: " the capital" }), turn({ content: " the capital" }));
    const plain = await json(await post(server, { model: "m", messages: [...messages] }));
    const body = await json(await post(server, { model: "m", messages: prefilled, continue_final_message: true, add_generation_prompt: false }));
    expect(body.choices[0].message.content).toBe("Paris is the capital");
    expect(body.usage.completion_tokens).toBe(plain.usage.completion_tokens);
  });

  it("refuses continue_final_message beside add_generation_prompt true, as llama.cpp words it", async () => {
    const server = await start({ profile: "llama.cpp" });
    const response = await post(server, { model: "m", messages: prefilled, continue_final_message: true });
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({
      error: { code: 400, message: "Cannot set both add_generation_prompt and continue_final_message to true.", type: "invalid_request_error" },
    });
  });

  it("leaves other families' replies as scripted", async () => {
    const server = await start({ profile: "vllm" });
    server.script(turn({ content: " the capital", pieces: 1 }));
    const list = await events(await post(server, { model: "m", stream: true, messages: prefilled, continue_final_message: true }));
    expect(contents(list)).toEqual([" the capital"]);
  });
});
