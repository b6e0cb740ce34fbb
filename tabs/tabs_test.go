package tabs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

var (
	sup *tabs.Supervisor
	srv *httptest.Server
)

const formPage = `<!doctype html><title>Form</title>
<main><h1>Sign in</h1>
<label>Email <input id=email name=email></label>
<label>Password <input id=pw type=password></label>
<button id=go onclick="document.getElementById('out').textContent='clicked '+(++window.n||(window.n=1))">Sign in</button>
<a href="/next">Next page</a>
<div id=out></div></main>`

func TestMain(m *testing.M) {
	mux := http.NewServeMux()
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, formPage) })
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Next</title><button onclick="this.textContent='pressed'">Other</button>`)
	})
	mux.HandleFunc("/animated", func(w http.ResponseWriter, r *http.Request) {
		// The form, on a page whose animation frames keep flowing: a
		// mouse move waits for the next vsync there.
		fmt.Fprint(w, formPage+`<div id=spin></div><script>(function f(t) { spin.textContent = Math.round(t); requestAnimationFrame(f); })(0);</script>`)
	})
	mux.HandleFunc("/alert", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Alert</title><button id=b onclick="document.title = confirm('sure?') ? 'yes' : 'no'">Ask</button>`)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Loop</title><button onclick="while(true){}">Hang</button>`)
	})
	mux.HandleFunc("/toframe", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>To frame</title><a id=go href="/withframe">Go</a>`)
	})
	mux.HandleFunc("/withframe", func(w http.ResponseWriter, r *http.Request) {
		// A slow response: the click returns before the new document
		// commits unless it waits for the navigation it started.
		time.Sleep(400 * time.Millisecond)
		fmt.Fprint(w, `<!doctype html><title>With frame</title><p>outer</p><iframe src="/slowinner"></iframe>`)
	})
	mux.HandleFunc("/toslow", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>To slow</title><a id=go href="/slow">Slow page</a>`)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * time.Second)
		fmt.Fprint(w, `<!doctype html><title>Slow</title><p>at last</p>`)
	})
	mux.HandleFunc("/slowinner", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		fmt.Fprint(w, `<!doctype html><button>Inner</button>`)
	})
	srv = httptest.NewServer(mux)
	base := runtime.NumGoroutine()
	// Generous default timeouts: the test machine has 2 cores shared with
	// other packages' browsers, and an open can take tens of seconds there.
	sup = tabs.NewSupervisor(&tabs.Options{Browser: browser.Options{Args: testenv.BrowserArgs}, Grace: time.Second,
		DefaultTimeout: time.Minute, MaxTimeout: 2 * time.Minute})
	code := m.Run()
	testenv.StopGrid()        // started by the pool tests (pools_test.go), if any ran
	testenv.StopBrowserless() // likewise (browserless_test.go)
	if cookieSrv != nil {
		cookieSrv.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	err := sup.Shutdown(ctx)
	cancel()
	srv.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		code = 1
	}
	time.Sleep(200 * time.Millisecond)
	if left := testenv.ChromiumChildren(os.Getpid()); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "chromium processes left after shutdown:", left)
		code = 1
	}
	if stacks := testenv.WaitGoroutines(base, 2, 5*time.Second); stacks != "" && code == 0 {
		fmt.Fprintln(os.Stderr, "goroutines leaked after shutdown:\n"+stacks)
		code = 1
	}
	os.Exit(code)
}

func open(t *testing.T, path string) *tabs.Tab {
	t.Helper()
	name := strings.ReplaceAll(t.Name(), "/", "-")
	ctx := context.Background()
	if _, err := sup.Open(ctx, tabs.OpenOptions{Name: name, URL: srv.URL + path, WaitUntil: "load"}); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	tab, err := sup.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func run(t *testing.T, tab *tabs.Tab, fn func(ctx context.Context, t *tabs.Tab) error) error {
	return sup.Run(context.Background(), tab.Name(), 10*time.Second, tabs.JobFunc(fn))
}

// clickTarget clicks tg in tab, in a run of run's timeout.
func clickTarget(t *testing.T, tab *tabs.Tab, tg tabs.Target) error {
	t.Helper()
	return run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tg)
		return err
	})
}

func evalString(t *testing.T, tab *tabs.Tab, expr string) string {
	t.Helper()
	var s string
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		raw, err := tb.Evaluate(ctx, expr, nil)
		s = strings.Trim(string(raw), `"`)
		return err
	})
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}

func TestObserveClickByNumber(t *testing.T) {
	t.Parallel()
	tab := open(t, "/form")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
		if err != nil {
			return err
		}
		if obs.Title != "Form" {
			t.Errorf("title = %q", obs.Title)
		}
		btn := 0
		roles := map[string]int{}
		for _, e := range obs.Elements {
			roles[e.Role]++
			if e.Role == "button" && e.Name == "Sign in" {
				btn = e.ID
			}
		}
		if roles["textbox"] != 2 || roles["link"] != 1 || btn == 0 {
			t.Fatalf("elements = %+v", obs.Elements)
		}
		if _, err := tb.Click(ctx, tabs.Target{ID: btn}); err != nil {
			return err
		}
		// Numbers are stable across observations.
		obs2, err := tb.Observe(ctx, tabs.ObserveOptions{})
		if err != nil {
			return err
		}
		for _, e := range obs2.Elements {
			if e.Role == "button" && e.ID != btn {
				t.Errorf("button renumbered %d -> %d", btn, e.ID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab, "document.getElementById('out').textContent"); got != "clicked 1" {
		t.Fatalf("page says %q, want clicked 1", got)
	}
}

func TestTypeFillPress(t *testing.T) {
	t.Parallel()
	tab := open(t, "/form")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Type(ctx, tabs.Target{Selector: "#email"}, "ada@example.com"); err != nil {
			return err
		}
		if _, err := tb.Fill(ctx, tabs.Target{Selector: "#email"}, "bob@example.com"); err != nil {
			return err
		}
		// A label retargets to its control, as in Playwright.
		if _, err := tb.Type(ctx, tabs.Target{Selector: "text/Password"}, "pw"); err != nil {
			return fmt.Errorf("type into the label: %w", err)
		}
		if _, err := tb.Type(ctx, tabs.Target{Selector: "text/Next page"}, "x"); errcode.Of(err) != errcode.NotActionable {
			return fmt.Errorf("typing into a link: %v, want not_actionable", err)
		}
		_, err := tb.Press(ctx, "Tab", nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab, "document.getElementById('email').value"); got != "bob@example.com" {
		t.Fatalf("email = %q", got)
	}
	if got := evalString(t, tab, "document.activeElement.id"); got != "go" {
		t.Fatalf("focus after Tab = %q, want go", got)
	}
}

func TestStaleAfterNavigation(t *testing.T) {
	t.Parallel()
	tab := open(t, "/form")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
		if err != nil {
			return err
		}
		link, btn := 0, 0
		for _, e := range obs.Elements {
			if e.Role == "link" {
				link = e.ID
			}
			if e.Role == "button" {
				btn = e.ID
			}
		}
		res, err := tb.Click(ctx, tabs.Target{ID: link})
		if err != nil {
			return err
		}
		if !res.Navigated {
			// The navigation may land just after the click returns.
			time.Sleep(300 * time.Millisecond)
		}
		_, err = tb.Click(ctx, tabs.Target{ID: btn})
		if errcode.Of(err) != errcode.StaleElement {
			return fmt.Errorf("click on old number after navigation: err = %v, want stale_element", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab, "document.title"); got != "Next" {
		t.Fatalf("title = %q", got)
	}
	if got := evalString(t, tab, "document.querySelector('button').textContent"); got != "Other" {
		t.Fatalf("the new page's button was clicked: %q", got)
	}
}

func TestBusyAndTimeout(t *testing.T) {
	t.Parallel()
	tab := open(t, "/form")
	started := make(chan struct{})
	var wg sync.WaitGroup
	var slowErr error
	wg.Go(func() {
		slowErr = sup.Run(context.Background(), tab.Name(), 1500*time.Millisecond, tabs.JobFunc(func(ctx context.Context, _ *tabs.Tab) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}))
	})
	<-started
	err := run(t, tab, func(context.Context, *tabs.Tab) error { return nil })
	if errcode.Of(err) != errcode.Busy {
		t.Errorf("second run: %v, want busy", err)
	}
	wg.Wait()
	if errcode.Of(slowErr) != errcode.Timeout {
		t.Errorf("slow run: %v, want timeout", slowErr)
	}
	if !tab.Alive() {
		t.Fatalf("tab died after a run that yielded: %s", tab.DeadReason())
	}
	if got := evalString(t, tab, "document.title"); got != "Form" {
		t.Fatalf("title = %q", got)
	}
}

// A run that times out while the page waits for a slow server leaves the
// tab alive (and a click that started the navigation succeeds): Chromium holds the page's commands until the new document
// commits, which is no reason to take the page for hung. The page then
// loads.
func TestTimeoutDuringSlowNavigationKeepsTab(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"click", "goto"} {
		tab := open(t, "/toslow")
		err := sup.Run(context.Background(), tab.Name(), time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			if how == "click" {
				_, err := tb.Click(ctx, tabs.Target{Selector: "#go"})
				return err
			}
			_, err := tb.Goto(ctx, srv.URL+"/slow", "load")
			return err
		}))
		// The click was done and its navigation is on its way: that is
		// what it was asked for, and a retry would click twice. The goto
		// did not get its page in time.
		if how == "click" && err != nil {
			t.Fatalf("click: %v, want success", err)
		}
		if how == "goto" && (errcode.Of(err) != errcode.Timeout || strings.Contains(err.Error(), "killed")) {
			t.Fatalf("goto: %v, want a timeout that leaves the tab", err)
		}
		if !tab.Alive() {
			t.Fatalf("%s: the tab was killed: %s", how, tab.DeadReason())
		}
		title := ""
		for range 100 {
			if title = evalString(t, tab, "document.title"); title == "Slow" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if title != "Slow" {
			t.Fatalf("%s: title %q after the slow page's answer", how, title)
		}
		sup.Close(context.Background(), tab.Name(), false, 0)
	}
}

// An observation made while a navigation that timed out holds the page
// (its server has not answered) fails with the honest error after 5 s of
// waiting for it, not at its own 20 s timeout; an open of another URL
// ends the hold.
func TestObserveHeldByNavigation(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, `<!doctype html><title>ok</title><button>B</button>`)
	}))
	defer hang.Close()
	defer close(release)
	name := t.Name()
	ctx := context.Background()
	if _, err := sup.Open(ctx, tabs.OpenOptions{Name: name, URL: hang.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	defer sup.Close(ctx, name, false, 0)
	if _, err := sup.Open(ctx, tabs.OpenOptions{Name: name, URL: hang.URL + "/hang", Timeout: time.Second}); errcode.Of(err) != errcode.Timeout {
		t.Fatalf("open the hanging page: %v, want a timeout", err)
	}
	t0 := time.Now()
	err := sup.Run(ctx, name, 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Observe(ctx, tabs.ObserveOptions{})
		return err
	}))
	took := time.Since(t0)
	var te *tabs.Error
	if errcode.Of(err) != errcode.Timeout || !errors.As(err, &te) || !regexp.MustCompile(`still navigating to `+regexp.QuoteMeta(hang.URL)+`/hang, which has not answered in \d+s`).MatchString(err.Error()) || te.Hint == "" {
		t.Fatalf("observe while held: %v, want the honest timeout naming the navigation", err)
	}
	if took > 15*time.Second {
		t.Errorf("observe while held took %v, want about 5 s, not its 20 s timeout", took)
	}
	if _, err := sup.Open(ctx, tabs.OpenOptions{Name: name, URL: hang.URL + "/other"}); err != nil {
		t.Fatalf("open another URL after the hold: %v", err)
	}
	tb, err := sup.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	if title := evalString(t, tb, "document.title"); title != "ok" {
		t.Fatalf("title after the reopen = %q", title)
	}
}

// Changing the dialog policy recreates the tab on the page it showed, and
// a tab that was the browser's only one does not take the browser down.
func TestDialogPolicyChangeKeepsPage(t *testing.T) {
	t.Parallel()
	tab := open(t, "/form")
	res, err := sup.Open(context.Background(), tabs.OpenOptions{Name: tab.Name(), Dialogs: "accept", WaitUntil: "load"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(res.URL, "/form") || len(res.Notes) == 0 || !strings.Contains(res.Notes[len(res.Notes)-1], "dialog policy changed") {
		t.Fatalf("open with a new policy: url %q notes %q", res.URL, res.Notes)
	}
	if tab.Alive() {
		t.Fatalf("the old tab is still alive")
	}
	nt, err := sup.Tab(tab.Name())
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, nt, "document.title"); got != "Form" {
		t.Fatalf("title after the policy change: %q", got)
	}
	// An open that names no policy reuses the tab as it is.
	evalString(t, nt, "document.title = 'Kept'")
	res, err = sup.Open(context.Background(), tabs.OpenOptions{Name: tab.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reused || !nt.Alive() || evalString(t, nt, "document.title") != "Kept" {
		t.Fatalf("plain open after a policy: reused %v, alive %v", res.Reused, nt.Alive())
	}
}

// A tab closed under a run ends the run with not_alive, not a timeout.
func TestCloseDuringRun(t *testing.T) {
	t.Parallel()
	tab := open(t, "/form")
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- sup.Run(context.Background(), tab.Name(), 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			close(started)
			_, err := tb.WaitFor(ctx, tabs.Target{Selector: "#never"})
			return err
		}))
	}()
	<-started
	if _, err := sup.Close(context.Background(), tab.Name(), false, 0); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if errcode.Of(err) != errcode.NotAlive || !strings.Contains(err.Error(), "the tab is gone") {
		t.Fatalf("run under a closed tab: %v, want not_alive", err)
	}
}

// A run that the caller cancels while the page loops (an evaluate of a
// while(true)) does not leave a hung tab for the next call: the tab is
// probed and killed at once.
func TestCancelledLoopKillsTab(t *testing.T) {
	t.Parallel()
	tab := open(t, "/loop")
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- sup.Run(ctx, tab.Name(), 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			close(started)
			_, err := tb.Evaluate(ctx, "while (true) {}", nil)
			return err
		}))
	}()
	<-started
	time.Sleep(300 * time.Millisecond) // the evaluate reaches the page
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled run succeeded")
	}
	if tab.Alive() {
		t.Fatal("the looping tab is still alive after the cancelled run")
	}
	if _, err := sup.Tab(tab.Name()); errcode.Of(err) != errcode.NotAlive {
		t.Fatalf("next call: %v, want not_alive", err)
	}
}

type stuck struct{ interrupted chan string }

func (s *stuck) Run(ctx context.Context, _ *tabs.Tab) error { select {} }
func (s *stuck) Interrupt(r string)                         { s.interrupted <- r }

func TestStuckRunKillsTab(t *testing.T) {
	t.Parallel()
	tab := open(t, "/form")
	j := &stuck{interrupted: make(chan string, 1)}
	err := sup.Run(context.Background(), tab.Name(), time.Second, j)
	if errcode.Of(err) != errcode.Timeout || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("err = %v, want timeout with the tab killed", err)
	}
	if r := <-j.interrupted; r != "timeout" {
		t.Fatalf("interrupt reason %q", r)
	}
	if _, err := sup.Tab(tab.Name()); errcode.Of(err) != errcode.NotAlive {
		t.Fatalf("tab after kill: %v, want not_alive", err)
	}
	// Reopening the name works.
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: tab.Name(), URL: srv.URL + "/next", WaitUntil: "load"}); err != nil {
		t.Fatalf("reopen: %v", err)
	}
}

func TestPageLoopKillsTab(t *testing.T) {
	t.Parallel()
	tab := open(t, "/loop")
	err := sup.Run(context.Background(), tab.Name(), 2*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tabs.Target{Selector: "button"})
		return err
	}))
	if errcode.Of(err) != errcode.Timeout {
		t.Fatalf("err = %v, want timeout", err)
	}
	if _, err := sup.Tab(tab.Name()); errcode.Of(err) != errcode.NotAlive {
		t.Fatalf("tab with a hung page: %v, want not_alive", err)
	}
}

func TestNavigationFailed(t *testing.T) {
	t.Parallel()
	name := "navfail"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: srv.URL + "/next", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	_, err = sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: closed, WaitUntil: "load"})
	if errcode.Of(err) != errcode.NavigationFailed || !strings.Contains(err.Error(), "ERR_CONNECTION_REFUSED") {
		t.Fatalf("err = %v, want navigation_failed with net::ERR_CONNECTION_REFUSED", err)
	}
	// The tab list shows the error page, not the title of the page before
	// (Chromium commits the error page shortly after Page.navigate fails).
	var got string
	for i := 0; i < 100; i++ {
		got = ""
		for _, ti := range sup.Tabs(context.Background()) {
			if ti.Name == name && (ti.Title == "Next" || !strings.HasPrefix(ti.URL, "chrome-error:")) {
				got = ti.URL + " " + ti.Title
			}
		}
		if got == "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got != "" {
		t.Errorf("after a failed navigation the tab lists %s", got)
	}
	_, err = sup.Open(context.Background(), tabs.OpenOptions{Name: "bad name"})
	if errcode.Of(err) != errcode.BadRequest {
		t.Fatalf("bad name: %v", err)
	}
	if err := sup.Run(context.Background(), "nosuch", time.Second, tabs.JobFunc(nil)); errcode.Of(err) != errcode.NoSuchTab {
		t.Fatalf("run on missing tab: %v", err)
	}
}

func TestDialogs(t *testing.T) {
	t.Parallel()
	tab := open(t, "/alert")
	// No policy: the click returns promptly with the dialog pending.
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		res, err := tb.Click(ctx, tabs.Target{Selector: "#b"})
		if err != nil {
			return err
		}
		if res.Dialog == nil || res.Dialog.Type != "confirm" || res.Dialog.Message != "sure?" {
			return fmt.Errorf("dialog = %+v", res.Dialog)
		}
		if _, err := tb.Observe(ctx, tabs.ObserveOptions{}); errcode.Of(err) != errcode.NotActionable {
			return fmt.Errorf("observe with a dialog: %v", err)
		}
		// A second click is refused at once, with how to answer the dialog.
		_, err = tb.Click(ctx, tabs.Target{Selector: "#b"})
		var te *tabs.Error
		if !errors.As(err, &te) || te.Code != errcode.NotActionable || !strings.HasPrefix(te.Msg, `a confirm dialog is open ("sure?")`) || !strings.Contains(te.Hint, "tab.acceptDialog") {
			return fmt.Errorf("click with a dialog: %#v", err)
		}
		// So are a navigation and a key press, which would otherwise do
		// nothing and look like success.
		if _, err := tb.Goto(ctx, srv.URL+"/form", "load"); errcode.Of(err) != errcode.NotActionable {
			return fmt.Errorf("goto with a dialog: %v", err)
		}
		if _, err := tb.Press(ctx, "Escape", nil); errcode.Of(err) != errcode.NotActionable {
			return fmt.Errorf("press with a dialog: %v", err)
		}
		// A text is a prompt's answer: a confirm accepted with one is
		// refused (Chromium would drop the text), and stays open.
		text := "yes please"
		if err := tb.HandleDialog(ctx, true, &text); errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "takes no text") {
			return fmt.Errorf("accept a confirm with a text: %v", err)
		}
		if d := tb.PendingDialog(); d == nil || d.Type != "confirm" {
			return fmt.Errorf("after the refused answer, the pending dialog is %+v, want the confirm", d)
		}
		return tb.HandleDialog(ctx, true, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab, "document.title"); got != "yes" {
		t.Fatalf("title = %q", got)
	}
	// Policy dismiss: handled at once.
	name := tab.Name() + "-d"
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: srv.URL + "/alert", WaitUntil: "load", Dialogs: "dismiss"}); err != nil {
		t.Fatal(err)
	}
	defer sup.Close(context.Background(), name, false, 0)
	tab2, _ := sup.Tab(name)
	if err := run(t, tab2, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tabs.Target{Selector: "#b"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab2, "document.title"); got != "no" {
		t.Fatalf("title = %q", got)
	}
	if h := tab2.HandledDialogs(); len(h) != 1 || h[0].Handled != "dismissed" {
		t.Fatalf("handled = %+v", h)
	}
}

// Enter on a link and a click at a point report the navigation they start
// even though nothing after them waits on the page: the action waits for
// the requested navigation (Page.frameRequestedNavigation) to commit.
func TestPressAndClickAtWaitForTheNavigationTheyStart(t *testing.T) {
	t.Parallel()
	tab := open(t, "/toframe")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		res, err := tb.Press(ctx, "Enter", &tabs.Target{Selector: "#go"})
		if err != nil {
			return err
		}
		if !res.Navigated {
			t.Errorf("press did not report the navigation")
		}
		if u := tb.URL(ctx); !strings.HasSuffix(u, "/withframe") {
			t.Errorf("url after press = %q", u)
		}
		if _, err := tb.Goto(ctx, srv.URL+"/toframe", "load"); err != nil {
			return err
		}
		raw, err := tb.Evaluate(ctx, `() => { const r = document.querySelector('#go').getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; }`, nil)
		if err != nil {
			return err
		}
		var box []float64
		if err := json.Unmarshal(raw, &box); err != nil {
			return err
		}
		at, err := tb.ClickAt(ctx, box[0], box[1], 0)
		if err != nil {
			return err
		}
		if !at.Navigated {
			t.Errorf("clickAt did not report the navigation")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A click that starts a navigation reports it even when the server is slow
// to answer, and an observation right after it waits for the new
// document's load, so a frame that loads slowly is in it.
func TestObserveAfterNavigatingClickWaitsForLoad(t *testing.T) {
	t.Parallel()
	tab := open(t, "/toframe")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		res, err := tb.Click(ctx, tabs.Target{Selector: "#go"})
		if err != nil {
			return err
		}
		if !res.Navigated {
			t.Errorf("the click did not report the navigation")
		}
		obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
		if err != nil {
			return err
		}
		for _, e := range obs.Elements {
			if e.Role == "button" && e.Name == "Inner" {
				return nil
			}
		}
		t.Errorf("the observation right after the click lacks the frame's button:\n%s", obs.Text())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An evaluation whose page navigates away before it settles is a
// script_error that says so, not internal.
func TestEvaluateAcrossNavigation(t *testing.T) {
	t.Parallel()
	tab := open(t, "/form")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Evaluate(ctx, "new Promise(() => { setTimeout(() => { location.href = '/next'; }, 50); })", nil)
		return err
	})
	var te *tabs.Error
	if !errors.As(err, &te) || te.Code != errcode.ScriptError || !strings.Contains(te.Msg, "the page navigated while it ran") {
		t.Fatalf("evaluate across a navigation: %#v", err)
	}
}

// TestGotoRefusesExternalSchemes: a URL whose scheme Chromium hands to
// another program (mailto:, ftp:, an app's own scheme) is refused with
// bad_request before anything is sent; the tab stays on its page and
// takes input (a trial found a tab that got no input event again after
// Chromium tried one).
func TestGotoRefusesExternalSchemes(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Counter</title><button id=b onclick="this.textContent = +this.textContent + 1">0</button>`)
	}))
	t.Cleanup(srv.Close)
	s := newSup(t)
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "ext", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"foo://bar", "ftp://127.0.0.1/x", "mailto:a@example.com"} {
		if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "ext", URL: u}); errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "another program") {
			t.Errorf("open %s: %v, want bad_request saying Chromium hands it to another program", u, err)
		}
	}
	var text, url string
	err := s.Run(context.Background(), "ext", 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#b"}); err != nil {
			return err
		}
		url = tb.URL(ctx)
		raw, err := tb.Evaluate(ctx, `() => document.getElementById('b').textContent`, nil)
		if err == nil {
			err = json.Unmarshal(raw, &text)
		}
		return err
	}))
	if err != nil || text != "1" || url != srv.URL+"/" {
		t.Fatalf("after the refused opens: click %v, the button says %q at %q; want 1 at %q", err, text, url, srv.URL+"/")
	}
}

// TestCallAfterSlowNavigation: a click on a link whose server answers
// after 7 s returns once it has waited 5 s for the commit, saying the
// navigation has not committed; an observation right after waits on for
// the commit (its own 5 s), and shows the new page.
func TestCallAfterSlowNavigation(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(7 * time.Second)
			fmt.Fprint(w, `<!doctype html><title>Slow</title><button>Arrived</button>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Start</title><a href="/slow">Go slow</a>`)
	}))
	defer srv.Close()
	name := t.Name()
	ctx := context.Background()
	if _, err := sup.Open(ctx, tabs.OpenOptions{Name: name, URL: srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	defer sup.Close(ctx, name, false, 0)
	var click *tabs.ActionResult
	var obs *observe.Observation
	err := sup.Run(ctx, name, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		if click, err = tb.Click(ctx, tabs.Target{Selector: "text/Go slow"}); err != nil {
			return err
		}
		return nil
	}))
	if err != nil || !click.Navigated || !strings.Contains(click.Note, "has not committed yet") {
		t.Fatalf("click on the slow link: %+v, %v; want a navigation not committed yet", click, err)
	}
	err = sup.Run(ctx, name, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		obs, err = tb.Observe(ctx, tabs.ObserveOptions{})
		return err
	}))
	if err != nil || !strings.Contains(obs.Text(), "[Arrived]") {
		t.Fatalf("observe after the click: %v, want the slow page:\n%v", err, obs)
	}
}
