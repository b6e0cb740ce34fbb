package script_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// netServer serves a page that fetches, posts, gets a 404, logs and
// throws, and counts the requests it receives by path.
func netServer(t *testing.T) (string, func(path string) int) {
	t.Helper()
	var mu sync.Mutex
	got := map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/page":
			io.WriteString(w, `<!doctype html><title>net</title><p id=out>…</p><script>
fetch('/data.json').then(r => r.json()).then(j => { document.getElementById('out').textContent = j.greeting; });
fetch('/post', {method: 'POST', body: 'a=1&b=two'});
fetch('/missing');
console.log('x %d', 3);
console.error('bad', {a: 1});
setTimeout(function thrower() { throw new Error('boom'); }, 0);
Promise.reject(new Error('nope'));
</script>`)
		case "/img":
			io.WriteString(w, `<!doctype html><title>img</title><img id=img src="/dot.png">`)
		case "/dot.png":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Cache-Control", "max-age=3600")
			w.Write(dotPNG)
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"greeting": "hello from the server"}`)
		case "/post":
			b, _ := io.ReadAll(r.Body)
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, "got %s", b)
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, func(p string) int { mu.Lock(); defer mu.Unlock(); return got[p] }
}

// TestNetworkAndConsole drives the request log, one request in full, the
// console, the page errors and a run's error count on a real page.
func TestNetworkAndConsole(t *testing.T) {
	base, _ := netServer(t)
	name := openAt(t, base+"/page", tabs.OpenOptions{WaitUntil: "settled"})
	out, err := run(t, name, `
const reqs = await tab.requests({type: 'fetch'});
display(JSON.stringify(reqs.map(r => [r.method, new URL(r.url).pathname, r.status]).sort()));
const data = await tab.request(reqs.find(r => r.url.endsWith('/data.json')).id);
display(data.body.text);
const post = await tab.request(reqs.find(r => r.method === 'POST').id);
display(post.postData);
display(JSON.stringify((await tab.requests({status: '4xx', type: 'fetch'})).map(r => new URL(r.url).pathname)));
display(JSON.stringify((await tab.console()).filter(m => m.type !== 'exception').map(m => m.level + ': ' + m.text)));
display(JSON.stringify((await tab.errors()).map(e => e.message + (e.rejection ? ' (rejection)' : '')).sort()));
await tab.evaluate("setTimeout(() => { throw new Error('during the run'); }, 0)");
await new Promise(r => setTimeout(r, 200));
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range out.Content {
		lines = append(lines, c.Text)
	}
	want := []string{
		`[["GET","/data.json",200],["GET","/missing",404],["POST","/post",201]]`,
		`{"greeting": "hello from the server"}`,
		`a=1&b=two`,
		`["/missing"]`,
		`["log: x 3","error: bad {a: 1}"]`,
		`["Error: boom","Error: nope (rejection)"]`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("run output:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if out.PageErrors != 1 {
		t.Errorf("PageErrors = %d, want 1 (the error thrown during the run)", out.PageErrors)
	}
	if _, err := run(t, name, `await tab.request('r99999')`, 5*time.Second); !strings.Contains(fmt.Sprint(err), "r99999") {
		t.Errorf("an unknown request id: %v, want an error naming it", err)
	}
	if _, err := run(t, name, `await tab.requests({status: 'teapot'})`, 5*time.Second); errcode.Of(err) != errcode.BadRequest {
		t.Errorf("a bad status filter: %v, want bad_request", err)
	}
}

// TestRoutes fulfils, aborts and changes requests with routes, checks what
// the server received, and that requests no route matches go through.
func TestRoutes(t *testing.T) {
	base, got := netServer(t)
	name := openAt(t, base+"/missing", tabs.OpenOptions{})
	out, err := run(t, name, `
await tab.route('**/data.json', {status: 200, contentType: 'application/json', body: '{"greeting": "from the route"}'});
await tab.route('**/blocked/*', {abort: 'blockedbyclient'});
await tab.route('**/post', {setHeaders: {'X-Routed': 'yes'}});
const r = await tab.evaluate("fetch('/data.json').then(r => r.json()).then(j => j.greeting)");
const b = await tab.evaluate("fetch('/blocked/x').then(() => 'loaded', e => 'failed: ' + e.name)");
const p = await tab.evaluate("fetch('/post', {method: 'POST', body: 'q'}).then(r => r.status)");
const m = await tab.evaluate("fetch('/missing').then(r => r.status)");
display([r, b, p, m].join(' | '));
display(JSON.stringify((await tab.routes()).map(x => [x.pattern, x.action, x.hits])));
display(JSON.stringify(await tab.unroute('**/data.json')));
display(await tab.evaluate("fetch('/data.json').then(r => r.json()).then(j => j.greeting)"));
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range out.Content {
		lines = append(lines, c.Text)
	}
	want := []string{
		"from the route | failed: TypeError | 201 | 404",
		`[["**/data.json","fulfill",1],["**/blocked/*","abort",1],["**/post","continue",1]]`,
		`{"removed":1}`,
		"hello from the server",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("run output:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if n := got("/data.json"); n != 1 {
		t.Errorf("the server got /data.json %d times, want 1 (after the unroute only)", n)
	}
	if n := got("/blocked/x"); n != 0 {
		t.Errorf("the server got the aborted /blocked/x %d times, want 0", n)
	}
	if _, err := run(t, name, `await tab.route('**', {abort: 'nope'})`, 5*time.Second); errcode.Of(err) != errcode.BadRequest {
		t.Errorf("a bad abort reason: %v, want bad_request", err)
	}
}

// TestHAR records a HAR with embedded content and reads it back.
func TestHAR(t *testing.T) {
	base, _ := netServer(t)
	name := openAt(t, base+"/missing", tabs.OpenOptions{})
	path := filepath.Join(t.TempDir(), "page.har")
	out, err := run(t, name, fmt.Sprintf(`
await tab.har.start({content: 'embed'});
await tab.goto(%q);
const r = await tab.har.stop(%q);
display(r.entries >= 4 ? 'entries ok' : 'entries ' + r.entries);
`, base+"/page", path), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Content) != 1 || out.Content[0].Text != "entries ok" {
		t.Errorf("run output: %+v", out.Content)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Log struct {
			Version string
			Entries []struct {
				Request  struct{ Method, URL string }
				Response struct {
					Status  int
					Content struct{ Text string }
				}
			}
		}
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	if h.Log.Version != "1.2" {
		t.Errorf("HAR version %q", h.Log.Version)
	}
	found := false
	for _, e := range h.Log.Entries {
		if strings.HasSuffix(e.Request.URL, "/data.json") {
			found = e.Response.Status == 200 && strings.Contains(e.Response.Content.Text, "hello from the server")
		}
	}
	if !found {
		t.Errorf("the HAR has no /data.json entry with its body: %s", b)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("HAR file mode: %v %v", fi.Mode(), err)
	}
}

// dotPNG is a 1x1 transparent PNG.
var dotPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// TestRouteSeesCachedResource routes an image the page loaded before,
// with a cache lifetime: the reload must not take it from the cache past
// the route (the trial's bug: the route had 0 hits and the image showed).
func TestRouteSeesCachedResource(t *testing.T) {
	base, got := netServer(t)
	name := openAt(t, base+"/img", tabs.OpenOptions{})
	out, err := run(t, name, `
const w0 = await tab.evaluate(() => document.getElementById('img').naturalWidth);
await tab.route('**/dot.png', {abort: 'blockedbyclient'});
await tab.reload();
const w1 = await tab.evaluate(() => document.getElementById('img').naturalWidth);
display([w0, w1, (await tab.routes())[0].hits].join(' '));
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Content) != 1 || out.Content[0].Text != "1 0 1" {
		t.Errorf("width before, width after the route and reload, hits: %+v, want 1 0 1", out.Content)
	}
	if n := got("/dot.png"); n != 1 {
		t.Errorf("the server got /dot.png %d times, want 1 (before the route)", n)
	}
}

// TestPageGlobalHint: a run that reaches for a page global is told where
// the page is (the trial's `run -e 'return navigator.userAgent'`).
func TestPageGlobalHint(t *testing.T) {
	base, _ := netServer(t)
	name := openAt(t, base+"/missing", tabs.OpenOptions{})
	_, err := run(t, name, `return navigator.userAgent + " " + innerWidth`, 5*time.Second)
	var h errcode.Hinter
	if errcode.Of(err) != errcode.ScriptError || !errors.As(err, &h) || !strings.Contains(h.ErrorHint(), "tab.evaluate(() =>") {
		t.Errorf("run with navigator: %v, want script_error with a hint naming tab.evaluate", err)
	}
	_, err = run(t, name, `return notAPageThing`, 5*time.Second)
	if errors.As(err, &h) && h.ErrorHint() != "" {
		t.Errorf("an unknown name that is no page global got the page hint: %q", h.ErrorHint())
	}
}
