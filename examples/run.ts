/**
 * Runs one of the examples: `npx tsx examples/run.ts quick-start`.
 *
 * With AGENT_CORE_BASE_URL set, the example talks to that server (and AGENT_CORE_MODEL,
 * OPENAI_API_KEY). Without it, the loopback endpoint from `@cubicecho/agent-core/testing` plays
 * the model: it makes the calls planned for the example below, one per step, then answers with
 * what the last tool said. No model, key or network is needed.
 */
import { basename } from "node:path";
import { startEndpoint, turn, type EndpointServer, type RecordedRequest } from "@cubicecho/agent-core/testing";

type Planned = { name: string; arguments: Record<string, unknown> };

const plans: Record<string, Planned[]> = {
  "quick-start": [{ name: "get_weather", arguments: { city: "Lisbon" } }],
  mcp: [
    { name: "load_tools", arguments: { names: ["list_directory"] } },
    { name: "call_tool", arguments: { name: "list_directory", arguments: { path: import.meta.dirname } } },
  ],
};

const example = basename(process.argv[2] ?? "quick-start", ".ts");
const plan = plans[example];
if (!plan) {
  console.error(`examples/run.ts: no example named "${example}"; the examples are ${Object.keys(plans).join(", ")}.`);
  process.exit(2);
}

/** The played model: the next planned call, or, once they are made, what the last tool said. */
function play(request: RecordedRequest) {
  const messages = (request.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const asked = messages.map((message) => message.role).lastIndexOf("user");
  const step = messages.slice(asked).filter((message) => message.role === "assistant").length;
  const next = plan![step];
  if (next) return turn({ toolCalls: [{ id: `call_${step}`, ...next }] });
  const said = messages.at(-1)?.role === "tool" ? String(messages.at(-1)!.content) : "nothing";
  return turn({ content: `(played by the loopback endpoint) The last tool said:\n${said}` });
}

let server: EndpointServer | undefined;
if (!process.env.AGENT_CORE_BASE_URL) {
  server = await startEndpoint({ profile: "llama.cpp", respond: play });
  process.env.AGENT_CORE_BASE_URL = server.baseUrl;
  process.env.AGENT_CORE_MODEL ??= "loopback-model";
}
try {
  await import(`./${example}.ts`);
} finally {
  await server?.close();
}
