package render_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The render package does no CDP work; its tests start one headless Chromium,
// lazily, for the tests and benchmarks that need a real page (the capture
// benchmark and the live-page Readability suite). TestMain stops it.

var chromePath = flag.String("chrome", "", "Chromium executable for the browser tests (default: /usr/bin/chromium, else chromium on PATH)")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	stopBrowser()
	os.Exit(code)
}

type testBrowser struct {
	ctx         context.Context // the browser's chromedp context; tabs derive from it
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	profile     string
	err         error
	skip        string
}

var (
	browserMu sync.Mutex
	browser   *testBrowser
)

func findChrome() string {
	if *chromePath != "" {
		return *chromePath
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startBrowser launches the package's Chromium on first use.
func startBrowser() *testBrowser {
	browserMu.Lock()
	defer browserMu.Unlock()
	if browser != nil {
		return browser
	}
	b := &testBrowser{}
	browser = b
	exe := findChrome()
	if exe == "" {
		b.skip = "no Chromium found (install it with apt-get install chromium, or pass -chrome)"
		return b
	}
	profile, err := os.MkdirTemp("", "tabpilot-render-test-*")
	if err != nil {
		b.err = err
		return b
	}
	b.profile = profile
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1365, 768),
	)
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b.ctx, b.cancel, b.allocCancel = ctx, cancel, allocCancel
	// The first Run starts the browser and binds its lifetime: no deadline.
	if err := chromedp.Do(ctx); err != nil {
		b.err = fmt.Errorf("start %s: %w", exe, err)
	}
	return b
}

// stopBrowser closes the browser, waits for its process and removes its
// profile.
func stopBrowser() {
	browserMu.Lock()
	defer browserMu.Unlock()
	if browser == nil || browser.cancel == nil {
		return
	}
	// Close the browser gracefully (Browser.close), waiting up to 10s, then
	// cancel the allocator, which kills a process still there and waits.
	tctx, tcancel := context.WithTimeout(browser.ctx, 10*time.Second)
	_ = chromedp.Cancel(tctx)
	tcancel()
	browser.cancel()
	browser.allocCancel()
	if browser.profile != "" {
		_ = os.RemoveAll(browser.profile)
	}
	browser = nil
}

// newTab opens a fresh tab in the package's browser; it closes when the test
// ends. It skips the test when no Chromium is installed.
func newTab(tb testing.TB) context.Context {
	tb.Helper()
	b := startBrowser()
	if b.skip != "" {
		tb.Skip(b.skip)
	}
	if b.err != nil {
		tb.Fatal(b.err)
	}
	ctx, cancel := chromedp.NewContext(b.ctx)
	if err := chromedp.Do(ctx); err != nil { // creates the target; no deadline
		cancel()
		tb.Fatalf("new tab: %v", err)
	}
	// Dismiss JavaScript dialogs (some test pages call alert), as the
	// `dialogs: dismiss` policy does; an open dialog blocks the load event.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (cdp.Empty, error) {
				return cdp.Call(ctx, t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			})
		}
	})
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return ctx
}

func ptr[T any](v T) *T { return &v }

// blockRemote makes every request of the tab to a host other than 127.0.0.1
// fail at once (Network.setBlockedURLs), instead of waiting on the resolver
// rules: the saved pages name dozens of third-party hosts, and their
// iframes' error pages alone take seconds to load on a busy machine. The
// page sees a failed request either way.
func blockRemote(ctx context.Context) error {
	return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: []*network.BlockPattern{
			{URLPattern: "*://127.0.0.1:*/*", Block: false},
			{URLPattern: "*://*:*/*", Block: true},
		}})
		return err
	}))
}

// capture runs CDP Page.captureScreenshot with the given parameters.
func capture(ctx context.Context, p page.CaptureScreenshotParams) ([]byte, error) {
	return chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		r, err := cdp.Call(ctx, t, page.CaptureScreenshot, p)
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	})
}

// contentSize is the page's scrollable size in CSS px (Page.getLayoutMetrics).
func contentSize(ctx context.Context) (float64, float64, error) {
	m, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (page.GetLayoutMetricsResult, error) {
		return cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
	})
	if err != nil {
		return 0, 0, err
	}
	if m.CSSContentSize == nil {
		return 0, 0, fmt.Errorf("getLayoutMetrics: no cssContentSize")
	}
	return m.CSSContentSize.Width, m.CSSContentSize.Height, nil
}
