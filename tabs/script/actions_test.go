package script_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/script"
)

// pages serves testdata/pages under /pages/ and the dynamic routes the
// tests need, for one test.
func pages(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/pages/", http.StripPrefix("/pages/", http.FileServer(http.Dir("testdata/pages"))))
	mux.HandleFunc("/popup-target", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/pages/popup-target.html")
	})
	mux.HandleFunc("/file/report.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="report.txt"`)
		fmt.Fprint(w, "quarterly numbers\n")
	})
	mux.HandleFunc("/file/data.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		fmt.Fprint(w, "a,b\n1,2\n")
	})
	mux.HandleFunc("/api/data", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Test", "yes")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"items":["a","b"],"method":%q}`, r.Method)
	})
	mux.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		http.NotFound(w, r)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Echo</title><p id=out>agent-id=%s ua=%s</p>`, r.Header.Get("X-Agent-Id"), r.Header.Get("User-Agent"))
	})
	mux.HandleFunc("/alert-on-load", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Welcome</title><script>alert('welcome aboard')</script><p id=out>loaded</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// openAt opens a tab named after the test at url with o's options.
func openAt(t *testing.T, url string, o tabs.OpenOptions) string {
	t.Helper()
	name := strings.ReplaceAll(t.Name(), "/", "-")
	o.Name, o.URL = name, url
	if o.WaitUntil == "" {
		o.WaitUntil = "load"
	}
	if _, err := sup.Open(context.Background(), o); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	return name
}

// run runs code on the tab name.
func run(t *testing.T, name, code string, timeout time.Duration) (*script.Output, error) {
	t.Helper()
	s := script.New(code, nil)
	err := sup.Run(context.Background(), name, timeout, s)
	return s.Output(), err
}

// result runs code and returns its one text output, failing the test on
// an error.
func result(t *testing.T, name, code string) string {
	t.Helper()
	out, err := run(t, name, code, 20*time.Second)
	if err != nil {
		t.Fatalf("run: %v (%s)\ncode: %s", err, errcode.Of(err), code)
	}
	got := texts(out)
	if len(got) != 1 {
		t.Fatalf("outputs = %q, want one", got)
	}
	return got[0]
}

// pageText returns the text of #id in the tab's page.
func pageText(t *testing.T, name, id string) string {
	t.Helper()
	return result(t, name, fmt.Sprintf(`return await tab.evaluate(() => document.getElementById(%q).textContent)`, id))
}

func TestHoverMenu(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/hover.html", tabs.OpenOptions{})
	// The submenu shows only while the pointer is over "Products".
	out, err := run(t, name, `await tab.click('text/Laptops', {timeout: 500})`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "not visible") {
		t.Fatalf("click on a hidden menu item: %v (%s), want not_actionable, not visible; out %q", err, errcode.Of(err), texts(out))
	}
	if got := pageText(t, name, "out"); got != "picked nothing" {
		t.Fatalf("after the refused click the page says %q", got)
	}
	result(t, name, `await tab.hover('text/Products'); await tab.click('text/Laptops'); return 'ok'`)
	if got := pageText(t, name, "out"); got != "picked Laptops" {
		t.Fatalf("page says %q, want picked Laptops", got)
	}
	// A mouseenter menu with a close delay.
	result(t, name, `await tab.hover('#account'); await tab.click('#logout'); return 'ok'`)
	if got := pageText(t, name, "out"); got != "picked Log out" {
		t.Fatalf("page says %q, want picked Log out", got)
	}
}

func TestCookieBannerCoversButton(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/banner.html", tabs.OpenOptions{})
	_, err := run(t, name, `await tab.click('#buy', {timeout: 800})`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "div#cookie-banner") {
		t.Fatalf("click under the banner: %v (%s), want not_actionable naming div#cookie-banner", err, errcode.Of(err))
	}
	if got := pageText(t, name, "out"); got != "not bought" {
		t.Fatalf("the covered click went through: %q", got)
	}
	result(t, name, `await tab.click('text/Accept all'); await tab.click('#buy'); return 'ok'`)
	if got := pageText(t, name, "out"); got != "bought" {
		t.Fatalf("page says %q, want bought", got)
	}
	// clickAt with a screenshot's image coordinates.
	got := result(t, name, `
await tab.evaluate(() => { document.getElementById('out').textContent = 'not bought'; });
const shot = await tab.screenshot({silent: true});
const b = await tab.evaluate(() => { const r = document.getElementById('buy').getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; });
const r = await tab.clickAt(b.x * shot.scale, b.y * shot.scale, {screenshot: shot.id});
const said = await tab.evaluate(() => document.getElementById('out').textContent);
await tab.goto(await tab.url());
let code = '';
try { await tab.clickAt(10, 10, {screenshot: shot.id}); } catch (e) { code = e.code; }
return [r.element, said, code].join('|');`)
	if got != `button#buy "Buy now"|bought|stale_element` {
		t.Fatalf("clickAt: %q", got)
	}
}

func TestVirtualisedList(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/virtual.html", tabs.OpenOptions{})
	got := result(t, name, `
const has = () => tab.evaluate(() => [...document.querySelectorAll('.row')].some(r => r.textContent === 'Item 237'));
assert(!(await has()), 'row 537 exists before scrolling');
let pos;
for (let i = 0; i < 120 && !(await has()); i++) pos = await tab.scroll(0, 250, {selector: '#list'});
assert(pos.y > 6000, 'list scrolled to ' + JSON.stringify(pos));
await tab.click('text/Item 237');
return await tab.evaluate(() => document.getElementById('out').textContent);
`)
	if got != "picked Item 237" {
		t.Fatalf("page says %q, want picked Item 237", got)
	}
}

func TestDateInput(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/date.html", tabs.OpenOptions{})
	result(t, name, `await tab.fill('#d', '2024-03-15'); await tab.fill('text/Time', '09:30'); return 'ok'`)
	if got := pageText(t, name, "out"); got != "date: 2024-03-15 09:30" {
		t.Fatalf("page says %q", got)
	}
	_, err := run(t, name, `await tab.type('#d', '2024-01-01')`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "use fill") {
		t.Fatalf("type into a date: %v, want not_actionable saying use fill", err)
	}
	_, err = run(t, name, `await tab.fill('#d', '15/03/2024')`, 10*time.Second)
	if errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "give yyyy-mm-dd") {
		t.Fatalf("fill a malformed date: %v, want bad_request naming yyyy-mm-dd", err)
	}
	// The refused value did not touch the field.
	if got := result(t, name, `return await tab.evaluate(() => document.getElementById('d').value)`); got != "2024-03-15" {
		t.Fatalf("the date after the refused fill: %q, want 2024-03-15", got)
	}
}

func TestSelectNativeAndCustom(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/select.html", tabs.OpenOptions{})
	got := result(t, name, `
const a = await tab.select('#size', 'Large');
const b = await tab.select('text/Colours', 'Red', 'b');
return JSON.stringify([a.selected, a.values, b.selected]);`)
	if got != `[["Large"],["l"],["Red","Blue"]]` {
		t.Fatalf("select results %s", got)
	}
	if got := pageText(t, name, "out"); got != "size=l colours=r+b fruit=none city=none" {
		t.Fatalf("page says %q", got)
	}
	// A value that matches no option is an error naming it; nothing changes.
	_, err := run(t, name, `await tab.select('#size', 'Medium', 'Huge')`, 10*time.Second)
	if errcode.Of(err) != errcode.ElementNotFound || !strings.Contains(err.Error(), `"Huge"`) || !strings.Contains(err.Error(), `"Medium"`) {
		t.Fatalf("select Huge: %v (%s)", err, errcode.Of(err))
	}
	_, err = run(t, name, `await tab.select('#size', 'Extra large')`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("select a disabled option: %v", err)
	}
	_, err = run(t, name, `await tab.select('#size', 'Small', 'Medium')`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable {
		t.Fatalf("two values on a single select: %v", err)
	}
	if got := pageText(t, name, "out"); got != "size=l colours=r+b fruit=none city=none" {
		t.Fatalf("a failed select changed the page: %q", got)
	}

	// fill on a native select picks by label, then value, as select does;
	// type on it is an error that says what to use.
	got = result(t, name, `const r = await tab.fill('#size', 'Small'); const r2 = await tab.fill('#size', 'l'); return r.value + '|' + r2.value`)
	if got != "Small|Large" {
		t.Fatalf("fill on a select returned %q", got)
	}
	_, err = run(t, name, `await tab.type('#size', 'Small')`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "use select") {
		t.Fatalf("type on a select: %v", err)
	}
	if got := pageText(t, name, "out"); got != "size=l colours=r+b fruit=none city=none" {
		t.Fatalf("after fill on a select: page says %q", got)
	}

	// The custom combobox: by label, then by value.
	got = result(t, name, `const r = await tab.select('#fruit', 'Banana'); return r.selected.join()`)
	if got != "Banana" {
		t.Fatalf("custom select returned %q", got)
	}
	if got := pageText(t, name, "out"); got != "size=l colours=r+b fruit=banana city=none" {
		t.Fatalf("page says %q", got)
	}
	result(t, name, `await tab.select('aria/Fruit[role="combobox"]', 'kiwi-gold'); return 'ok'`)
	if got := pageText(t, name, "out"); got != "size=l colours=r+b fruit=kiwi-gold city=none" {
		t.Fatalf("select by value: page says %q", got)
	}
	_, err = run(t, name, `await tab.select('#fruit', 'Durian')`, 10*time.Second)
	if errcode.Of(err) != errcode.ElementNotFound || !strings.Contains(err.Error(), `"Durian"`) || !strings.Contains(err.Error(), `"Golden kiwi"`) {
		t.Fatalf("select Durian: %v", err)
	}
	got = result(t, name, `return [await tab.evaluate(() => document.getElementById('fruit-list').hidden), await tab.evaluate(() => document.getElementById('out').textContent)].join('|')`)
	if got != "true|size=l colours=r+b fruit=kiwi-gold city=none" {
		t.Fatalf("after a failed custom select: %q, want the list closed and nothing changed", got)
	}
	// A combobox whose options appear as you type.
	result(t, name, `await tab.select('#city', 'Lisbon'); return 'ok'`)
	if got := pageText(t, name, "out"); got != "size=l colours=r+b fruit=kiwi-gold city=Lisbon" {
		t.Fatalf("autocomplete select: page says %q", got)
	}
}

func TestEditorsKeepTypedText(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/editor.html", tabs.OpenOptions{})
	result(t, name, `await tab.type('#ed', 'Hello'); await tab.type('#ed', ' world'); return 'ok'`)
	if got := pageText(t, name, "model"); got != "model: Hello world" {
		t.Fatalf("editor model after type: %q", got)
	}
	result(t, name, `await tab.fill('#ed', 'Bye'); return 'ok'`)
	if got := pageText(t, name, "model"); got != "model: Bye" {
		t.Fatalf("editor model after fill: %q", got)
	}
	result(t, name, `await tab.fill('text/Name', 'Ada'); await tab.type('#r', ' L'); return 'ok'`)
	if got := pageText(t, name, "state"); got != "state: Ada L" {
		t.Fatalf("controlled input state: %q", got)
	}
	// An edit the page rejects is reported, never taken for success.
	_, err := run(t, name, `await tab.type('#reject', 'x')`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "no effect") {
		t.Fatalf("type into a rejecting field: %v", err)
	}
	_, err = run(t, name, `await tab.fill('#reject', 'x')`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable {
		t.Fatalf("fill a rejecting field: %v", err)
	}
	// A field that reformats what it is given took the fill: the result
	// says what the page made of it.
	got := result(t, name, `const r = await tab.fill('#phone', '5551234567'); return r.value + '|' + r.note`)
	if got != `(555) 123-4567|the page changed the text to "(555) 123-4567"` {
		t.Fatalf("fill a formatting field: %q", got)
	}
}

func TestNestedScrollForm(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/nested.html", tabs.OpenOptions{})
	result(t, name, `await tab.fill('#email', 'ada@example.com'); await tab.click('text/Send'); return 'ok'`)
	if got := pageText(t, name, "out"); got != "sent ada@example.com" {
		t.Fatalf("page says %q", got)
	}
	got := result(t, name, `await tab.scrollIntoView('#out'); return await tab.evaluate(() => { const r = document.getElementById('out').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })`)
	if got != "true" {
		t.Fatalf("scrollIntoView left #out outside the viewport")
	}
}

func TestSelectorEngines(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/selectors.html", tabs.OpenOptions{})
	for _, c := range []struct{ sel, want string }{
		{"text/Continue", "enabled"},
		{"p-text/continue to", "continue to checkout"},
		{"pierce/#inner-btn", "shadow"},
		{"p-pierce/#inner-btn", "shadow"},
		{"#inner-btn", "shadow"}, // CSS pierces open shadow roots when the document has no match
		{`aria/Save draft[role="button"]`, "aria"},
		{`p-aria/Save draft`, "aria"},
		{`xpath///button[text()="Exact words"]`, "xpath"},
		{`p-xpath///button[contains(., "checkout")]`, "continue to checkout"},
		{`css/button[aria-label="Save draft"]`, "aria"},
		{"text/Shadow button", "shadow"},
	} {
		got := result(t, name, fmt.Sprintf(`await tab.evaluate(() => document.getElementById('out').textContent = 'nothing'); await tab.click(%q); return await tab.evaluate(() => document.getElementById('out').textContent)`, c.sel))
		if got != c.want {
			t.Errorf("click %s: page says %q, want %q", c.sel, got, c.want)
		}
	}
	for _, sel := range []string{"foo/bar", "p-bogus/x", "xpath///button[", "text/"} {
		_, err := run(t, name, fmt.Sprintf(`await tab.click(%q)`, sel), 5*time.Second)
		if errcode.Of(err) != errcode.BadRequest {
			t.Errorf("click %q: %v (%s), want bad_request", sel, err, errcode.Of(err))
		}
	}
}

func TestDialogs(t *testing.T) {
	t.Parallel()
	base := pages(t)
	name := openAt(t, base+"/pages/dialogs.html", tabs.OpenOptions{})
	// No policy: the action returns with the dialog pending, and the script
	// handles it.
	got := result(t, name, `
const r = await tab.click('#prompt');
assert(r.dialog && r.dialog.type === 'prompt', JSON.stringify(r));
const d = tab.dialog();
await tab.acceptDialog('Ada');
return [d.type, d.message, d.defaultValue, tab.dialog()].join('|');`)
	if got != "prompt|Your name?|anon|" {
		t.Fatalf("dialog seen by the script: %q", got)
	}
	if got := pageText(t, name, "out"); got != "name: Ada" {
		t.Fatalf("page says %q", got)
	}
	// A dialog left open is reported, and observe reports it without
	// hanging; the next run closes it.
	out, err := run(t, name, `await tab.click('#confirm'); return 'clicked'`, 10*time.Second)
	if err != nil || out.PendingDialog == nil || out.PendingDialog.Message != "Delete it?" {
		t.Fatalf("pending dialog: err %v, %+v", err, out.PendingDialog)
	}
	_, err = run(t, name, `await tab.observe()`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "Delete it?") {
		t.Fatalf("observe with a dialog open: %v", err)
	}
	result(t, name, `await tab.dismissDialog(); return 'ok'`)
	if got := pageText(t, name, "out"); got != "kept" {
		t.Fatalf("page says %q, want kept", got)
	}
	// goto a page that alerts while loading returns with the dialog pending.
	got = result(t, name, fmt.Sprintf(`const r = await tab.goto(%q); const d = tab.dialog(); await tab.acceptDialog(); return [r.dialog.type, d.message, await tab.title()].join('|')`, base+"/alert-on-load"))
	if got != "alert|welcome aboard|Welcome" {
		t.Fatalf("goto with an alert: %q", got)
	}
	// beforeunload: the navigation waits for the script's answer.
	got = result(t, name, fmt.Sprintf(`
await tab.goto(%[1]q);
await tab.click('#arm');
const r = await tab.goto(%[2]q);
assert(r.dialog && r.dialog.type === 'beforeunload', JSON.stringify(r));
await tab.acceptDialog();
return await tab.waitForUrl(%[2]q);`, base+"/pages/dialogs.html", base+"/pages/landing.html"))
	if got != base+"/pages/landing.html" {
		t.Fatalf("after beforeunload: %q", got)
	}

}

func TestDialogPolicy(t *testing.T) {
	t.Parallel()
	base := pages(t)
	name := openAt(t, base+"/pages/dialogs.html", tabs.OpenOptions{Dialogs: "accept"})
	out, err := run(t, name, fmt.Sprintf(`
await tab.click('#confirm');
await tab.click('#alert');
await tab.click('#prompt');
await tab.click('#arm');
await tab.goto(%q);
return await tab.title();`, base+"/pages/landing.html"), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(out); len(got) != 1 || got[0] != "Landing" {
		t.Fatalf("outputs %q", got)
	}
	var kinds []string
	for _, d := range out.Dialogs {
		kinds = append(kinds, d.Type+":"+d.Message+":"+d.Handled)
	}
	want := []string{"confirm:Delete it?:accepted", "alert:Saved!:accepted", "prompt:Your name?:accepted", "beforeunload::accepted"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("handled dialogs %q, want %q", kinds, want)
	}
	if out.PendingDialog != nil {
		t.Fatalf("pending dialog %+v under a policy", out.PendingDialog)
	}
}

func TestPopupsAndDownloads(t *testing.T) {
	t.Parallel()
	base := pages(t)
	name := openAt(t, base+"/pages/popups.html", tabs.OpenOptions{})
	out, err := run(t, name, `
const [p1] = await Promise.all([tab.waitForPopup(), tab.click('#open')]);
const [p2] = await Promise.all([tab.waitForPopup(), tab.click('text/New tab link')]);
const [d1] = await Promise.all([tab.waitForDownload(), tab.click('#dl')]);
const [d2] = await Promise.all([tab.waitForDownload(), tab.click('text/Export')]);
return {p: [p1.name, p2.name], d: [d1, d2]};`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		P []string
		D []tabs.Download
	}
	if err := json.Unmarshal([]byte(texts(out)[0]), &res); err != nil {
		t.Fatal(err)
	}
	wantPopups := []string{name + "-popup-1", name + "-popup-2"}
	if !slices.Equal(res.P, wantPopups) {
		t.Fatalf("popups %q, want %q", res.P, wantPopups)
	}
	for _, p := range wantPopups {
		t.Cleanup(func() { sup.Close(context.Background(), p, false, 0) })
	}
	var reported []string
	for _, p := range out.Popups {
		reported = append(reported, p.Name+" "+p.Opener)
	}
	if strings.Join(reported, ",") != name+"-popup-1 "+name+","+name+"-popup-2 "+name {
		t.Fatalf("run details popups %+v", out.Popups)
	}
	// The popups are tabs of their own.
	listed := 0
	for _, ti := range sup.Tabs(context.Background()) {
		if slices.Contains(wantPopups, ti.Name) && ti.Alive {
			listed++
		}
	}
	if listed != 2 {
		t.Fatalf("tabs lists %d of the popups: %+v", listed, sup.Tabs(context.Background()))
	}
	for i, p := range wantPopups {
		// Acting needs the page in front of its window (the target=_blank
		// popup shares its opener's window).
		got := result(t, p, `await tab.click('#out'); return [await tab.title(), new URL(await tab.url()).search].join('|')`)
		if want := []string{"Popup|?via=open", "Popup|?via=blank"}[i]; got != want {
			t.Fatalf("popup %s: %q, want %q", p, got, want)
		}
	}

	if got := result(t, name, `await tab.hover('#open'); return 'ok'`); got != "ok" {
		t.Fatalf("the opener after its popups: %q", got)
	}

	want := []struct{ name, body string }{{"report.txt", "quarterly numbers\n"}, {"export.csv", "a,b\n1,2\n"}}
	dir, _ := sup.DownloadDir()
	t.Cleanup(func() { os.Remove(dir) }) // runs last; only once empty, so other tests' downloads stay
	for i, d := range res.D {
		if d.SuggestedName != want[i].name || !d.Finished || d.State != "completed" || d.Bytes != int64(len(want[i].body)) ||
			filepath.Dir(d.Path) != dir {
			t.Fatalf("download %d = %+v (dir %s)", i, d, dir)
		}
		b, err := os.ReadFile(d.Path)
		if err != nil || string(b) != want[i].body {
			t.Fatalf("downloaded file %s: %q %v", d.Path, b, err)
		}
		t.Cleanup(func() { os.Remove(d.Path) })
	}
	if len(out.Downloads) != 2 || out.Downloads[0].Path != res.D[0].Path || !out.Downloads[1].Finished {
		t.Fatalf("run details downloads %+v", out.Downloads)
	}
}

func TestWaitForURLAndResponse(t *testing.T) {
	t.Parallel()
	base := pages(t)
	name := openAt(t, base+"/pages/spa.html", tabs.OpenOptions{})
	got := result(t, name, `
const [u1] = await Promise.all([tab.waitForUrl('**/app/settings'), tab.click('#settings')]);
const here = await tab.url();
const [u2] = await Promise.all([tab.waitForUrl(/later\?tab=(\d)$/), tab.click('#later')]);
const u3 = await tab.waitForUrl(u => u.endsWith('tab=2'));
let code = '';
try { await tab.waitForUrl('**/never', {timeout: 300}); } catch (e) { code = e.code; }
return [u1, here, u2, u3, code].map(s => s.replace(/^http:\/\/[^/]+/, '')).join('|');`)
	if got != "/app/settings|/app/settings|/app/later?tab=2|/app/later?tab=2|timeout" {
		t.Fatalf("waitForUrl on history API navigation: %q", got)
	}
	got = result(t, name, `
const [r] = await Promise.all([tab.waitForResponse('**/api/data?*'), tab.click('#load')]);
await tab.waitFor('text/loaded a,b');
return JSON.stringify([r.status, r.method, r.headers['x-test'], JSON.parse(r.body).items, r.url.replace(/^http:\/\/[^/]+/, '')]);`)
	if got != `[201,"POST","yes",["a","b"],"/api/data?x=1"]` {
		t.Fatalf("waitForResponse: %s", got)
	}
	// A full navigation: waitForUrl waits for the new page's load.
	got = result(t, name, `
const [u] = await Promise.all([tab.waitForUrl('/pages/landing.html'), tab.click('#full')]);
return [u.replace(/^http:\/\/[^/]+/, ''), await tab.evaluate(() => document.readyState)].join('|');`)
	if got != "/pages/landing.html|complete" {
		t.Fatalf("waitForUrl after a link: %q", got)
	}
}

func TestUploadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	os.WriteFile(a, []byte("hello"), 0o600)
	os.WriteFile(b, []byte("hi"), 0o600)
	name := openAt(t, pages(t)+"/pages/upload.html", tabs.OpenOptions{})
	got := result(t, name, fmt.Sprintf(`
const r1 = await tab.uploadFile('#f1', %[1]q);
const r2 = await tab.uploadFile('text/Upload photos', [%[1]q, %[2]q]);
const r3 = await tab.uploadFile('text/Choose file', %[2]q);
return [r1.via, r2.via, r3.via].join();`, a, b))
	if got != "input,input,chooser" {
		t.Fatalf("upload paths: %q", got)
	}
	for id, want := range map[string]string{"o1": "o1: a.txt (5 bytes)", "o2": "o2: a.txt (5 bytes), b.txt (2 bytes)", "o3": "o3: b.txt (2 bytes)"} {
		if got := pageText(t, name, id); got != want {
			t.Errorf("page says %q, want %q", got, want)
		}
	}
	for code, want := range map[string]errcode.Code{
		fmt.Sprintf(`await tab.uploadFile('#f1', %q)`, filepath.Join(dir, "missing.txt")): errcode.BadRequest,
		fmt.Sprintf(`await tab.uploadFile('#f1', %q, %q)`, a, b):                          errcode.BadRequest,
		fmt.Sprintf(`await tab.uploadFile('#nothing', %q)`, a):                            errcode.NotActionable,
	} {
		if _, err := run(t, name, code, 15*time.Second); errcode.Of(err) != want {
			t.Errorf("%s: %v (%s), want %s", code, err, errcode.Of(err), want)
		}
	}
}

func TestDrag(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/drag.html", tabs.OpenOptions{})
	result(t, name, `await tab.drag('#handle', '#mark80'); await tab.drag('#card', '#done'); return 'ok'`)
	if got := pageText(t, name, "value"); got != "value: 80" {
		t.Errorf("slider: %q", got)
	}
	if got := pageText(t, name, "out"); got != "dropped card-1" {
		t.Errorf("drop: %q", got)
	}
	// Points, in steps.
	got := result(t, name, `
const r = await tab.evaluate(() => { const b = document.getElementById('track').getBoundingClientRect(); return {x: b.left, y: b.top + b.height / 2, w: b.width}; });
const h = await tab.evaluate(() => { const b = document.getElementById('handle').getBoundingClientRect(); return {x: b.left + b.width / 2, y: b.top + b.height / 2}; });
await tab.drag(h, {x: r.x + r.w * 0.25, y: r.y}, {steps: 5});
return await tab.evaluate(() => document.getElementById('value').textContent);`)
	if got != "value: 25" {
		t.Errorf("drag to a point: %q", got)
	}
}

// TestSessionState is not parallel: the tests' pages share one cookie jar
// (127.0.0.1), and it clears it.
func TestSessionState(t *testing.T) {
	base := pages(t)
	name := openAt(t, base+"/pages/session.html", tabs.OpenOptions{})
	got := result(t, name, fmt.Sprintf(`
await tab.clearCookies();
await tab.setCookie({name: 'tp_session', value: 'ada', url: %[1]q});
await tab.setCookie({name: 'tp_other', value: 'x', domain: '127.0.0.1', path: '/pages', sameSite: 'Lax'});
await tab.evaluate(() => localStorage.setItem('token', 't-123'));
await tab.goto(%[2]q);
const seen = await tab.evaluate(() => document.getElementById('out').textContent);
const cookies = (await tab.cookies()).map(c => c.name + '=' + c.value).join(',');
const st = await tab.storageState();
await tab.clearCookies();
await tab.evaluate(() => localStorage.clear());
await tab.goto(%[2]q);
const out = await tab.evaluate(() => document.getElementById('out').textContent);
return [seen, cookies, out, JSON.stringify(st)].join('|');`, base, base+"/pages/session.html"))
	parts := strings.SplitN(got, "|", 4)
	if len(parts) != 4 || parts[0] != "user: ada; token: t-123" || parts[1] != "tp_other=x,tp_session=ada" || parts[2] != "user: none; token: none" {
		t.Fatalf("session: %q", got)
	}
	var st tabs.StorageState
	if err := json.Unmarshal([]byte(parts[3]), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Origins) != 1 || st.Origins[0].Origin != base || len(st.Origins[0].LocalStorage) != 1 || st.Origins[0].LocalStorage[0] != (tabs.StorageItem{Name: "token", Value: "t-123"}) {
		t.Fatalf("storage state origins %+v", st.Origins)
	}
	// open with storage_state: a new tab starts signed in.
	name2 := name + "-restored"
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name2, URL: base + "/pages/session.html", WaitUntil: "load", StorageState: json.RawMessage(parts[3])}); err != nil {
		t.Fatalf("open with storage state: %v", err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name2, false, 0) })
	if got := pageText(t, name2, "out"); got != "user: ada; token: t-123" {
		t.Fatalf("restored tab says %q", got)
	}
	// The restore does not come back after the page changes its storage.
	got = result(t, name2, fmt.Sprintf(`await tab.evaluate(() => localStorage.setItem('token', 'changed')); await tab.goto(%q); return await tab.evaluate(() => document.getElementById('out').textContent)`, base+"/pages/session.html"))
	if got != "user: ada; token: changed" {
		t.Fatalf("after a change: %q", got)
	}
	result(t, name2, `await tab.clearCookies(); return 'ok'`)

	// Headers and the user agent. (navigator.userAgent is the stealth
	// patches' in this suite, so only the request is checked.)
	got = result(t, name, fmt.Sprintf(`await tab.setHeaders({'X-Agent-Id': '42', 'User-Agent': 'TabpilotTest/1.0'}); await tab.goto(%q);
return await tab.evaluate(() => document.getElementById('out').textContent)`, base+"/echo"))
	if got != "agent-id=42 ua=TabpilotTest/1.0" {
		t.Fatalf("headers: %q", got)
	}
	result(t, name, `await tab.setHeaders({}); return 'ok'`)
	for code, want := range map[string]errcode.Code{
		`await tab.setCookie({name: 'x', value: 'y'})`: errcode.BadRequest,
		`await tab.setHeaders({'Bad Name': 'x'})`:      errcode.BadRequest,
		`await tab.setStorageState('not json')`:        errcode.BadRequest,
	} {
		if _, err := run(t, name, code, 5*time.Second); errcode.Of(err) != want {
			t.Errorf("%s: %v, want %s", code, err, want)
		}
	}
}

func TestHandlesAndCDP(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/select.html", tabs.OpenOptions{})
	got := result(t, name, `
const obs = await tab.observe();
const size = obs.elements.find(e => e.role === 'combobox' && e.name === 'Size');
const fruit = obs.elements.find(e => e.role === 'combobox' && e.name === 'Fruit');
assert(size && fruit, obs.text);
await tab.id(size.id).select('Medium');
await tab.id(fruit.id).select('Apple');
await tab.id(fruit.id).scrollIntoView();
const r = await cdp.send('Runtime.evaluate', {expression: '6 * 7', returnByValue: true});
let code = '';
try { await cdp.send('Nope.nothing', {}); } catch (e) { code = e.code; }
return [await tab.evaluate(() => document.getElementById('out').textContent), r.result.value, code].join('|');`)
	if got != "size=m colours=none fruit=apple city=none|42|bad_request" {
		t.Fatalf("handles and cdp: %q", got)
	}
}

// TestClickTargetJumps: an element that moves between the actionability
// check and the mouse press (here, away from the pointer on its first
// mouseover, by script, uncovering another button) is checked again, and
// the click lands on it, never on what took its place; an element that
// keeps moving a little and is under the pointer at the press gets the
// click, and one that jumps away from every mouse move over it is
// refused as moved away.
func TestClickTargetJumps(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/jumpy.html", tabs.OpenOptions{})
	result(t, name, `await tab.click('#real'); return 'ok'`)
	if got := pageText(t, name, "out"); got != "clicked: real" {
		t.Fatalf("page says %q, want %q", got, "clicked: real")
	}
	// One that script moves a pixel every animation frame is still under
	// the pointer at the press, which the guard checks there: it gets
	// the click, as a person's.
	for range 3 {
		if _, err := run(t, name, `await tab.click('#runner', {timeout: 2000})`, 10*time.Second); err != nil {
			t.Fatalf("click on a button moving a pixel a frame: %v", err)
		}
	}
	if got := pageText(t, name, "out"); got != "clicked: real runner runner runner" {
		t.Fatalf("page says %q, want %q", got, "clicked: real runner runner runner")
	}
	// One that jumps away from every mouse move over it is refused, saying
	// it moved (not that what took its place covers it).
	_, err := run(t, name, `await tab.click('#flee', {timeout: 2000})`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "moved away from the pointer") {
		t.Fatalf("click on a fleeing button: %v (%s), want not_actionable, moved away", err, errcode.Of(err))
	}
	if got := pageText(t, name, "out"); got != "clicked: real runner runner runner" {
		t.Fatalf("page says %q, want %q", got, "clicked: real runner runner runner")
	}
}

// TestClickGuard: an element that covers the target while the mouse is
// down (here, shown on pointerdown) never gets the click's events: the
// click fails naming it, and the page's listeners see nothing of it.
func TestClickGuard(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/sneaky.html", tabs.OpenOptions{})
	_, err := run(t, name, `await tab.click('#target')`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "button#decoy") {
		t.Fatalf("click: %v (%s), want not_actionable naming button#decoy", err, errcode.Of(err))
	}
	if log := result(t, name, `return JSON.stringify(await tab.evaluate(() => log))`); log != "[]" {
		t.Fatalf("the page logged %s, want no event of the click", log)
	}
}

// TestClickPoisonedBuiltins: on a page whose Function.prototype.call and
// apply throw, clicks by number (in a list item, so the number's row is
// compared too) and by selector go through, with the default wait and with
// load (whose first click compiles the held actionability check on the
// spot).
func TestClickPoisonedBuiltins(t *testing.T) {
	t.Parallel()
	for _, wait := range []string{"settled", "load"} {
		t.Run(wait, func(t *testing.T) {
			name := openAt(t, pages(t)+"/pages/poisoned.html", tabs.OpenOptions{WaitUntil: wait})
			got := result(t, name, `
const obs = await tab.observe();
const bob = obs.elements.filter(e => e.name === 'Add')[1];
assert(bob, obs.text);
await tab.click(bob.id);
await tab.click(bob.id);
await tab.click('#a');
return 'ok';`)
			if got != "ok" {
				t.Fatalf("run: %q", got)
			}
			if got := pageText(t, name, "out"); got != "3 a" {
				t.Fatalf("page says %q, want %q", got, "3 a")
			}
		})
	}
}

// TestClickNumberShadowAndFrame: elements by number in an open shadow root
// and made by script, on a page with an iframe, are clicked (a trial once
// found them "covered by" themselves).
func TestClickNumberShadowAndFrame(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/shadowframe.html", tabs.OpenOptions{})
	for i := 0; i < 3; i++ {
		got := result(t, name, `
await tab.goto(await tab.url());
const obs = await tab.observe();
for (const n of ['Open shadow btn', 'Alpha', 'Beta']) await tab.click(obs.elements.find(e => e.name === n).id);
const log = await tab.evaluate(() => log);
return JSON.stringify(log);`)
		if got != `["shadow","Alpha","Beta"]` {
			t.Fatalf("round %d: the page logged %s", i, got)
		}
	}
}

// TestClickCoverFailsFast: a click on an element under a cover that stays
// (a cookie backdrop, a modal dialog, an inert background) fails naming
// the cover after a short settle, not after the whole timeout; a cover
// that goes away after 500 ms, or once the page's requests (2.4 s of
// them) are done, lets the click through, and a target that keeps moving
// keeps its whole wait.
func TestClickCoverFailsFast(t *testing.T) {
	t.Parallel()
	base := pages(t) + "/pages/covers.html?cover="
	for _, c := range []struct{ cover, want string }{
		{"cookie", "div#cookie-backdrop.backdrop"},
		{"modal", "outside the open modal dialog dialog#consent"},
		{"inert", "is inert (inside main#page"},
		{"nopointer", "has pointer-events: none (its own style or an ancestor's), so the pointer goes through it to main#page"},
	} {
		t.Run(c.cover, func(t *testing.T) {
			name := openAt(t, base+c.cover, tabs.OpenOptions{})
			start := time.Now()
			_, err := run(t, name, `await tab.click('#buy')`, 40*time.Second)
			took := time.Since(start)
			if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("click: %v (%s), want not_actionable with %q", err, errcode.Of(err), c.want)
			}
			t.Logf("the click failed after %v", took)
			if took > 4*time.Second {
				t.Errorf("the click failed after %v, want well under 5s", took)
			}
			if got := pageText(t, name, "out"); got != "not bought" {
				t.Errorf("the covered click went through: %q", got)
			}
		})
	}
	for _, c := range []string{"brief", "fetching"} {
		t.Run(c, func(t *testing.T) {
			name := openAt(t, base+c, tabs.OpenOptions{})
			result(t, name, `await tab.click('#buy'); return 'ok'`)
			if got := pageText(t, name, "out"); got != "bought" {
				t.Fatalf("page says %q, want bought", got)
			}
		})
	}
	t.Run("moving", func(t *testing.T) {
		name := openAt(t, base+"moving", tabs.OpenOptions{})
		start := time.Now()
		_, err := run(t, name, `await tab.click('#mover', {timeout: 3000})`, 40*time.Second)
		took := time.Since(start)
		if errcode.Of(err) != errcode.NotActionable {
			t.Fatalf("click: %v (%s), want not_actionable", err, errcode.Of(err))
		}
		if took < 2900*time.Millisecond {
			t.Errorf("a moving target failed after %v, before its 3s timeout", took)
		}
	})
}

// TestClickSlottedShadowLabels: buttons in open and closed shadow roots
// whose label is slotted light-DOM text or a light-DOM element are
// clicked (they were once "covered by" their own host or label).
func TestClickSlottedShadowLabels(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/slotted.html", tabs.OpenOptions{})
	got := result(t, name, `
const obs = await tab.observe();
const buttons = obs.elements.filter(e => e.role === 'button');
if (buttons.length !== 4) throw new Error('buttons: ' + JSON.stringify(buttons));
for (const b of buttons) await tab.click(b.id, {timeout: 3000});
await tab.click('pierce/.lbl', {timeout: 3000});
return JSON.stringify(await tab.evaluate(() => log));`)
	if got != `["open-text","open-el","closed-text","closed-el","open-el"]` {
		t.Fatalf("the page logged %s", got)
	}
}

// TestUploadNeverSubmits: an upload aimed at a submit button, a button in
// a form without a type, an element inside one, an input type=submit, a
// label of one or a link fails without clicking it (the form is not submitted, the page
// stays); a button in the form that opens a file chooser by script works.
func TestUploadNeverSubmits(t *testing.T) {
	t.Parallel()
	a := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(a, []byte("hello"), 0o600)
	name := openAt(t, pages(t)+"/pages/upload-form.html", tabs.OpenOptions{})
	for sel, want := range map[string]string{
		"#send": "submits its form", "#plain": "submits its form", "#inner": "submits its form",
		"#go": "submits its form", "#golabel": "submits its form", "#link": "follows its link (landing.html)",
	} {
		start := time.Now()
		_, err := run(t, name, fmt.Sprintf(`await tab.uploadFile(%q, %q)`, sel, a), 15*time.Second)
		if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), want) {
			t.Errorf("upload to %s: %v (%s), want not_actionable, %q", sel, err, errcode.Of(err), want)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("upload to %s failed after %v", sel, took)
		}
	}
	got := result(t, name, fmt.Sprintf(`const r = await tab.uploadFile('#attach', %q);
return [r.via, await tab.evaluate(() => document.getElementById('o').textContent), await tab.evaluate(() => location.search), await tab.evaluate(() => document.getElementById('subs').textContent)].join('|');`, a))
	if got != "chooser|a.txt||0" {
		t.Fatalf("after the uploads: %q, want chooser|a.txt||0 (no submit, no navigation)", got)
	}
}

// TestDragSortable: items of sortable lists (pointer events that reorder
// when the pointer crosses a neighbour's midpoint, HTML5 drag and drop, a
// horizontal list) are dropped where asked: item 1 after item 2, item 3
// before item 1, and with an offset from the target's corner.
func TestDragSortable(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/sortable.html", tabs.OpenOptions{})
	got := result(t, name, `
const out = [];
for (const l of ['p', 'h']) {
  await tab.drag('#' + l + '1', '#' + l + '2', {position: 'after'});
  out.push(await tab.evaluate((id) => order(id), l + 'list'));
  await tab.drag('#' + l + '3', '#' + l + '1', {position: 'before'});
  out.push(await tab.evaluate((id) => order(id), l + 'list'));
  await tab.drag('#' + l + '4', '#' + l + '2', {offset: {x: 10, y: 3}});
  out.push(await tab.evaluate((id) => order(id), l + 'list'));
}
await tab.drag('#r1', '#r2', {position: 'after'});
out.push(await tab.evaluate(() => order('row')));
out.push(JSON.stringify(await tab.evaluate(() => moves)));
return out.join('|');`)
	parts := strings.Split(got, "|")
	want := "2,1,3,4|2,3,1,4|4,2,3,1|2,1,3,4|2,3,1,4|4,2,3,1|2,1,3"
	if len(parts) != 8 || strings.Join(parts[:7], "|") != want {
		t.Fatalf("orders %q, want %s", got, want)
	}
	var moves []int
	if err := json.Unmarshal([]byte(parts[7]), &moves); err != nil || len(moves) != 4 || slices.Min(moves) < 10 {
		t.Fatalf("pointer moves per drag %s, want 4 drags of at least 10 moves each", parts[7])
	}
	for code, want := range map[string]string{
		`await tab.drag('#p1', '#p2', {position: 'below'})`:          "unknown position",
		`await tab.drag('#p1', {x: 10, y: 10}, {position: 'after'})`: "not on a point",
		`await tab.drag('#p1', '#p2', {offset: 3})`:                  "offset is {x, y}",
	} {
		if _, err := run(t, name, code, 10*time.Second); errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (%s), want bad_request, %q", code, err, errcode.Of(err), want)
		}
	}
}

// TestFillCutShort: a fill that a maxlength or a mask cut short fails, and
// the message quotes what the field holds now.
func TestFillCutShort(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/fillcut.html", tabs.OpenOptions{})
	for code, want := range map[string]string{
		`await tab.fill('#code', 'ABCDEFGH')`:  `the field holds "ABCDE", not "ABCDEFGH": the field takes at most 5 characters (maxlength)`,
		`await tab.fill('#zip', '12345-6789')`: `the field holds "12345", not "12345-6789": the page cut it`,
	} {
		_, err := run(t, name, code, 10*time.Second)
		if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (%s), want not_actionable, %q", code, err, errcode.Of(err), want)
		}
	}
	if got := result(t, name, `const r = await tab.fill('#code', 'ABC'); const z = await tab.fill('#zip', '12345'); const f = await tab.fill('#free', 'whole'); return [r.value, z.value, f.value].join()`); got != "ABC,12345,whole" {
		t.Fatalf("fills that fit: %q", got)
	}
}

// TestDragSortableByNumber: the items of sortable lists are numbered (the
// HTML5 one's as draggable), so a drag can name them by number.
func TestDragSortableByNumber(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/sortable.html", tabs.OpenOptions{})
	got := result(t, name, `
const o = await tab.observe();
const items = (n) => o.elements.filter((e) => e.name === n);
const h1 = items('Item 1')[1], h2 = items('Item 2')[1];
if (!h1 || !(h1.states || []).includes('draggable')) return 'not numbered: ' + o.text();
await tab.drag(h1.id, h2.id, {position: 'after'});
const p1 = items('Item 1')[0], p3 = items('Item 3')[0];
await tab.drag(p3.id, p1.id, {position: 'before'});
return [await tab.evaluate(() => order('hlist')), await tab.evaluate(() => order('plist'))].join('|');`)
	if got != "2,1,3,4|3,1,2,4" {
		t.Fatalf("orders %q, want 2,1,3,4|3,1,2,4", got)
	}
}

// TestActionsLeaveNoTrace: a page script that records every own property
// of its elements and every new property of its window, on every pointer
// event and every 10 ms, sees none of tabpilot's while it clicks a button,
// one disabled at first, one covered at first, and picks in an ARIA
// combobox: the actionability check keeps its state (the armed click,
// the watch for the mouse move, the last cover and disabled state) in its
// own closure, and select holds its option by reference (stealth: no
// tool-named expando for a detector to look for).
func TestActionsLeaveNoTrace(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/traces.html", tabs.OpenOptions{})
	got := result(t, name, `
await tab.click('#go');
await tab.click('#later');
await tab.click('#under');
await tab.select('#fruit', 'Banana');
return await tab.evaluate(() => report());`)
	if want := "go,later,under,Banana|"; got != want {
		t.Fatalf("the page saw %q, want %q", got, want)
	}
}

// TestActionsAtOnce: the actions a run starts together (Promise.all) take
// the page's input one at a time, in the order the run called them:
// clicks count once each, two fills each land their own text, and the
// submit clicked after them sees both. They used to interleave their
// presses and releases (the page got one click, and every call said it
// had clicked), a fill could get the text of the call after it (goja
// reuses a call's argument slots once it returns), and the submit could
// run before the fills.
func TestActionsAtOnce(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/counter.html", tabs.OpenOptions{})
	for i := 0; i < 3; i++ {
		got := result(t, name, `
await tab.evaluate(() => { n.a = n.b = 0; sent.length = 0; });
const rs = await Promise.all([
  tab.click('#a'), tab.click('#a'), tab.click('#b'), tab.fill('#f', 'AAA'),
  tab.fill('#g', 'BBB'), tab.click('#go'), tab.click('#b'), tab.click('#a'),
]);
return JSON.stringify(await tab.evaluate(() => [n.a, n.b, sent])) + ' ' + rs.length;`)
		if want := `[3,2,["AAA|BBB"]] 8`; got != want {
			t.Fatalf("round %d: the page saw %s, want %s", i, got, want)
		}
	}
}

// TestClickDelegatedStop: a click that a page's delegating capture
// listener on the document stops short of the button (after acting on it)
// is no error, since a caller that took it for one would act twice: it
// succeeds with a note saying the page stopped it on the way, and so does
// one that a window capture listener stops, which the guard, in its own
// world from the document's start, runs before; where the guard is the
// page's main world's (a scoped selector), the window listener runs
// before it, and the click is still an error. None is repeated; the
// stop's note is kept beside a route change's.
func TestClickDelegatedStop(t *testing.T) {
	t.Parallel()
	name := openAt(t, pages(t)+"/pages/delegate.html", tabs.OpenOptions{})
	got := result(t, name, `const r = await tab.click('#del'); return r.note || 'no note'`)
	if !strings.Contains(got, "stopped the click event before it reached") {
		t.Fatalf("click on a delegated button: note %q, want one saying the page stopped the click on the way", got)
	}
	got = result(t, name, `const r = await tab.click('#inert'); return r.note || 'no note'`)
	if !strings.Contains(got, "on the window") {
		t.Fatalf("click on a button a window listener stops: note %q, want one saying a listener on the window stopped the click", got)
	}
	_, err := run(t, name, `await tab.click('body >> #inert')`, 10*time.Second)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "did not receive the click event") {
		t.Fatalf("click by a scoped selector on a swallowed button: %v (%s), want not_actionable, did not receive", err, errcode.Of(err))
	}
	// A delegated click that changes the route keeps both notes: the stop
	// on the way, and the route change's view still changing.
	got = result(t, name, `const r = await tab.click('#route'); return r.note || 'no note'`)
	if !strings.Contains(got, "stopped the click event before it reached") || !strings.Contains(got, "after the route change") {
		t.Fatalf("click on a delegated route button: note %q, want the stop and the unsettled route change", got)
	}
	if log := result(t, name, `return JSON.stringify(await tab.evaluate(() => log))`); log != `["deleted","swallowed","swallowed","routed"]` {
		t.Fatalf("the page logged %s, want one click each (#inert twice: by CSS, by a scoped selector)", log)
	}
}

// TestObserveEmptyPage: on a page with nothing to act on, tab.observe()
// gives an empty list of elements, not null, so that code written for
// the README's obs.elements.find(…) runs on it.
func TestObserveEmptyPage(t *testing.T) {
	t.Parallel()
	name := openAt(t, "data:text/html,<title>Nothing</title><p>Only text.</p>", tabs.OpenOptions{})
	got := result(t, name, `const obs = await tab.observe();
return JSON.stringify(obs.elements) + '|' + String(obs.elements.find(e => e.role === 'button'));`)
	if got != "[]|undefined" {
		t.Errorf("observe of an empty page: %q, want an empty list", got)
	}
}
