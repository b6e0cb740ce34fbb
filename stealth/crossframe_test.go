package stealth

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// crossOrigin is the test server under another site than server.URL (localhost, not 127.0.0.1):
// an iframe from it is out of process under site isolation.
func crossOrigin() string { return strings.Replace(server.URL, "127.0.0.1", "localhost", 1) }

// frameLoad is a load whose tab is kept, so that the test can look at its targets.
type frameLoad struct {
	load
	ctx context.Context
	res map[string]any
	err error
}

// runFrameLoads runs the loads concurrently, each in a tab of its own that closes with the test.
func runFrameLoads(t *testing.T, ls ...*frameLoad) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var cancels []context.CancelFunc
	t.Cleanup(func() { closeAll(cancels) })
	for _, l := range ls {
		wg.Go(func() {
			ctx, cancel, err := openTab(l.b, l.on, l.o, l.copts...)
			if err != nil {
				l.err = err
				return
			}
			mu.Lock()
			cancels = append(cancels, cancel)
			mu.Unlock()
			l.ctx = ctx
			l.res, l.err = loadResult(ctx, l.path, l.global)
		})
	}
	wg.Wait()
	for _, l := range ls {
		if l.err != nil {
			t.Fatal(l.err)
		}
	}
}

// checkOOPIF checks that the tab of ctx has an out-of-process iframe target from origin whose
// parent is the tab's top frame: the frame under test really is cross-site and out of process.
func checkOOPIF(t *testing.T, ctx context.Context, origin string) {
	t.Helper()
	res, err := chromedp.CallBrowser(ctx, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		t.Fatalf("Target.getTargets: %v", err)
	}
	top := chromedp.FromContext(ctx).Target.TargetID
	var seen []string
	for _, ti := range res.TargetInfos {
		if ti.Type == "iframe" && strings.HasPrefix(ti.URL, origin+"/") && ti.ParentFrameID == cdp.FrameID(top) {
			return
		}
		seen = append(seen, ti.Type+" "+ti.URL)
	}
	t.Errorf("no iframe target from %s under the tab; targets: %s", origin, strings.Join(seen, "; "))
}

// frameDiffs lists the keys on which the frame's surfaces differ from the top page's.
func frameDiffs(res map[string]any) []string {
	top, frame := get(res, "top"), get(res, "frame")
	tm, _ := top.(map[string]any)
	var keys []string
	for k := range tm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var diffs []string
	for _, k := range keys {
		if k == "hasFocus" { // the top document has the focus, its iframes have not (TestCrossSiteIframe)
			continue
		}
		if a, b := jsonOf(get(top, k)), jsonOf(get(frame, k)); a != b {
			diffs = append(diffs, fmt.Sprintf("%s: top %s, frame %s", k, a, b))
		}
	}
	if _, ok := frame.(map[string]any); !ok {
		diffs = append(diffs, "frame: "+jsonOf(frame))
	}
	return diffs
}

// windowsUA is a user agent that neither test browser has of its own: only the patches give it
// to a frame.
const windowsUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"

// TestCrossSiteIframe loads a page on 127.0.0.1 that embeds itself from localhost (another site:
// an out-of-process iframe, which Target.getTargets must list as an "iframe" target), and compares
// the surfaces that both documents read. With stealth on they must be equal, with the default
// options and with options that the launch flags do not give (a Windows user agent, German, Tokyo,
// 6 cores: only the patches can give them to the frame). With stealth off, the frame must show
// headless Chromium.
func TestCrossSiteIframe(t *testing.T) {
	t.Parallel()
	origin := crossOrigin()
	path := "/docheaders/surfaces/crossframe.html?cross=" + origin
	logs := &testenv.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() || *verbose {
			t.Logf("stealth logs:\n%s", logs.String())
		}
	})
	custom := &Options{UserAgent: windowsUA, Locale: "de-DE", TimeZone: "Asia/Tokyo", HardwareConcurrency: 6, Logger: debugLogger(logs)}
	own := []chromedp.ContextOption{chromedp.WithNewBrowserContext()}
	ls := []*frameLoad{
		{load: load{b: stealthy, on: true, o: custom, path: path, global: "result", copts: own}},
		{load: load{b: stealthy, on: true, path: path, global: "result", copts: own}},
		{load: load{b: plain, path: path, global: "result"}},
	}
	runFrameLoads(t, ls...)
	for _, l := range ls {
		checkOOPIF(t, l.ctx, origin)
		if *verbose {
			t.Logf("%s stealth=%v options %+v: %s", l.b.name, l.on, l.o, jsonOf(l.res))
		}
	}
	for i, l := range ls[:2] {
		name := []string{"custom options", "default options"}[i]
		if d := frameDiffs(l.res); len(d) > 0 {
			t.Errorf("%s: the cross-site iframe differs from its page on %d points:\n%s", name, len(d), strings.Join(d, "\n"))
		}
		frame := get(l.res, "frame")
		if s := jsonOf(frame); strings.Contains(s, "Headless") {
			t.Errorf("%s: the cross-site iframe shows Headless: %s", name, s)
		}
		if get(frame, "webdriver") != false || str(frame, "chrome", "loadTimes") != "function" || num(frame, "plugins", "length") != 5 ||
			len(get(frame, "native", "nonNative").([]any)) != 0 || str(frame, "webgl", "unmaskedRenderer") != DefaultWebGLRenderer {
			t.Errorf("%s: frame %s", name, jsonOf(frame))
		}
		if get(frame, "hasFocus") != false || get(l.res, "top", "hasFocus") != true {
			t.Errorf("%s: hasFocus top %v, frame %v; want true, false as in a person's browser",
				name, get(l.res, "top", "hasFocus"), get(frame, "hasFocus"))
		}
	}
	frame := get(ls[0].res, "frame")
	if str(frame, "userAgent") != windowsUA || str(frame, "platform") != "Win32" || str(frame, "uaData", "platform") != "Windows" ||
		jsonOf(get(frame, "languages")) != `["de-DE","de"]` || str(frame, "intl", "timeZone") != "Asia/Tokyo" ||
		num(frame, "hardwareConcurrency") != 6 || str(frame, "docHeaders", "userAgent") != windowsUA ||
		str(frame, "headers", "userAgent") != windowsUA || str(frame, "worker", "userAgent") != windowsUA || str(frame, "worker", "platform") != "Win32" ||
		str(frame, "worker", "intl", "timeZone") != "Asia/Tokyo" {
		t.Errorf("custom options: frame %s", jsonOf(frame))
	}
	off := get(ls[2].res, "frame")
	if !strings.Contains(str(off, "userAgent"), "HeadlessChrome") || get(off, "webdriver") != true ||
		!strings.Contains(str(off, "headers", "userAgent"), "HeadlessChrome") {
		t.Errorf("stealth off: frame %s, want headless Chromium's values", jsonOf(off))
	}
}

// debugLogger logs every level to w.
func debugLogger(w *testenv.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
