package tabs_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// The chaos test drives one tab, with the default settings (stealth on),
// through the saved real pages and through pages of its own that scroll
// inner containers, open dialogs during load, ask beforeunload, open
// popups and hold iframes (same-origin and out-of-process): on each page
// it opens, observes, observes with includeAll, scrolls, waits for
// something the page shows, clicks a safe element, and goes on to the next
// page. It counts renderer crashes (Inspector.targetCrashed), actions that
// end in timeout on a page that loaded, tabs killed, and the labelled
// controls of its own pages that are missing or unnamed on the first
// observation after load; every count must be 0.
//
// The short form (every run of the suite) takes every 8th saved page; the
// long form (make chaos: -chaos.long) takes every page, three times over.
var chaosLong = flag.Bool("chaos.long", false, "chaos test: every saved page, three rounds")

// chaosPages are the test's own pages. Each control a person reads a
// label for is listed in chaosWant.
var chaosPages = map[string]string{
	"/chaos/form": `<!doctype html><title>Chaos form</title>
<h1>Sign up</h1>
<form onsubmit="return false">
<label for=email>Email</label> <input id=email type=email>
<label><input type=checkbox id=terms> I agree to the terms</label>
<label>Full name <input id=name></label>
<span id=phonelbl>Phone</span> <input aria-labelledby=phonelbl>
<label for=country>Country</label> <select id=country><option>France</option><option>Peru</option></select>
<button type=button onclick="this.textContent = 'Safe (clicked)'">Safe</button>
</form>
<div id=box style="height:150px;overflow:auto;border:1px solid">
</div>
<iframe src="/chaos/inner" title="Payment" style="width:400px;height:160px"></iframe>
<script>
const box = document.getElementById('box');
let n = 0;
function add(k) { for (let i = 0; i < k; i++) { const d = document.createElement('div'); d.style.height = '30px'; d.textContent = 'Row ' + (++n); box.appendChild(d); } }
add(10);
box.addEventListener('scroll', () => { if (box.scrollTop + box.clientHeight > box.scrollHeight - 40) add(10); });
</script>`,
	"/chaos/inner": `<!doctype html><title>Inner</title>
<label for=card>Card number</label> <input id=card>
<label><input type=checkbox id=save> Save card</label>
<button type=button onclick="this.textContent = 'Paid'">Pay</button>`,
	"/chaos/alert": `<!doctype html><title>Chaos alert</title>
<script>alert('Welcome back')</script>
<h1>After the alert</h1>
<label>Search <input type=search id=q></label>
<button type=button onclick="this.textContent = 'Safe (clicked)'">Safe</button>`,
	"/chaos/beforeunload": `<!doctype html><title>Chaos beforeunload</title>
<h1>Unsaved changes</h1>
<label>Note <textarea id=note></textarea></label>
<button type=button onclick="this.textContent = 'Safe (clicked)'">Safe</button>
<script>addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'unsaved'; });</script>`,
	"/chaos/popup": `<!doctype html><title>Chaos popup</title>
<h1>Help</h1>
<button type=button id=safe onclick="window.open('/chaos/popped', 'help', 'width=400,height=300')">Safe</button>`,
	"/chaos/popped": `<!doctype html><title>Popped</title><h1>Help window</h1>
<label><input type=checkbox> Do not show again</label>`,
	"/chaos/frames": `<!doctype html><title>Chaos frames</title>
<h1>Frames</h1>
<iframe src="/chaos/inner" title="Same site" style="width:400px;height:160px"></iframe>
<iframe src="{{cross}}/chaos/inner" title="Other site" style="width:400px;height:160px"></iframe>
<button type=button onclick="this.textContent = 'Safe (clicked)'">Safe</button>`,
	"/chaos/handlers": handlersPage(),
	"/chaos/spa": `<!doctype html><title>Chaos SPA</title>
<div id=app>Loading…</div>
<script>fetch('/chaos/data').then((r) => r.json()).then((d) => {
  document.getElementById('app').innerHTML = '<h1>' + d.title + '</h1><label>Quantity <input id=qty type=number></label>' +
    '<button type=button onclick="this.textContent = \'Safe (clicked)\'">Safe</button>';
});</script>`,
}

// chaosWant lists, per page of its own, the controls (role and accessible
// name; @frame for those in an iframe) its first observation must show.
var chaosWant = map[string][]string{
	"/chaos/form": {"textbox Email", "checkbox I agree to the terms", "textbox Full name", "textbox Phone", "combobox Country", "button Safe",
		"textbox Card number @", "checkbox Save card @", "button Pay @"},
	"/chaos/alert":        {"searchbox Search", "button Safe"},
	"/chaos/beforeunload": {"textbox Note", "button Safe"},
	"/chaos/popup":        {"button Safe"},
	"/chaos/frames":       {"button Safe", "textbox Card number @", "checkbox Save card @", "textbox Card number @", "checkbox Save card @"},
	"/chaos/spa":          {"spinbutton Quantity", "button Safe"},
}

// chaosOrder is the order the own pages are visited in, between saved ones.
var chaosOrder = []string{"/chaos/form", "/chaos/alert", "/chaos/handlers?1", "/chaos/handlers?2", "/chaos/beforeunload", "/chaos/popup", "/chaos/frames", "/chaos/spa"}

// handlersPage is a page of 150 rows, each with inline handlers (an
// onclick link, an image's onerror) and an addEventListener one: what
// listing the listeners of a page from the walker's isolated world broke
// (TestObserveInlineHandlers).
func handlersPage() string {
	var b strings.Builder
	b.WriteString("<!doctype html><title>Chaos handlers</title><h1>Handlers</h1>\n")
	for i := range 150 {
		fmt.Fprintf(&b, `<p>Row %d: <a href="#" onclick="window.x%d = %d; return false">Item %d</a> <img src="/chaos/none%d.png" onerror="this.dataset.e = %d" alt="icon %d"></p>`+"\n", i, i, i, i, i, i, i)
	}
	b.WriteString(`<button type=button onclick="this.textContent = 'Safe (clicked)'">Safe</button>`)
	b.WriteString(`<script>for (const p of document.querySelectorAll('p')) p.addEventListener('click', () => {});</script>`)
	return b.String()
}

type chaosCounts struct {
	pages, crashes, timeouts, kills, lostNames, missing, otherErrs int
}

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser through many pages")
	}
	mux := http.NewServeMux()
	var cross string
	for path, body := range chaosPages {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, strings.ReplaceAll(body, "{{cross}}", cross))
		})
	}
	mux.HandleFunc("/chaos/data", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		fmt.Fprint(w, `{"title": "Your basket"}`)
	})
	var saved []string
	if dir := testenv.PagesDir(); dir != "" {
		mux.Handle("/saved/", http.StripPrefix("/saved/", http.FileServer(http.Dir(dir))))
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() {
				saved = append(saved, "/saved/"+e.Name()+"/source.html")
			}
		}
	} else {
		t.Log("no saved pages (../shared/pages/readability): own pages only")
	}
	base := httptestServer(t, mux)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	cross = "http://localhost:" + port // another site: an out-of-process iframe

	rounds, step := 1, 8
	if *chaosLong {
		rounds, step = 3, 1
	}
	var urls []string
	for r := 0; r < rounds; r++ {
		own := 0
		for i := 0; i < len(saved); i += step {
			urls = append(urls, base+saved[i])
			// An own page after every few saved ones, so each meets a
			// renderer that has seen many pages.
			if len(urls)%3 == 0 {
				urls = append(urls, base+chaosOrder[own%len(chaosOrder)])
				own++
			}
		}
		for ; own < len(chaosOrder); own++ {
			urls = append(urls, base+chaosOrder[own])
		}
	}

	s := tabs.NewSupervisor(&tabs.Options{Browser: browser.Options{Args: testenv.BrowserArgs}, DefaultTimeout: time.Minute, MaxTimeout: 2 * time.Minute})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	var c chaosCounts
	for _, u := range urls {
		chaosPage(t, s, base, u, &c)
	}
	st := s.Stats()
	c.crashes, c.kills = int(st.Crashes), int(st.Kills)
	summary := fmt.Sprintf("chaos: %d pages: %d renderer crashes, %d timeouts, %d tabs killed, %d lost names, %d controls missing on the first observation, %d other errors",
		c.pages, c.crashes, c.timeouts, c.kills, c.lostNames, c.missing, c.otherErrs)
	t.Log(summary)
	if c.crashes+c.timeouts+c.kills+c.lostNames+c.missing > 0 {
		t.Errorf("want 0 crashes, timeouts, kills, lost names and missing controls; %s", summary)
	}
}

// chaosPage plays the steps on one page and adds to c.
func chaosPage(t *testing.T, s *tabs.Supervisor, base, u string, c *chaosCounts) {
	t.Helper()
	c.pages++
	path := strings.TrimPrefix(u, base)
	own := strings.HasPrefix(path, "/chaos/")
	fail := func(step string, err error) {
		var e *tabs.Error
		switch {
		case errors.As(err, &e) && e.Code == errcode.Timeout:
			c.timeouts++
			t.Errorf("%s: %s: %v", path, step, err)
		case errors.As(err, &e) && e.Code == errcode.NotAlive:
			// Counted by the supervisor (crash or kill); said here.
			t.Errorf("%s: %s: %v", path, step, err)
		case own:
			c.otherErrs++
			t.Errorf("%s: %s: %v", path, step, err)
		default:
			// A saved page may have nothing to scroll or click: logged.
			c.otherErrs++
			t.Logf("%s: %s: %v", path, step, err)
		}
	}
	ctx := context.Background()
	// Every other page is observed as soon as it fires load, the rest
	// after the default wait: a page still busy after load meets the
	// observation too. (Not the SPA, which renders after load.)
	wait := ""
	if c.pages%2 == 0 && path != "/chaos/spa" {
		wait = "load"
	}
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "chaos", URL: u, Dialogs: "accept", WaitUntil: wait}); err != nil {
		fail("open", err)
		return
	}
	err := s.Run(ctx, "chaos", time.Minute, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
		if err != nil {
			fail("observe", err)
			return nil
		}
		if want, ok := chaosWant[path]; ok {
			chaosCheck(t, path, obs, want, c)
		}
		if _, err := tb.Observe(ctx, tabs.ObserveOptions{IncludeAll: true}); err != nil {
			fail("observe includeAll", err)
		}
		if _, err := tb.Observe(ctx, tabs.ObserveOptions{}); err != nil {
			fail("observe again", err)
		}
		waitFor := "body"
		if path == "/chaos/form" {
			if _, err := tb.ScrollAt(ctx, tabs.Target{Selector: "#box"}, 0, 1000); err != nil {
				fail("scroll the inner container", err)
			}
			waitFor = "text/Row 15"
		} else if _, err := tb.Scroll(ctx, 0, 600); err != nil {
			fail("scroll", err)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err = tb.WaitForState(wctx, tabs.Target{Selector: waitFor}, "attached")
		cancel()
		if err != nil {
			fail("waitFor "+waitFor, err)
		}
		sel := "text/Safe"
		if !own {
			// A heading, paragraph or list item whose centre is itself:
			// clicking it follows no link and presses no button.
			raw, err := tb.Evaluate(ctx, chaosSafeJS, nil)
			if err != nil {
				fail("find a safe element", err)
				return nil
			}
			if string(raw) != "true" {
				return nil
			}
			sel = "[data-chaos-safe]"
		}
		if _, err := tb.Click(ctx, tabs.Target{Selector: sel}); err != nil {
			fail("click "+sel, err)
		}
		if _, err := tb.Observe(ctx, tabs.ObserveOptions{Since: "last"}); err != nil {
			fail("observe since the last", err)
		}
		return nil
	}))
	if err != nil {
		fail("run", err)
	}
	tab, err := s.Tab("chaos")
	if err != nil {
		return
	}
	for _, p := range tab.DrainPopups(5 * time.Second) {
		if p.Error != "" {
			c.otherErrs++
			t.Errorf("%s: popup: %s", path, p.Error)
			continue
		}
		err := s.Run(ctx, p.Name, 30*time.Second, tabs.JobFunc(func(ctx context.Context, pt *tabs.Tab) error {
			obs, err := pt.Observe(ctx, tabs.ObserveOptions{})
			if err != nil {
				return err
			}
			chaosCheck(t, path+" (popup)", obs, []string{"checkbox Do not show again"}, c)
			return nil
		}))
		if err != nil {
			fail("observe the popup", err)
		}
		if _, err := s.Close(ctx, p.Name, false, 0); err != nil {
			fail("close the popup", err)
		}
		if !tab.Alive() {
			t.Errorf("%s: closing the popup took its opener down: %s", path, tab.DeadReason())
		}
	}
}

// chaosCheck counts the wanted controls that obs lacks: a control present
// with no name is a lost name, one absent is missing.
func chaosCheck(t *testing.T, path string, obs *observe.Observation, want []string, c *chaosCounts) {
	t.Helper()
	got := map[string]int{}
	unnamed := map[string]int{}
	for _, e := range obs.Elements {
		k := e.Role + " " + e.Name
		if e.Frame != "" {
			k += " @"
		}
		got[k]++
		if e.Name == "" {
			unnamed[e.Role]++
		}
	}
	for _, w := range want {
		if got[w] > 0 {
			got[w]--
			continue
		}
		role, _, _ := strings.Cut(w, " ")
		if unnamed[role] > 0 {
			unnamed[role]--
			c.lostNames++
			t.Errorf("%s: first observation: %q has no name", path, w)
		} else {
			c.missing++
			t.Errorf("%s: first observation: %q is missing", path, w)
		}
	}
	if t.Failed() {
		t.Logf("%s: observed:\n%s", path, obs.Text())
	}
}

// chaosSafeJS marks a heading, paragraph or list item that a click at its
// centre reaches without passing a link, button, label or field, and says
// whether it found one.
const chaosSafeJS = `() => {
  const live = 'a, button, input, select, textarea, label, summary, [onclick], [role], [tabindex], [contenteditable]';
  for (const el of document.querySelectorAll('h1, h2, h3, p, li')) {
    const r = el.getBoundingClientRect();
    if (r.width < 4 || r.height < 4 || r.bottom < 0 || r.top > innerHeight || r.right < 0 || r.left > innerWidth) continue;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || !(hit === el || el.contains(hit)) || hit.closest(live)) continue;
    el.setAttribute('data-chaos-safe', '');
    return true;
  }
  return false;
}`

// TestNamesOnFirstObservation opens a fresh browser 20 times and observes
// the chaos form at once: every labelled control (<label for>, wrapping
// labels with text before or after the control, aria-labelledby), in the
// page and in its same-origin iframe, has its name on the first
// observation after load.
func TestNamesOnFirstObservation(t *testing.T) {
	if testing.Short() {
		t.Skip("launches 20 browsers")
	}
	mux := http.NewServeMux()
	for path, body := range chaosPages {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })
	}
	hs := httptestServer(t, mux)
	var c chaosCounts
	for i := range 20 {
		s := tabs.NewSupervisor(&tabs.Options{Browser: browser.Options{Args: testenv.BrowserArgs}, DefaultTimeout: time.Minute, MaxTimeout: 2 * time.Minute})
		ctx := context.Background()
		_, err := s.Open(ctx, tabs.OpenOptions{URL: hs + "/chaos/form"})
		if err == nil {
			err = s.Run(ctx, tabs.DefaultName, time.Minute, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
				obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
				if err == nil {
					chaosCheck(t, fmt.Sprintf("session %d", i+1), obs, chaosWant["/chaos/form"], &c)
				}
				return err
			}))
		}
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		if serr := s.Shutdown(sctx); serr != nil {
			t.Errorf("shutdown: %v", serr)
		}
		cancel()
		if err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
	}
	if c.lostNames+c.missing > 0 {
		t.Errorf("over 20 fresh sessions: %d lost names, %d missing controls", c.lostNames, c.missing)
	}
}

// httptestServer serves h on 127.0.0.1 for the test's life and returns its
// base URL.
func httptestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

// TestObserveInlineHandlers observes a page with inline and added
// listeners three times, then goes on to the next copy of it, six times
// over: the renderer must live through it. Listing the listeners with the
// document of the walker's isolated world crashed every second navigation
// on Chromium 156 (the handlers' wrappers of the isolated world).
func TestObserveInlineHandlers(t *testing.T) {
	t.Parallel()
	page := handlersPage()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page) }))
	s := newSup(t)
	for i := range 6 {
		ctx := context.Background()
		if _, err := s.Open(ctx, tabs.OpenOptions{Name: "h", URL: fmt.Sprintf("%s/chaos/handlers?%d", base, i), WaitUntil: "load"}); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		err := s.Run(ctx, "h", 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			for k := range 3 {
				obs, err := tb.Observe(ctx, tabs.ObserveOptions{IncludeAll: k == 1})
				if err != nil {
					return err
				}
				if n := len(obs.Elements); n < 150 {
					return fmt.Errorf("observation %d lists %d elements, want the 150 links at least", k, n)
				}
			}
			return nil
		}))
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	if n := s.Stats().Crashes; n != 0 {
		t.Fatalf("%d renderer crashes, want 0", n)
	}
}
