package browser

import (
	"os"
	"testing"

	"github.com/tabpilot/tabpilot/internal/testenv"
)

// The Selenium Grid the Grid tests share is testenv's (internal/testenv,
// grid.go): a standalone Selenium 4 server on 127.0.0.1 with Debian's
// chromedriver and chromium, basic auth, and a 10 s idle timeout so the
// keepalive test is short. These are its names here.
const (
	gridUser           = testenv.GridUser
	gridPassword       = testenv.GridPassword
	gridSessionTimeout = testenv.GridSessionTimeout
)

// needGrid returns the URL of the shared Grid, starting it on first use
// (testenv.NeedGrid: skips without java, the jar, chromedriver or
// chromium, unless CI is set).
func needGrid(t testing.TB) string { return testenv.NeedGrid(t) }

// gridSessions lists the session ids the Grid's /status shows.
func gridSessions(t testing.TB, base string) map[string]bool { return testenv.GridSessions(t, base) }

// gridCall sends a WebDriver command to the Grid with its credentials,
// behind any handle's back, and returns the HTTP status.
func gridCall(t testing.TB, method, u string, body any) int {
	return testenv.GridCall(t, method, u, body)
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopGrid()
	testenv.StopBrowserless()
	os.Exit(code)
}
