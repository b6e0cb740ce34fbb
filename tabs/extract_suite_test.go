package tabs_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/render"
	"github.com/tabpilot/tabpilot/render/readabilitysuite"
	"github.com/tabpilot/tabpilot/tabs"
)

var suiteReport = flag.String("suite.report", "", "write the live extraction report (markdown) to this file")

// TestExtractSuite opens each of Readability's 104 test pages in Chromium
// and scores tab.extract (the rendered DOM, shadow roots flattened, through
// render.Extract) against the expected content and metadata, as the static
// run in package render does for the saved HTML. The thresholds are the
// issue's: title right on 99% of pages, byline and excerpt on 97%, mean
// word F1 0.98, no page more than 0.05 below its static score.
func TestExtractSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: opens 104 pages")
	}
	dir := testenv.PagesDir()
	if dir == "" {
		t.Skip("../shared/pages/readability not found")
	}
	pages, err := readabilitysuite.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	static := make([]readabilitysuite.Result, len(pages))
	for i, p := range pages {
		ex, err := render.Extract(string(p.Source), readabilitysuite.PageURL, render.FormatText)
		if err != nil {
			t.Fatalf("%s: static: %v", p.Name, err)
		}
		static[i] = readabilitysuite.Score(p, ex)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	s := tabs.NewSupervisor(&tabs.Options{Browser: browser.Options{Args: testenv.BrowserArgs}, NetworkIdleMax: time.Second})
	defer s.Shutdown(context.Background())
	const workers = 2
	live := make([]readabilitysuite.Result, len(pages))
	errs := make([]error, len(pages))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range workers {
		name := fmt.Sprintf("suite%d", w)
		if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, Dialogs: "dismiss"}); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := range next {
				url := srv.URL + "/" + pages[i].Name + "/source.html"
				var ex *render.Extraction
				errs[i] = s.Run(context.Background(), name, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
					lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
					_, err := tb.Goto(lctx, url, "load")
					cancel()
					if err != nil && errcode.Of(err) != errcode.Timeout {
						return err
					}
					ex, err = tb.Extract(ctx, "text")
					return err
				}))
				if errs[i] == nil {
					live[i] = readabilitysuite.Score(pages[i], ex)
				}
			}
		})
	}
	for i := range pages {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", pages[i].Name, err)
		}
	}
	sum := readabilitysuite.Summarize(live)
	if sum.TitleShare < 0.99 || sum.BylineShare < 0.97 || sum.ExcerptShare < 0.97 || sum.MeanF1 < 0.98 {
		t.Errorf("live: title %.1f%%, byline %.1f%%, excerpt %.1f%%, mean F1 %.4f; want 99/97/97%% and 0.98",
			100*sum.TitleShare, 100*sum.BylineShare, 100*sum.ExcerptShare, sum.MeanF1)
	}
	for i := range live {
		if errs[i] == nil && live[i].F1 < static[i].F1-0.05 {
			t.Errorf("%s: live F1 %.3f is more than 0.05 below the static %.3f", pages[i].Name, live[i].F1, static[i].F1)
		}
	}
	t.Logf("live: title %.1f%%, byline %.1f%%, excerpt %.1f%%, mean F1 %.4f", 100*sum.TitleShare, 100*sum.BylineShare, 100*sum.ExcerptShare, sum.MeanF1)
	if *suiteReport != "" {
		f, err := os.Create(*suiteReport)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		readabilitysuite.WriteTable(f, []string{"static HTML (render.Extract)", "live page (tab.extract in Chromium)"},
			[]readabilitysuite.Summary{readabilitysuite.Summarize(static), sum})
		fmt.Fprintln(f)
		readabilitysuite.WriteShortfalls(f, pages, live, 0.95)
	}
}
