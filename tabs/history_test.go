package tabs_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

func TestHistoryBackForwardReload(t *testing.T) {
	// Back, Forward and Reload return once the page they land on has
	// loaded (each page waits 300ms for its image), through entries of another
	// document and of the same one (history.pushState), and fail with
	// bad_request past either end of the history. Every page sets a cookie,
	// so that no page of this test is restored from the back/forward cache:
	// Chromium keeps a Cache-Control: no-store page there only while the
	// cookies of its URL stay unchanged (the reasons
	// CacheControlNoStoreCookieModified of Page.backForwardCacheNotUsed);
	// TestBackForwardCacheRestore covers a restore.
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/img":
			time.Sleep(300 * time.Millisecond)
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Type", "image/svg+xml")
			fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`)
		default:
			w.Header().Set("Cache-Control", "no-store")
			http.SetCookie(w, &http.Cookie{Name: "visit", Value: fmt.Sprint(time.Now().UnixNano()), Path: "/"})
			fmt.Fprintf(w, `<!doctype html><title>%s</title><img src="/img?%d">`, strings.TrimPrefix(r.URL.Path, "/"), time.Now().UnixNano())
		}
	}))
	defer hs.Close()
	tab := open(t, "/next")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		for _, p := range []string{"/a", "/b"} {
			if _, err := tb.Goto(ctx, hs.URL+p, "load"); err != nil {
				return err
			}
		}
		state := func() string {
			raw, err := tb.Evaluate(ctx, "document.readyState + ' ' + location.pathname", nil)
			if err != nil {
				t.Fatal(err)
			}
			return strings.Trim(string(raw), `"`)
		}
		start := time.Now()
		r, err := tb.Back(ctx)
		if err != nil {
			return fmt.Errorf("back: %w", err)
		}
		if got := state(); r.URL != hs.URL+"/a" || r.Status != 200 || got != "complete /a" || time.Since(start) < 250*time.Millisecond {
			t.Errorf("back: %+v, page %q after %v; want /a, 200, complete after its image", r, got, time.Since(start))
		}
		if r, err := tb.Forward(ctx); err != nil || r.URL != hs.URL+"/b" || state() != "complete /b" {
			t.Errorf("forward: %+v, %v, page %q", r, err, state())
		}
		if _, err := tb.Forward(ctx); errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "no later page") {
			t.Errorf("forward at the end: %v", err)
		}
		// An entry of the same document.
		if _, err := tb.Evaluate(ctx, "history.pushState({}, '', '/b2'); window.mark = 'kept'", nil); err != nil {
			return err
		}
		if r, err := tb.Back(ctx); err != nil || r.URL != hs.URL+"/b" || r.Status != 0 {
			t.Errorf("back within the document: %+v, %v", r, err)
		}
		if raw, _ := tb.Evaluate(ctx, "window.mark", nil); string(raw) != `"kept"` {
			t.Errorf("back within the document left it: mark %s", raw)
		}
		start = time.Now()
		if r, err := tb.Reload(ctx); err != nil || r.URL != hs.URL+"/b" || r.Status != 200 || state() != "complete /b" || time.Since(start) < 250*time.Millisecond {
			t.Errorf("reload: %+v, %v, page %q after %v", r, err, state(), time.Since(start))
		}
		if raw, _ := tb.Evaluate(ctx, "String(window.mark)", nil); string(raw) != `"undefined"` {
			t.Errorf("reload kept the old document: mark %s", raw)
		}
		// Back to the tab's first page (/next, from open), and no further:
		// not to the blank page the tab started on.
		backs := 0
		for range 6 {
			if _, err = tb.Back(ctx); err != nil {
				break
			}
			backs++
		}
		if errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "no earlier page") {
			t.Errorf("back past the start: %v", err)
		}
		if got := state(); backs != 2 || !strings.HasSuffix(got, " /next") {
			t.Errorf("back past the start: %d steps back, on %q; want 2, on the tab's first page /next", backs, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHistoryOntoAPageThatNeverLoads: back and reload onto a page whose
// image never answers return after the load wait of an action that
// navigates (5 s) with a note and the page as it is, not after the whole
// timeout.
func TestHistoryOntoAPageThatNeverLoads(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.SetCookie(w, &http.Cookie{Name: "visit", Value: fmt.Sprint(time.Now().UnixNano()), Path: "/"})
		switch r.URL.Path {
		case "/hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/h":
			fmt.Fprint(w, `<!doctype html><title>Hanging image</title><h1>Text is here</h1><img src="/hang">`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Other</title><h1>Other</h1>`)
		}
	}))
	defer hs.Close()
	defer close(release) // before hs.Close, which waits for the handlers
	tab := open(t, "/next")
	err := sup.Run(context.Background(), tab.Name(), 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Goto(ctx, hs.URL+"/h", "domcontentloaded"); err != nil {
			return err
		}
		if _, err := tb.Goto(ctx, hs.URL+"/a", "load"); err != nil {
			return err
		}
		for _, step := range []struct {
			what string
			do   func(context.Context) (*tabs.NavResult, error)
		}{{"back", tb.Back}, {"reload", tb.Reload}} {
			start := time.Now()
			r, err := step.do(ctx)
			took := time.Since(start)
			if err != nil || r.URL != hs.URL+"/h" || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "had not fired load within 5s") || took < 4500*time.Millisecond || took > 9*time.Second {
				t.Errorf("%s onto a page that never loads: %+v, %v after %v; want /h with a note after about 5 s", step.what, r, err, took)
			}
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
}
