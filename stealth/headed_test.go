package stealth

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// hardwareDependent are the fingerprint paths that depend on the machine or on the display
// server rather than on headless versus headed: CPU count and memory, the GPU (in the page and
// in its out-of-process iframe, crossFrame), and focus (a window under Xvfb without a window
// manager never has it, a person's active window does).
// The window's size and place (screen.inner*, outer*, screenX/Y) are the window manager's and the
// person's choice; TestScreen checks that they are consistent with the screen.
var hardwareDependent = regexp.MustCompile(`(hardwareConcurrency|deviceMemory)$|^(crossFrame\.)?webgl\.|^visibility\.hasFocus$|^misc\.historyLength$|^screen\.(inner|outer|screenX|screenY)`)

// startXvfb starts a virtual display and returns its DISPLAY value; it is stopped (by pid) at
// the end of the test.
func startXvfb(t *testing.T) string {
	t.Helper()
	xvfb, err := exec.LookPath("Xvfb")
	if err != nil {
		t.Skip("Xvfb is not installed (apt-get install -y xvfb): no headed Chromium to compare with")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(xvfb, "-displayfd", "3", "-screen", "0", "1920x1080x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
		r.Close()
	}()
	select {
	case d := <-line:
		if d == "" {
			t.Fatal("Xvfb gave no display number")
		}
		return ":" + d
	case <-time.After(20 * time.Second):
		t.Fatal("Xvfb did not start")
	}
	return ""
}

// flatten turns a decoded JSON value into path → JSON text.
func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x, out)
		}
		return
	}
	out[prefix] = jsonOf(v)
}

// TestHeadedComparison loads the fingerprint page in a headed Chromium (under Xvfb, launched as a
// person runs it: no automation flag) and in the stealthy headless one, and requires the same
// value on every point that does not depend on the hardware.
func TestHeadedComparison(t *testing.T) {
	t.Parallel()
	// The headless loads run while Xvfb and the headed Chromium start.
	var (
		headless []map[string]any
		cancels  []context.CancelFunc
		loadErr  error
		loaded   = make(chan struct{})
	)
	go func() {
		defer close(loaded)
		headless, cancels, loadErr = runLoads(load{b: stealthy, on: true, path: "/testdata/fingerprint.html", global: "fp"},
			load{b: plain, path: "/testdata/fingerprint.html", global: "fp"})
	}()
	t.Cleanup(func() {
		<-loaded
		closeAll(cancels)
	})
	display := startXvfb(t)
	opts := append([]chromedp.ExecAllocatorOption(nil), chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts, briefFlags...)
	// A person's Chromium has no remote debugging, which turns navigator.webdriver on; the
	// AutomationControlled flag gives back the value it then shows.
	opts = append(opts, chromedp.Flag("headless", false), chromedp.Flag("enable-automation", false),
		chromedp.Flag("disable-blink-features", "AutomationControlled"),
		chromedp.Flag("hide-scrollbars", false), chromedp.Flag("window-size", "1920,1080"),
		chromedp.Env("DISPLAY="+display))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	hctx, hcancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer hcancel()
	if err := chromedp.Do(hctx); err != nil {
		t.Fatalf("starting headed Chromium: %v", err)
	}
	headed := pageResult(t, hctx, "/testdata/fingerprint.html", "fp")
	<-loaded
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	on, off := headless[0], headless[1]
	hf, nf, ff := map[string]string{}, map[string]string{}, map[string]string{}
	flatten("", headed, hf)
	flatten("", on, nf)
	flatten("", off, ff)
	var paths []string
	for p := range hf {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var diffs, offDiffs []string
	for _, p := range paths {
		if hardwareDependent.MatchString(p) {
			continue
		}
		if nf[p] != hf[p] {
			diffs = append(diffs, fmt.Sprintf("%s: headed %s, stealth %s", p, hf[p], nf[p]))
		}
		if ff[p] != hf[p] {
			offDiffs = append(offDiffs, fmt.Sprintf("%s: headed %s, headless %s", p, hf[p], ff[p]))
		}
	}
	t.Logf("compared %d points; stealth off differs from headed on %d:\n%s", len(paths), len(offDiffs), strings.Join(offDiffs, "\n"))
	if *verbose {
		t.Logf("headed: %s\nstealth on: %s\nstealth off: %s", jsonOf(headed), jsonOf(on), jsonOf(off))
	}
	if len(diffs) > 0 {
		t.Errorf("stealth on differs from headed Chromium on %d points:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
	if len(offDiffs) == 0 {
		t.Error("stealth off reads exactly as headed: the comparison cannot fail")
	}
}
