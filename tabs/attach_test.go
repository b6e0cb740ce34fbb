package tabs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// userBrowser is a second headless Chromium with a CDP port, standing for
// a browser a person runs: tabpilot attaches to it with a CDP URL.
type userBrowser struct {
	endpoint string
}

func newUserBrowser(t *testing.T, first string) *userBrowser {
	t.Helper()
	app := newTestApp(t)
	port := freePort(t)
	cmd := exec.Command(app.path, fmt.Sprintf("--remote-debugging-port=%d", port), "--remote-debugging-address=127.0.0.1", first)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	b := &userBrowser{endpoint: fmt.Sprintf("http://127.0.0.1:%d", port)}
	waitCDP(t, b.endpoint)
	return b
}

// page is one entry of /json/list.
type userPage struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

// newPage opens a page in the user's browser (PUT /json/new), as a person
// opening a tab, and returns its target id.
func (b *userBrowser) newPage(t *testing.T, u string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, b.endpoint+"/json/new?"+url.QueryEscape(u), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p userPage
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p.ID
}

func (b *userBrowser) pages(t *testing.T) []userPage {
	t.Helper()
	resp, err := http.Get(b.endpoint + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l []userPage
	json.NewDecoder(resp.Body).Decode(&l)
	var out []userPage
	for _, p := range l {
		if p.Type == "page" {
			out = append(out, p)
		}
	}
	return out
}

// waitTitle waits (up to 10 s) until the user's browser lists a page with
// the title.
func (b *userBrowser) waitTitle(t *testing.T, title string) {
	t.Helper()
	for range 200 {
		for _, p := range b.pages(t) {
			if p.Title == title {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no page titled %q in %+v", title, b.pages(t))
}

// Attached to a browser a person runs: tabs lists the pages no tab holds,
// with their target ids, and open --target adopts one by id; a page an
// alert holds is refused at once, not after the open's timeout; a click in
// a page in the background (hidden) is verified as in the foreground, and
// its reload settles without running out (it renders no frames); and
// an open with a URL opens a page of its own, leaving the user's pages as
// they are.
func TestAttachedBrowserPages(t *testing.T) {
	t.Parallel()
	ls := lifeServer(t)
	ub := newUserBrowser(t, ls.URL+"/life/unsaved")
	clicks := ub.newPage(t, ls.URL+"/life/clicks")
	held := ub.newPage(t, ls.URL+"/life/alert") // the active page, with an alert open
	ub.waitTitle(t, "Alert")
	ub.waitTitle(t, "Unsaved") // its title can come after the other pages'
	time.Sleep(300 * time.Millisecond)
	var unsaved string
	for _, p := range ub.pages(t) {
		if p.Title == "Unsaved" {
			unsaved = p.ID
		}
	}
	s := newSup(t)
	ctx := context.Background()

	res, err := s.Open(ctx, tabs.OpenOptions{Name: "clicks", App: &tabs.App{CDPURL: ub.endpoint, Target: clicks}})
	if err != nil {
		t.Fatalf("open --target %s: %v", clicks, err)
	}
	if res.Browser != "connected" || res.Title != "Clicks" {
		t.Fatalf("open = %+v", res)
	}
	tab, _ := s.Tab("clicks")
	if v := evalIn(t, s, tab, "document.visibilityState"); v != `"hidden"` {
		t.Fatalf("the page is %s, want a background (hidden) page", v)
	}
	start := time.Now()
	err = s.Run(ctx, "clicks", 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tabs.Target{Selector: "#b"})
		return err
	}))
	if err != nil {
		t.Fatalf("click in the background page: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the click took %v", d)
	}
	if v := evalIn(t, s, tab, "document.getElementById('b').textContent + ' ' + document.visibilityState"); v != `"clicked 1 hidden"` {
		t.Fatalf("after the click: %s, want one click and the page left in the background", v)
	}
	// The settled wait in a background page, which renders no frames:
	// counted from load, with no note that it ran out.
	err = s.Run(ctx, "clicks", 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		r, err := tb.Reload(ctx)
		if err == nil && len(r.Notes) != 0 {
			t.Errorf("reload of the background page: notes %q, want none", r.Notes)
		}
		return err
	}))
	if err != nil {
		t.Fatalf("reload of the background page: %v", err)
	}
	if v := evalIn(t, s, tab, "document.getElementById('b').textContent + ' ' + document.visibilityState"); v != `"Count hidden"` {
		t.Fatalf("after the reload: %s, want the page reloaded in the background", v)
	}

	list := s.Tabs(ctx)
	got := map[string]tabs.TabInfo{}
	for _, ti := range list {
		got[ti.TargetID] = ti
	}
	if ti := got[clicks]; ti.Name != "clicks" || !ti.Adopted {
		t.Errorf("the adopted page: %+v", ti)
	}
	for _, id := range []string{unsaved, held} {
		if ti, ok := got[id]; !ok || ti.Adopted || ti.Name != "" || ti.Browser != "connected" {
			t.Errorf("page %s: %+v, want it listed as not adopted (tabs: %+v)", id, ti, list)
		}
	}
	if got[unsaved].Title != "Unsaved" {
		t.Errorf("unadopted page: %+v", got[unsaved])
	}

	start = time.Now()
	_, err = s.Open(ctx, tabs.OpenOptions{Name: "held", App: &tabs.App{CDPURL: ub.endpoint, Target: held}})
	var te *tabs.Error
	if !errors.As(err, &te) || te.Code != errcode.NotActionable || !strings.Contains(te.Msg, "blocked") || !strings.Contains(te.Msg, held) || !strings.Contains(te.Hint, "--target") {
		t.Fatalf("open on the page an alert holds: %#v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v", d)
	}

	res, err = s.Open(ctx, tabs.OpenOptions{Name: "mine", App: &tabs.App{CDPURL: ub.endpoint}, URL: ls.URL + "/life/away", WaitUntil: "load"})
	if err != nil {
		t.Fatalf("open with a URL: %v", err)
	}
	if res.Title != "Away" {
		t.Fatalf("open with a URL = %+v", res)
	}
	byID := map[string]string{}
	for _, p := range ub.pages(t) {
		byID[p.ID] = p.URL
	}
	if len(byID) != 4 || byID[unsaved] != ls.URL+"/life/unsaved" || byID[clicks] != ls.URL+"/life/clicks" || byID[held] != ls.URL+"/life/alert" {
		t.Errorf("the user's pages after an open with a URL: %v, want them as they were and one more", byID)
	}
	if _, err := s.Close(ctx, "", true, 0); err != nil {
		t.Fatal(err)
	}
	if n := len(ub.pages(t)); n != 3 {
		t.Errorf("after close: %d pages, want the user's 3 (tabpilot's own closed)", n)
	}
}

// evalIn evaluates expr on a tab of supervisor s and returns the raw JSON.
func evalIn(t *testing.T, s *tabs.Supervisor, tab *tabs.Tab, expr string) string {
	t.Helper()
	var out string
	err := s.Run(context.Background(), tab.Name(), 10*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		raw, err := tb.Evaluate(ctx, expr, nil)
		out = string(raw)
		return err
	}))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return out
}
