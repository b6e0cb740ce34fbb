package script_test

import (
	"fmt"
	"testing"

	"github.com/tabpilot/tabpilot/tabs"
)

// TestGotoSettles: tab.goto waits, by default, for the page to settle
// after load, so what a page renders 60 ms after load is there (with
// waitUntil load, it was not, unless the machine is slow).
func TestGotoSettles(t *testing.T) {
	t.Parallel()
	const page = `data:text/html,<title>Late</title><h1 id=app>Loading</h1><script>addEventListener('load', () => setTimeout(() => { app.textContent = 'Rendered' }, 60))</script>`
	name := openAt(t, "about:blank", tabs.OpenOptions{})
	got := result(t, name, fmt.Sprintf(`
await tab.goto(%q);
return await tab.evaluate(() => document.querySelector('h1').textContent);`, page))
	if got != "Rendered" {
		t.Errorf("goto, then the heading: %q, want Rendered", got)
	}
}
