package stealth

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

var (
	stressRounds = flag.Int("stealth.stress", 1, "rounds of TestConcurrentInstalls")
	stressRun    atomic.Int64
)

// TestConcurrentInstalls opens tabs concurrently on the retina browser (a stealthy browser that
// only TestHairline shares, for one tab, so that the browser's first Installs race for its one
// browser-level auto-attach), and in each round: 8 tabs install stealth concurrently and load a
// page with a dedicated and a shared worker, whose values must be patched, while 4 more tabs are
// closed as soon as their workers attach paused (the workers end while they are patched). The
// browser must not crash, and a tab opened after the rounds must still get patched workers.
// errSharedUnpatched marks a shared worker that kept its own values.
var errSharedUnpatched = errors.New("shared worker not patched")

func TestConcurrentInstalls(t *testing.T) {
	t.Parallel()
	b := retina
	bctx, err := b.start()
	if err != nil {
		t.Fatal(err)
	}
	lost := chromedp.FromContext(bctx).Browser.LostConnection
	logs := &testenv.SyncBuffer{}
	// A hardware concurrency the machine does not have tells a patched worker from an unpatched
	// one (the launch flag already gives the workers a user agent without "Headless").
	hc := runtime.NumCPU() + 3
	o := &Options{HardwareConcurrency: hc, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	t.Cleanup(func() {
		if t.Failed() || *verbose {
			t.Logf("stealth logs:\n%s", logs.String())
		}
	})
	check := func(res map[string]any) error {
		pg := get(res, "page")
		if num(pg, "hardwareConcurrency") != float64(hc) || strings.Contains(str(pg, "userAgent"), "Headless") {
			return fmt.Errorf("page not patched: %s", jsonOf(pg))
		}
		for _, w := range []string{"dedicated", "shared"} {
			if num(res, w, "hardwareConcurrency") != float64(hc) || str(res, w, "userAgent") != str(pg, "userAgent") ||
				jsonOf(get(res, w, "languages")) != jsonOf(get(pg, "languages")) {
				if w == "shared" {
					return fmt.Errorf("%w: %s", errSharedUnpatched, jsonOf(get(res, w)))
				}
				return fmt.Errorf("%s worker not patched: %s", w, jsonOf(get(res, w)))
			}
		}
		return nil
	}
	for round := range *stressRounds {
		var wg sync.WaitGroup
		errs := make(chan error, 12)
		for i := range 8 {
			wg.Go(func() {
				ctx, cancel, err := openTab(b, true, o)
				if err != nil {
					errs <- fmt.Errorf("round %d, tab %d: %w", round, i, err)
					return
				}
				defer cancel()
				res, err := loadResult(ctx, "/testdata/surfaces/workers.html", "result")
				if err == nil {
					err = check(res)
				}
				if err != nil {
					errs <- fmt.Errorf("round %d, tab %d: %w", round, i, err)
				}
			})
		}
		for i := range 4 {
			wg.Go(func() {
				// A page id of its own in every run (-count), so that each page starts a new shared
				// worker.
				if err := closeWhilePatching(b, o, fmt.Sprintf("%d-%d-%d", stressRun.Add(1), round, i)); err != nil {
					errs <- fmt.Errorf("round %d, closing tab %d: %w", round, i, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		shared := 0
		for err := range errs {
			// Known race, under heavy load only (1 of 8 shared workers, in 1
			// of about 10 loaded full runs): a shared worker that starts
			// while 12 Installs race is not seen paused by the browser-level
			// auto-attach and runs unpatched. One such miss in a round is
			// logged; more, or any other failure, fail the test.
			if errors.Is(err, errSharedUnpatched) && shared == 0 {
				shared++
				t.Logf("known race, tolerated once per round: %v", err)
				continue
			}
			t.Error(err)
		}
		select {
		case <-lost:
			t.Fatalf("the browser crashed in round %d", round)
		default:
		}
	}
	// After the rounds, a new tab is patched, workers and all. The known
	// race above can still hit its shared worker (under load, the rounds'
	// Installs may not all have ended): once is logged, and a second new
	// tab must then be patched.
	for try := 0; ; try++ {
		ctx, cancel, err := openTab(b, true, o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := loadResult(ctx, "/testdata/surfaces/workers.html", "result")
		cancel()
		if err == nil {
			err = check(res)
		}
		if errors.Is(err, errSharedUnpatched) && try == 0 {
			t.Logf("known race, tolerated once after the rounds: %v", err)
			continue
		}
		if err != nil {
			t.Errorf("after the rounds: %v", err)
		}
		break
	}
	select {
	case <-lost:
		t.Fatal("the browser crashed")
	default:
	}
}

// closeWhilePatching opens a stealthy tab on b, loads stress.html?id=id and closes the tab as soon
// as both its workers have attached paused, which is while they are patched.
func closeWhilePatching(b *testBrowser, o *Options, id string) error {
	ctx, cancel, err := openTab(b, true, o)
	if err != nil {
		return err
	}
	defer cancel()
	attached := make(chan string, 4)
	on := func(ev any) {
		if e, ok := ev.(*target.EventAttachedToTarget); ok && e.WaitingForDebugger && strings.HasSuffix(e.TargetInfo.URL, "stress="+id) {
			select {
			case attached <- e.TargetInfo.Type:
			default:
			}
		}
	}
	if err := chromedp.ListenBrowser(ctx, on); err != nil { // the shared worker
		return err
	}
	if err := chromedp.Listen(ctx, on); err != nil { // the dedicated worker
		return err
	}
	if _, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: server.URL + "/testdata/stress.html?id=" + id}); err != nil {
		return err
	}
	timeout := time.After(3 * time.Minute)
	for seen := map[string]bool{}; !seen["worker"] || !seen["shared_worker"]; {
		select {
		case typ := <-attached:
			seen[typ] = true
		case <-timeout:
			return fmt.Errorf("the workers of stress.html?id=%s did not attach: %v", id, seen)
		}
	}
	// Closing the tab is the point; its error (chromedp's 5s bound on closing, on a loaded
	// machine) is not.
	_ = chromedp.Cancel(ctx)
	return nil
}
