package tabs_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/tabs"
)

const unsavedPage = `<!doctype html><title>Unsaved</title>
<label>Note <input id=note></label>
<button id=touch onclick="this.textContent = 'touched'">Touch</button>
<button id=again onclick="this.textContent = 'again ' + (++window.n || (window.n = 1))">Again</button>
<a id=leave href="/life/away">Leave</a>
<script>addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'unsaved'; });</script>`

// lifeServer serves the pages of the tab life-cycle tests.
func lifeServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/life/unsaved", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, unsavedPage) })
	mux.HandleFunc("/life/away", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Away</title><p>gone</p>`)
	})
	mux.HandleFunc("/life/alert", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Alert</title><script>setTimeout(() => alert('held'), 50)</script>`)
	})
	mux.HandleFunc("/life/clicks", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Clicks</title><button id=b onclick="this.textContent = 'clicked ' + (++window.n || (window.n = 1))">Count</button>`)
	})
	mux.HandleFunc("/life/links", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Links</title><a id=dl href="/life/report" target=_blank>Report</a> <a id=direct href="/life/report">Same tab</a>`)
	})
	mux.HandleFunc("/life/report", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="q3 report.csv"`)
		fmt.Fprint(w, reportBody)
	})
	done := make(chan struct{})
	mux.HandleFunc("/life/hang", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hang</title><script>fetch('/life/never');</script>`)
	})
	mux.HandleFunc("/life/never", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(func() { close(done); s.Close() })
	return s
}

func openURL(t *testing.T, s *tabs.Supervisor, name, url, dialogs string) *tabs.Tab {
	t.Helper()
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: url, WaitUntil: "load", Dialogs: dialogs}); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { s.Close(context.Background(), name, false, 0) })
	tab, err := s.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// A beforeunload dialog that is dismissed (by the script, or by the tab's
// dismiss policy) ends the navigation it held: the page is observed at
// once, without a loading note, and acted on by number.
func TestDismissedBeforeunloadEndsNavigation(t *testing.T) {
	t.Parallel()
	ls := lifeServer(t)
	for _, policy := range []string{"", "dismiss"} {
		t.Run("policy="+policy, func(t *testing.T) {
			tab := openURL(t, sup, strings.ReplaceAll(t.Name(), "/", "-"), ls.URL+"/life/unsaved", policy)
			err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
				// Chromium asks beforeunload only of a page the user acted on.
				if _, err := tb.Click(ctx, tabs.Target{Selector: "#touch"}); err != nil {
					return err
				}
				res, err := tb.Click(ctx, tabs.Target{Selector: "#leave"})
				if err != nil {
					return err
				}
				if policy == "" {
					if res.Dialog == nil || res.Dialog.Type != "beforeunload" {
						return fmt.Errorf("click on the link: dialog = %+v, want a beforeunload", res.Dialog)
					}
					if err := tb.HandleDialog(ctx, false, nil); err != nil {
						return err
					}
				} else if h := tb.HandledDialogs(); len(h) != 1 || h[0].Type != "beforeunload" || h[0].Handled != "dismissed" {
					return fmt.Errorf("handled = %+v, want one dismissed beforeunload", h)
				}
				start := time.Now()
				obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
				if err != nil {
					return err
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("observe after the dismissed beforeunload took %v", d)
				}
				text := obs.Text()
				if strings.Contains(text, "loading") || strings.Contains(text, "navigat") {
					t.Errorf("observation notes a navigation:\n%s", text)
				}
				id := 0
				for _, e := range obs.Elements {
					if e.Role == "button" && e.Name == "Again" {
						id = e.ID
					}
				}
				if id == 0 {
					return fmt.Errorf("no Again button in\n%s", text)
				}
				cres, err := tb.Click(ctx, tabs.Target{ID: id})
				if err != nil {
					return fmt.Errorf("click by number after the dismissal: %w", err)
				}
				if cres.Navigated || cres.Note != "" {
					t.Errorf("click result = %+v", cres)
				}
				if u := tb.URL(ctx); u != ls.URL+"/life/unsaved" {
					t.Errorf("url = %q", u)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := evalString(t, tab, "document.getElementById('again').textContent"); got != "again 1" {
				t.Fatalf("again = %q", got)
			}
		})
	}
}

// An accepted beforeunload lets the navigation go on.
func TestAcceptedBeforeunloadNavigates(t *testing.T) {
	t.Parallel()
	ls := lifeServer(t)
	tab := openURL(t, sup, t.Name(), ls.URL+"/life/unsaved", "accept")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#touch"}); err != nil {
			return err
		}
		res, err := tb.Click(ctx, tabs.Target{Selector: "#leave"})
		if err != nil {
			return err
		}
		if !res.Navigated {
			t.Errorf("click result = %+v, want navigated", res)
		}
		if h := tb.HandledDialogs(); len(h) != 1 || h[0].Type != "beforeunload" || h[0].Handled != "accepted" {
			t.Errorf("handled = %+v", h)
		}
		if u := tb.URL(ctx); u != ls.URL+"/life/away" {
			t.Errorf("url = %q, want the page the link goes to", u)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

const reportBody = "quarter,total\nq3,42\n"

// A link that downloads through a new tab (target=_blank to an attachment)
// is a download of the tab, under its suggested name, and not a popup that
// could not be attached.
func TestDownloadThroughNewTab(t *testing.T) {
	t.Parallel()
	ls := lifeServer(t)
	tab := openURL(t, sup, t.Name(), ls.URL+"/life/links", "")
	var d *tabs.Download
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		w := tb.WatchDownloads()
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#dl"}); err != nil {
			return err
		}
		var err error
		d, err = w.Wait(ctx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if pops := tab.DrainPopups(time.Second); len(pops) != 0 {
		t.Errorf("popups = %+v, want none: the new tab was a download", pops)
	}
	dir, _ := sup.DownloadDir()
	if d.SuggestedName != "q3 report.csv" || !d.Finished || d.Path != filepath.Join(dir, "q3 report.csv") {
		t.Fatalf("download = %+v (dir %s)", d, dir)
	}
	t.Cleanup(func() { os.Remove(d.Path) })
	if b, err := os.ReadFile(d.Path); err != nil || string(b) != reportBody {
		t.Fatalf("the file: %q %v", b, err)
	}
	if l := tab.Downloads(); len(l) != 1 || l[0].Path != d.Path {
		t.Fatalf("downloads = %+v", l)
	}
}

// A download in a tab of a named browser context lands in the session's
// download directory too (Browser.setDownloadBehavior for that context).
func TestDownloadInContext(t *testing.T) {
	t.Parallel()
	ls := lifeServer(t)
	name := t.Name()
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, Context: "dl", URL: ls.URL + "/life/links", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	var d *tabs.Download
	err := sup.Run(context.Background(), name, 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		w := tb.WatchDownloads()
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#direct"}); err != nil {
			return err
		}
		var err error
		d, err = w.Wait(ctx)
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(d.Path) })
	dir, _ := sup.DownloadDir()
	if !d.Finished || filepath.Dir(d.Path) != dir {
		t.Fatalf("download = %+v, want it finished in %s", d, dir)
	}
	if b, err := os.ReadFile(d.Path); err != nil || string(b) != reportBody {
		t.Fatalf("the file: %q %v", b, err)
	}
}

// The note of an open whose network-idle wait its timeout cut short says
// how long it waited, not the cap it did not reach.
func TestOpenNetworkNoteGivesTheRealBound(t *testing.T) {
	t.Parallel()
	ls := lifeServer(t)
	// The browser is up before the timed open.
	openURL(t, sup, t.Name()+"-warm", ls.URL+"/life/away", "")
	name := t.Name()
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	res, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: ls.URL + "/life/hang", WaitUntil: "networkidle0", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 {
		t.Fatalf("notes = %q", res.Notes)
	}
	note := res.Notes[0]
	if strings.Contains(note, "after 5s") || !strings.Contains(note, "the timeout ended the wait, before its 5s cap") || !strings.Contains(note, ls.URL+"/life/never") {
		t.Fatalf("note = %q, want the time it waited (under 2s), why, and the pending request", note)
	}
}
