package stealth

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// TestServiceWorker loads a page that registers a service worker, and compares the worker's
// navigator with the page's, both as the worker's script read it when it started and when the
// page asked. With stealth on (the stealthy browser, with a user agent and a language that the
// launch flags do not give): in two tabs of one browser context at once, which share the worker.
// A tab of the stealthy browser without Install (opened first, in a context of its own) must
// still get an answer from its service worker: with waitForDebuggerOnStart, Chromium pauses every
// service worker that starts in the browser. With stealth off (the plain browser) the worker
// shows headless Chromium.
func TestServiceWorker(t *testing.T) {
	t.Parallel()
	logs := &testenv.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() || *verbose {
			t.Logf("stealth logs:\n%s", logs.String())
		}
	})
	custom := &Options{UserAgent: windowsUA, Locale: "de-DE", Logger: debugLogger(logs)}
	const path = "/testdata/surfaces/serviceworker.html"
	bare, cancel0, err := openTab(stealthy, false, nil, chromedp.WithNewBrowserContext())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel0)
	// Two tabs of one new browser context, opened before either loads.
	ctx1, cancel1, err := openTab(stealthy, true, custom, chromedp.WithNewBrowserContext())
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2, err := openTab(stealthy, true, custom, chromedp.WithExistingBrowserContext(chromedp.FromContext(ctx1).BrowserContextID))
	if err != nil {
		cancel1()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel2(); cancel1() }) // disposing of the context closes its tabs: the second first
	var (
		wg     sync.WaitGroup
		res    [3]map[string]any
		errs   [3]error
		off    []map[string]any
		cancel []context.CancelFunc
		oerr   error
	)
	for i, ctx := range []context.Context{ctx1, ctx2, bare} {
		wg.Go(func() { res[i], errs[i] = loadResult(ctx, path, "result") })
	}
	wg.Go(func() {
		off, cancel, oerr = runLoads(load{b: plain, path: path, global: "result", copts: []chromedp.ContextOption{chromedp.WithNewBrowserContext()}})
	})
	wg.Wait()
	t.Cleanup(func() { closeAll(cancel) })
	for _, err := range append(errs[:], oerr) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if *verbose {
		t.Logf("stealth on: %s\nstealth on, second tab: %s\nno Install: %s\nstealth off: %s", jsonOf(res[0]), jsonOf(res[1]), jsonOf(res[2]), jsonOf(off[0]))
	}
	for i, r := range res[:2] {
		page, sw := get(r, "page"), get(r, "sw")
		for _, k := range []string{"userAgent", "appVersion", "platform", "language", "languages", "uaData"} {
			if jsonOf(get(sw, k)) != jsonOf(get(page, k)) {
				t.Errorf("tab %d: service worker %s = %s, page %s", i+1, k, jsonOf(get(sw, k)), jsonOf(get(page, k)))
			}
		}
		for _, k := range []string{"userAgent", "appVersion", "platform", "languages"} {
			if jsonOf(get(sw, "atStart", k)) != jsonOf(get(page, k)) {
				t.Errorf("tab %d: service worker %s at its start = %s, page %s", i+1, k, jsonOf(get(sw, "atStart", k)), jsonOf(get(page, k)))
			}
		}
		if str(sw, "userAgent") != windowsUA || str(sw, "platform") != "Win32" || str(sw, "atStart", "platform") != "Win32" ||
			jsonOf(get(sw, "languages")) != `["de-DE","de"]` {
			t.Errorf("tab %d: service worker %s, want the configured Windows user agent and German", i+1, jsonOf(sw))
		}
	}
	if sw := get(res[2], "sw"); str(sw, "userAgent") == "" || strings.Contains(jsonOf(sw), "Headless") {
		t.Errorf("stealthy browser, tab without Install: service worker %s, want an answer without Headless", jsonOf(sw))
	}
	if sw := get(off[0], "sw"); !strings.Contains(str(sw, "userAgent"), "HeadlessChrome") || !strings.Contains(str(sw, "atStart", "userAgent"), "HeadlessChrome") {
		t.Errorf("stealth off: service worker %s, want HeadlessChrome", jsonOf(sw))
	}
}
