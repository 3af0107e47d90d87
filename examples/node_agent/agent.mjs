// A web agent in Node that knows nothing of p2w-rt, recorded with no code change by `p2w-rt record --exec`.
//
// It attaches to the browser at P2W_CDP_URL with playwright-core, asks its model with plain `fetch` (the chat
// completions API at OPENAI_BASE_URL, with tools), acts on each tool call, exports one OpenTelemetry span per tool
// it runs (OTLP/HTTP JSON, to OTEL_EXPORTER_OTLP_ENDPOINT when set), and prints its answer as the last line,
// {"answer": ...}. A reply without a tool call is its answer.
//
//   npm install --prefix examples/node_agent      (scripts/setup.sh does it)
//   p2w-rt record --exec "node examples/node_agent/agent.mjs" --base-url http://127.0.0.1:8000/v1 --model scripted-model
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { chromium } from "playwright-core";

const env = process.env;
const task = JSON.parse(readFileSync(env.P2W_TASK_FILE, "utf8"));
const tool = (name, description, properties) => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties, required: Object.keys(properties) } },
});
const text = { type: "string" };
const TOOLS = [
  tool("goto", "Open a URL.", { url: text }),
  tool("click", "Click a link or button by its text.", { target: text }),
  tool("fill", "Type text into the field with this label.", { label: text, text }),
];
const trace = randomBytes(16).toString("hex");

async function ask(messages) {
  const reply = await fetch(`${env.OPENAI_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${env.OPENAI_API_KEY}` },
    body: JSON.stringify({ model: env.P2W_MODEL || "gpt-4o-mini", messages, tools: TOOLS }),
  });
  if (!reply.ok) throw new Error(`model: HTTP ${reply.status}: ${await reply.text()}`);
  return (await reply.json()).choices[0].message;
}

async function act(page, name, args) {
  if (name === "goto") await page.goto(args.url);
  else if (name === "click") await page.getByRole("link", { name: args.target }).or(page.getByRole("button", { name: args.target })).first().click();
  else if (name === "fill") await page.getByLabel(args.label).fill(args.text);
  else throw new Error(`no tool ${name}`);
  await page.waitForLoadState("domcontentloaded");
}

async function span(name, args, rationale, error, started) {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const value = (v) => ({ stringValue: String(v) });
  const attributes = [
    ["gen_ai.operation.name", "execute_tool"], ["gen_ai.tool.name", name],
    ["gen_ai.tool.call.arguments", JSON.stringify(args)], ...(rationale ? [["gen_ai.agent.rationale", rationale]] : []),
  ].map(([key, v]) => ({ key, value: value(v) }));
  const one = {
    traceId: trace, spanId: randomBytes(8).toString("hex"), name: `execute_tool ${name}`, kind: 1, attributes,
    startTimeUnixNano: String(started * 1e6), endTimeUnixNano: String(Date.now() * 1e6),
    status: error ? { code: 2, message: String(error) } : { code: 1 },
  };
  const body = { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: "node-agent" }, spans: [one] }] }] };
  await fetch(`${env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  });
}

const browser = await chromium.connectOverCDP(env.P2W_CDP_URL);
const page = browser.contexts()[0].pages()[0];
const seen = async () => `Page ${page.url()}:\n${(await page.locator("body").innerText()).slice(0, 3000)}`;
const messages = [
  { role: "system", content: "You browse the web for a user with the tools; when done, answer in plain text." },
  { role: "user", content: `Task: ${task.intent}\n${await seen()}` },
];
let answer = null;
for (let step = 0; step < 10 && answer === null; step++) {
  const message = await ask(messages);
  if (!message.tool_calls?.length) {
    answer = message.content;
    break;
  }
  messages.push(message);
  for (const call of message.tool_calls) {
    const args = JSON.parse(call.function.arguments || "{}");
    const started = Date.now();
    let error = null;
    try {
      await act(page, call.function.name, args);
    } catch (failed) {
      error = failed.message.split("\n")[0];
    }
    await span(call.function.name, args, message.content, error, started);
    const result = error ? `failed: ${error}` : `done. ${await seen()}`;
    messages.push({ role: "tool", tool_call_id: call.id, content: result });
  }
}
// Not browser.close(): that would close p2w-rt's Chromium, whose final page is still to be recorded.
process.stdout.write(`${JSON.stringify({ answer })}\n`, () => process.exit(0));
