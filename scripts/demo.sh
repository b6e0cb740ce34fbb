#!/usr/bin/env bash
# The main job on a bundled real page: open a saved copy of Wikipedia's
# "Mozilla" article, observe it, act on it by number in a run, extract it
# as markdown and take a screenshot sized for a model, all from the CLI.
# The page links to its original hosts; the browser resolves only
# localhost, so nothing leaves this machine.
set -euo pipefail
BIN=${BIN:-bin/tabpilot}
PAGES=${PAGES:-../shared/pages/readability}
page="$(cd "$PAGES/wikipedia" && pwd)/source.html"
export TABPILOT_SESSION="demo-$$"
# TABPILOT_BROWSER_ARGS is split like a shell line: the rule's blanks are quoted.
export TABPILOT_BROWSER_ARGS='--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"'
trap '"$BIN" stop >/dev/null 2>&1 || true' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step tabpilot open "file://$page"
"$BIN" open "file://$page" --wait-until load

step tabpilot observe --max-tokens 400
"$BIN" observe --max-tokens 400

step tabpilot run -e '…find the "History" link by name, click it, report where we are…'
"$BIN" run -e '
const obs = await tab.observe({query: "History"});
const link = obs.elements.find(e => e.role === "link" && /History/.test(e.name));
assert(link, "no History link: " + obs.text);
await tab.click(link.id);
return {clicked: link.name, url: await tab.url(), heading: await tab.evaluate(() => document.querySelector("#History")?.textContent)};
'

step "tabpilot extract | head -20"
"$BIN" extract | head -20

step tabpilot screenshot --out demo-screenshot.png
"$BIN" screenshot --out demo-screenshot.png

step tabpilot tabs
"$BIN" tabs

step tabpilot close
"$BIN" close
