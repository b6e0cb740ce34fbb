package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoScript runs scripts/demo.sh on its bundled page (PAGES empty),
// as `make demo` does on a clone without ../shared: it exits 0, says which
// page it ran on, sends the page's form, extracts the article and writes
// the screenshot.
func TestDemoScript(t *testing.T) {
	e, marker := browserEnv(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs("../../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := filepath.Abs("../../scripts/demo/index.html")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script)
	cmd.Dir = dir
	// e.vars carries the marker in TABPILOT_BROWSER_ARGS, which the script
	// keeps (it adds its resolver rule after it).
	cmd.Env = append(e.vars, "BIN="+bin, "PAGES=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	for _, want := range []string{
		"demo page: the bundled page " + page + " (PAGES is empty)\n",
		`"answer": "Thanks, Ada! Morning briefing will come to ada@example.org every morning at seven, with news of events at the mill."`,
		`"readers": "2,418"`,
		"\n# The tide mill turns again\n",
		"\n## How a tide mill works\n",
		`Closed tab "main"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo.sh output lacks %q:\n%s", want, out)
		}
	}
	if first, _, _ := strings.Cut(string(out), "\n"); !strings.HasPrefix(first, "demo page: ") {
		t.Errorf("demo.sh's first line is %q, want it to name the page", first)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "demo-screenshot.png")); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("demo-screenshot.png: %v, %d bytes", err, len(b))
	}
	checkNoBrowser(t, marker)
}
