#!/usr/bin/env bash
# The main job from the CLI: open a page, observe it, act on it by what
# the observation names, extract it as markdown and take a screenshot sized
# for a model.
#
# The page is the saved copy of Wikipedia's "Mozilla" article in
# $PAGES/wikipedia (the Readability test pages, ../shared/pages/readability
# beside the repository) when it is there; there the act is to click the
# "History" link of its contents. Otherwise (a clone on its own, or
# PAGES= to choose it) it is the page bundled in scripts/demo/, a local
# paper's article with a sign-up form, and the act is to fill in and send
# the form. Either is opened from disk (file://); the browser resolves only
# localhost and 127.0.0.1, so the real page's links to its original hosts
# go nowhere and nothing leaves this machine.
set -euo pipefail
BIN=${BIN:-bin/tabpilot}
PAGES=${PAGES-../shared/pages/readability}
here=$(cd "$(dirname "$0")" && pwd)

if [ -n "$PAGES" ] && [ -f "$PAGES/wikipedia/source.html" ]; then
	which=wikipedia
	page="$(cd "$PAGES/wikipedia" && pwd)/source.html"
	echo "demo page: the saved Wikipedia article \"Mozilla\", $page"
else
	which=bundled
	page="$here/demo/index.html"
	if [ -n "$PAGES" ]; then why="there is no $PAGES/wikipedia/source.html"; else why="PAGES is empty"; fi
	echo "demo page: the bundled page $page ($why)"
fi

export TABPILOT_SESSION="demo-$$"
# Last, so that it wins over a --host-resolver-rules of the caller's.
export TABPILOT_BROWSER_ARGS="${TABPILOT_BROWSER_ARGS:-} --host-resolver-rules=\"MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1\""
trap '"$BIN" stop >/dev/null 2>&1 || true' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step tabpilot open "file://$page"
"$BIN" open "file://$page" --wait-until load

step tabpilot observe --max-tokens 400
"$BIN" observe --max-tokens 400

if [ "$which" = wikipedia ]; then
	step tabpilot run -e '…find the "History" link by name, click it, report where we are…'
	"$BIN" run -e '
const obs = await tab.observe({query: "History"});
const link = obs.elements.find(e => e.role === "link" && /History/.test(e.name));
assert(link, "no History link: " + obs.text);
await tab.click(link.id);
return {clicked: link.name, url: await tab.url(), heading: await tab.evaluate(() => document.querySelector("#History")?.textContent)};
'
else
	step tabpilot run -e '…find the sign-up fields by name, fill them in, send the form, read the answer…'
	"$BIN" run -e '
const obs = await tab.observe();
const find = (role, name) => {
	const e = obs.elements.find(e => e.role === role && e.name.includes(name));
	assert(e, `no ${role} "${name}": ` + obs.text);
	return e.id;
};
await tab.fill(find("textbox", "Your name"), "Ada Lovelace");
await tab.fill(find("textbox", "Email address"), "ada@example.org");
await tab.select(find("combobox", "Edition"), "Morning briefing (daily)");
await tab.click(find("checkbox", "events at the mill"));
await tab.click(find("button", "Sign up"));
await tab.waitFor("text/Thanks, Ada");
return await tab.evaluate(() => ({
	answer: document.querySelector("#signup-status").textContent,
	readers: document.querySelector("#readers").textContent,
	button: document.querySelector("#signup button").textContent,
}));
'
fi

step "tabpilot extract | head -20"
markdown=$("$BIN" extract)
sed -n 1,20p <<<"$markdown"

step tabpilot screenshot --out demo-screenshot.png
"$BIN" screenshot --out demo-screenshot.png

step tabpilot tabs
"$BIN" tabs

step tabpilot close
"$BIN" close
