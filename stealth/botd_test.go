package stealth

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// botdDir is the git-ignored scratch dir the test installs @fingerprintjs/botd into; botdDist
// holds its ESM build, served at /botd/.
var (
	botdDir  = filepath.Join("testdata", "botd")
	botdDist = filepath.Join(botdDir, "node_modules", "@fingerprintjs", "botd", "dist")
)

// installBotd installs the detector with npm (skipping only when npm is absent).
func installBotd(t *testing.T) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: cannot install @fingerprintjs/botd (apt-get install npm)")
	}
	if _, err := os.Stat(filepath.Join(botdDist, "botd.esm.js")); err == nil {
		return
	}
	if err := os.MkdirAll(botdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", botdDir, "@fingerprintjs/botd")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install @fingerprintjs/botd: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(botdDist, "botd.esm.js")); err != nil {
		t.Fatalf("npm installed no ESM build: %v", err)
	}
}

// TestBotd runs a real detector none of us wrote, FingerprintJS's BotD: it must report no bot
// with stealth on, and detect the headless bot with stealth off.
func TestBotd(t *testing.T) {
	t.Parallel()
	installBotd(t)
	r := loads(t, load{b: plain, path: "/testdata/botd.html", global: "result"},
		load{b: stealthy, on: true, path: "/testdata/botd.html", global: "result"})
	for i, on := range []bool{false, true} {
		res := r[i]
		t.Logf("botd stealth=%v: verdict %s", on, jsonOf(get(res, "result")))
		var detected []string
		if m, ok := get(res, "detections").(map[string]any); ok {
			for k, v := range m {
				if get(v, "bot") == true {
					detected = append(detected, k+"="+str(v, "botKind"))
				}
			}
		}
		t.Logf("botd stealth=%v: detectors that fired: %v", on, detected)
		if bot := get(res, "result", "bot"); bot != any(!on) {
			t.Errorf("botd stealth=%v: bot = %v, want %v", on, bot, !on)
		}
	}
}
