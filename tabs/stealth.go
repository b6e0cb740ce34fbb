package tabs

import "context"

// stealthFlags are the launch flags of a stealthy headless browser.
func stealthFlags() []string {
	return []string{"--disable-blink-features=AutomationControlled"}
}

// installStealth installs the stealth patches on a new headless tab before
// any page script runs.
func installStealth(ctx context.Context, t *Tab) error { return nil }
