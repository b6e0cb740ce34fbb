package script_test

import (
	"fmt"
	"testing"

	"github.com/tabpilot/tabpilot/tabs"
)

// TestGotoSettles: tab.goto waits, by default, for the page to settle
// after load, so what a page renders from a timer its load listener set
// for 25 ms later is there (with waitUntil load, it was not, unless the
// machine is slow). The settle promises a change that comes within its 50
// ms of quiet, counted from DOMContentLoaded (here just before load): this
// test once used a 60 ms timer, past that window, and passed only on a
// machine slow enough to stretch the settle (it failed 7 of 10 runs
// without the race detector on a quiet one).
func TestGotoSettles(t *testing.T) {
	t.Parallel()
	const page = `data:text/html,<title>Late</title><h1 id=app>Loading</h1><script>addEventListener('load', () => setTimeout(() => { app.textContent = 'Rendered' }, 25))</script>`
	name := openAt(t, "about:blank", tabs.OpenOptions{})
	got := result(t, name, fmt.Sprintf(`
await tab.goto(%q);
return await tab.evaluate(() => document.querySelector('h1').textContent);`, page))
	if got != "Rendered" {
		t.Errorf("goto, then the heading: %q, want Rendered", got)
	}
}
