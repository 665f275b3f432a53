import { defineTool, runAgentLoop, toolset } from "@cubicecho/agent-core";
import { z } from "zod";

const weather = defineTool({
  name: "get_weather",
  description: "Today's weather in a city.",
  parameters: z.object({ city: z.string().describe("The city's name") }),
  execute: async ({ city }) => `${city}: 21°C and clear`,
});

const { turn } = await runAgentLoop({
  config: {
    baseUrl: process.env.AGENT_CORE_BASE_URL ?? "http://127.0.0.1:8080/v1",
    apiKey: process.env.OPENAI_API_KEY,
    model: process.env.AGENT_CORE_MODEL ?? "qwen3-8b",
    maxToolIterations: 10,
  },
  messages: [{ role: "user", content: "What's the weather in Lisbon?" }],
  ...toolset([weather]),
});
console.log(turn.content);
