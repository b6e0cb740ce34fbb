// The official TypeScript MCP SDK (Client with StdioClientTransport) drives
// `tabpilot mcp`: list the tools, open a local page, observe, click by
// number, check the click with run, take a screenshot and check the image
// content, fail on a stale number, close. Usage: node client.mjs TABPILOT URL
// It prints one JSON line with what it saw, and exits 1 on a failed check.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, url] = process.argv.slice(2);
assert.ok(bin && url, "usage: node client.mjs TABPILOT URL");

const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "tabpilot-ts-test", version: "1.0.0" });
await client.connect(transport);
const proc = transport._process; // to check the exit status after close

const { tools } = await client.listTools();
assert.equal(tools.length, 1);
const tool = tools[0];
assert.equal(tool.name, "browser");
assert.deepEqual(tool.inputSchema.properties.action.enum,
  ["open", "close", "run", "observe", "click", "type", "fill", "press", "screenshot", "extract", "tabs",
    "hover", "select", "scroll", "wait", "back", "forward", "reload", "dialog", "upload",
    "network", "console", "har", "route", "unroute", "pdf", "emulate", "record", "replay"]);
assert.deepEqual(tool.inputSchema.required, ["action"]);
assert.equal(tool.annotations.readOnlyHint, false);
assert.deepEqual(tool._meta["io.github.tabpilot/readOnlyActions"], ["observe", "screenshot", "extract", "tabs", "wait", "network", "console"]);

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const call = async (args) => client.callTool({ name: "browser", arguments: args });
const ok = async (args) => {
  const r = await call(args);
  assert.ok(!r.isError, `${JSON.stringify(args)}: ${text(r)}`);
  return r;
};

let r = await ok({ action: "open", url });
assert.match(text(r), /^Opened tab "main" \(headless browser\): .* — "Tabpilot MCP Test"$/);

r = await ok({ action: "observe" });
const m = text(r).match(/^\D*?(\d+)\D[^\n]*\bbutton "Press me"/m) || text(r).match(/^(\d+) \[Press me\]/m); // number first; a button is "button \"name\"" or "[name]"
assert.ok(m, `no button in the observation:\n${text(r)}`);
const button = Number(m[1]);

r = await ok({ action: "click", target: button });
assert.equal(text(r), `Clicked ${button}`);
r = await ok({ action: "run", code: "return await tab.evaluate(() => document.getElementById('out').textContent)" });
assert.equal(text(r), "clicked");

r = await ok({ action: "screenshot" });
assert.equal(r.content.length, 2);
const img = r.content[1];
assert.equal(img.type, "image");
assert.equal(img.mimeType, "image/jpeg");
const jpeg = Buffer.from(img.data, "base64");
const size = jpegSize(jpeg);
const said = text(r).match(/^Screenshot \d+: (\d+)x(\d+) image\/jpeg, (\d+) bytes/);
assert.ok(said, text(r));
assert.deepEqual([size.width, size.height], [Number(said[1]), Number(said[2])]);
assert.equal(jpeg.length, Number(said[3]));
assert.ok(size.width <= 1024 && size.height <= 1024 && jpeg.length <= 150 * 1024, JSON.stringify(size));

r = await call({ action: "click", target: 999 });
assert.equal(r.isError, true);
assert.match(text(r), /^stale_element: .*\nHint: .*observe again/s);

r = await ok({ action: "close" });
assert.equal(text(r), 'Closed tab "main"');

// Shut down as the MCP spec says for stdio: close the server's stdin and
// wait for it to exit (client.close() would send SIGTERM after 2 s, too
// soon on a loaded test machine).
let exit = "unknown";
if (proc) {
  const exited = new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve();
    else proc.once("exit", resolve);
  });
  proc.stdin.end();
  const timer = setTimeout(() => { throw new Error("tabpilot mcp did not exit within 60 s of the end of its stdin"); }, 60000);
  await exited;
  clearTimeout(timer);
  assert.equal(proc.signalCode, null, "tabpilot mcp was killed by a signal");
  assert.equal(proc.exitCode, 0, "tabpilot mcp exit code");
  exit = proc.exitCode;
}
await client.close();
console.log(JSON.stringify({ ok: true, tools: tools.map((t) => t.name), button, image: { ...size, bytes: jpeg.length }, exit }));

// jpegSize reads the frame size from a JPEG's SOF marker.
function jpegSize(b) {
  assert.ok(b[0] === 0xff && b[1] === 0xd8, "not a JPEG");
  let i = 2;
  while (i + 9 < b.length) {
    assert.equal(b[i], 0xff, "bad JPEG marker");
    const marker = b[i + 1];
    const len = b.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
    }
    i += 2 + len;
  }
  throw new Error("no SOF marker in the JPEG");
}
