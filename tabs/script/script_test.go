package script_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/script"
)

var (
	sup *tabs.Supervisor
	srv *httptest.Server
)

func TestMain(m *testing.M) {
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Counter</title><button id=inc onclick="this.dataset.n = (+this.dataset.n||0)+1; document.getElementById('out').textContent = 'n=' + this.dataset.n">Add</button>
<input id=q aria-label=Query><a href="/b">B</a><div id=out>n=0</div>`)
	}))
	// Generous default timeouts: the test machine has 2 cores shared with
	// other packages' browsers, and an open can take tens of seconds there.
	sup = tabs.NewSupervisor(&tabs.Options{Browser: browser.Options{Args: testenv.BrowserArgs}, Grace: time.Second,
		DefaultTimeout: time.Minute, MaxTimeout: 2 * time.Minute})
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	if err := sup.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		code = 1
	}
	cancel()
	srv.Close()
	os.Exit(code)
}

func runCode(t *testing.T, code string, timeout time.Duration) (*script.Output, error) {
	t.Helper()
	return runCodeWith(t, code, timeout, nil)
}

// runCodeWith runs code with opts on a fresh tab named after the test.
func runCodeWith(t *testing.T, code string, timeout time.Duration, opts *script.Options) (*script.Output, error) {
	t.Helper()
	name := strings.ReplaceAll(t.Name(), "/", "-")
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: srv.URL, WaitUntil: "load"}); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	s := script.New(code, opts)
	err := sup.Run(context.Background(), name, timeout, s)
	return s.Output(), err
}

func texts(o *script.Output) []string {
	var out []string
	for _, c := range o.Content {
		if c.Type == "text" {
			out = append(out, c.Text)
		}
	}
	return out
}

func TestRunActsAndReturns(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const obs = await tab.observe();
const add = obs.elements.find(e => e.role === 'button' && e.name === 'Add');
assert(add, 'no Add button in ' + obs.text);
await tab.click(add.id);
await tab.id(add.id).click();
await tab.fill('#q', 'hello');
display('title: ' + await tab.title());
return {out: await tab.evaluate(() => document.getElementById('out').textContent), q: await tab.evaluate(sel => document.querySelector(sel).value, '#q')};
`, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(out)
	want := []string{"title: Counter", "{\n  \"out\": \"n=2\",\n  \"q\": \"hello\"\n}"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("output = %q, want %q", got, want)
	}
}

func TestNothingReturned(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `await wait(10);`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(out); len(got) != 1 || !strings.HasPrefix(got[0], "Ran code on tab ") {
		t.Fatalf("output = %q", got)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code string
		want errcode.Code
		msg  string
	}{
		{`throw new Error("boom")`, errcode.ScriptError, "boom"},
		{`assert(1 === 2, "math")`, errcode.AssertionFailed, "assertion failed: math"},
		{`await tab.click('#missing-element')`, errcode.ElementNotFound, "#missing-element"},
		{`await tab.click('p-bogus/x')`, errcode.BadRequest, "unknown selector prefix"},
		{`this is not javascript`, errcode.ScriptError, "SyntaxError"},
		{`await tab.click(99999)`, errcode.StaleElement, "99999"},
		{`try { await tab.click('#nope') } catch (e) { return e.code }`, "", ""},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			out, err := runCode(t, c.code, 10*time.Second)
			if c.want == "" {
				if err != nil || texts(out)[0] != "element_not_found" {
					t.Fatalf("caught: out=%q err=%v", texts(out), err)
				}
				return
			}
			if errcode.Of(err) != c.want || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v (%s), want %s containing %q", err, errcode.Of(err), c.want, c.msg)
			}
		})
	}
}

func TestInfiniteLoopInterrupted(t *testing.T) {
	t.Parallel()
	_, err := runCode(t, `while (true) {}`, 1*time.Second)
	if errcode.Of(err) != errcode.Timeout {
		t.Fatalf("err = %v, want timeout", err)
	}
	// The tab stays usable: goja was interrupted, the page is fine.
	name := strings.ReplaceAll(t.Name(), "/", "-")
	s := script.New(`return await tab.title()`, nil)
	if err := sup.Run(context.Background(), name, 5*time.Second, s); err != nil {
		t.Fatalf("after interrupt: %v", err)
	}
	if got := texts(s.Output()); len(got) != 1 || got[0] != "Counter" {
		t.Fatalf("after interrupt: %q", got)
	}
}

func TestScreenshotAndExtract(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const shot = await tab.screenshot();
assert(shot.type === 'image' && shot.mimeType === 'image/jpeg', JSON.stringify(shot.mimeType));
const md = await tab.extract();
return md.includes('n=0') ? 'ok' : md;
`, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Screenshots) != 1 || out.Screenshots[0].Width != 1024 || out.Screenshots[0].Bytes > 150*1024 {
		t.Fatalf("screenshots = %+v", out.Screenshots)
	}
	var imgs int
	for _, c := range out.Content {
		if c.Type == "image" {
			imgs++
		}
	}
	if got := texts(out); imgs != 1 || got[len(got)-1] != "ok" {
		t.Fatalf("images=%d texts=%q", imgs, got)
	}
}

func TestGlobals(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const u = new URL('/x?a=1', 'http://h.test');
const enc = new TextEncoder().encode('hé');
const dec = new TextDecoder().decode(enc);
const b = Buffer.from('hi').toString('base64');
let fired = false; setTimeout(() => { fired = true }, 5);
await wait(30);
console.log('to the log');
return [u.searchParams.get('a'), enc.length, dec, b, fired, browser.kind, tab.name].join(',');
`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := "1,3,hé,aGk=,true,headless," + strings.ReplaceAll(t.Name(), "/", "-")
	if got := texts(out); len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// evaluate tells a function, an expression and statements apart by
// parsing the source, not by how it starts: an immediately invoked arrow
// is an expression, and an identifier that begins with "function" is not
// a function.
func TestEvaluateSourceKinds(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const r = [];
r.push(await tab.evaluate("(() => 6 * 7)()"));
r.push(await tab.evaluate("(a, b) => a + b", 2, 3));
r.push(await tab.evaluate("function (x) { return x + '!' }", "hi"));
r.push(await tab.evaluate("async x => x * 2", 4));
r.push(await tab.evaluate("window.functionsList = [1, 2]; functionsList.length"));
r.push(await tab.evaluate("functionsList.length"));
r.push(await tab.evaluate("await Promise.resolve('later')"));
r.push(await tab.evaluate("({a: 1})"));
r.push(await tab.evaluate("let q = 5; q + 1"));
r.push(await tab.evaluate("let q = 6; q + 1")); // REPL mode: let again
r.push(await tab.evaluate("const z = await Promise.resolve(2); z * 5"));
r.push(await tab.evaluate("(a) => a * 2;", 21));
try { await tab.evaluate("window"); } catch (e) { r.push(e.code); }
try { await tab.evaluate("document.title", 1); } catch (e) { r.push(e.code); }
try { await tab.evaluate((f) => f, () => 1); } catch (e) { r.push(e.code); }
r.push(await tab.evaluate((a, b) => [a, b], undefined, 2));
return JSON.stringify(r);
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := `[42,5,"hi!",8,2,2,"later",{"a":1},6,7,10,42,"script_error","bad_request","bad_request",[null,2]]`
	if got := texts(out); len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// goja's toString drops the closing parentheses of an arrow function with a
// parenthesised body; evaluate repairs the text before the page parses it.
func TestEvaluateParenthesisedArrow(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const a = await tab.evaluate(() => (document.title));
const b = await tab.evaluate(() => ({n: (1 + (2))}));
const c = await tab.evaluate((x, y) => (x * (y)), 6, 7);
return JSON.stringify([a, b, c]);
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(out); len(got) != 1 || !strings.HasSuffix(got[0], `,{"n":3},42]`) || strings.HasPrefix(got[0], `[""`) {
		t.Fatalf("got %q", got)
	}
}

// An error names the line and column in the caller's code, not in the
// function tabpilot wraps it in.
func TestScriptErrorPositions(t *testing.T) {
	t.Parallel()
	cases := []struct{ code, want string }{
		{"const a = 1;\nnull.x;", "(line 2:6)"},
		{"const a = 1;\nconst b = ;", "SyntaxError: line 2:11 Unexpected token"},
		// A bracket or an expression left open is found only in the
		// wrapper's closing, past the code.
		{"const a = 1;\nreturn a +", "SyntaxError: the code ends too early, after line 2"},
		{"if (a) {", "SyntaxError: the code ends too early, after line 1"},
		{"const a = 1;\nif (a) {\n\n", "SyntaxError: the code ends too early, after line 2"},
		{"throw new Error('boom')", "boom (line 1:7)"},
		// A failed tab call and an assert name the line of the call.
		{"const a = 1;\n\nawait tab.click('#nope', {timeout: 100});", `no element matches "#nope" (line 3:16)`},
		{"const a = 1;\nassert(a === 2, 'two');", "assertion failed: two (line 2:7)"},
	}
	for _, c := range cases {
		_, err := runCode(t, c.code, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.code, err, c.want)
		}
	}
}

// A run whose time runs out while a tab call waits on the page says what
// it waited for and where, and keeps the tab: a promise that never
// settles is no hung page.
func TestTimeoutNamesTheWait(t *testing.T) {
	t.Parallel()
	cases := []struct{ code, want string }{
		{"const a = 1;\nawait tab.waitFor('text/Never there');", "waitFor text/Never there: not visible within the timeout (line 2:"},
		{"await tab.evaluate('new Promise(() => {})');", "evaluate: the page's script had not returned"},
	}
	for _, c := range cases {
		_, err := runCode(t, c.code, 2*time.Second)
		if errcode.Of(err) != errcode.Timeout || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a timeout that contains %q", c.code, err, c.want)
		}
		name := strings.ReplaceAll(t.Name(), "/", "-")
		if tab, err := sup.Tab(name); err != nil || !tab.Alive() {
			t.Errorf("%q: the tab did not survive the timeout: %v", c.code, err)
		}
	}
}

// A run that returns null says so; one that returns nothing says it ran.
func TestReturnNull(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, "return null", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(out); len(got) != 1 || got[0] != "null" {
		t.Fatalf("return null: %q, want [\"null\"]", got)
	}
	out, err = runCode(t, "await wait(1)", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(out); len(got) != 1 || !strings.HasPrefix(got[0], "Ran code on tab") {
		t.Fatalf("no return value: %q, want only the \"Ran code\" line", got)
	}
}

// TestTimerOrder: timers and wait run in the order they are due, then in
// the order they were set, however the Go scheduler runs their goroutines:
// a wait resolves after the timers set before it with no longer a delay;
// a timer a callback sets with no delay runs after the timers already due;
// a cleared timer and interval do not run, and an interval runs until it
// is cleared.
func TestTimerOrder(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const got = [];
for (let i = 0; i < 50; i++) setTimeout(() => got.push(i), 5);
setTimeout(() => { got.push('a'); setTimeout(() => got.push('c'), 0); }, 5);
setTimeout(() => got.push('b'), 5);
const cleared = setTimeout(() => got.push('cleared'), 1);
clearTimeout(cleared);
const never = setInterval(() => got.push('never'), 1);
clearInterval(never);
await wait(5);
const first = [...Array(50).keys(), 'a', 'b'].join(' ');
const atWait = got.join(' ') === first || got.join(' ') === first + ' c';
await wait(20);
let n = 0;
await new Promise(resolve => { const iv = setInterval(() => { if (++n === 3) { clearInterval(iv); resolve(); } }, 1); });
await wait(20);
// An interval with no delay, or 0, runs every 1 ms, as in Node.
const zero = [0, 0];
await new Promise(resolve => {
  const a = setInterval(() => { zero[0]++; }, 0);
  const b = setInterval(() => { if (++zero[1] === 5) { clearInterval(a); clearInterval(b); resolve(); } });
});
return [atWait, got.slice(50).join(' '), n, zero[0] >= 4].join(',');
`, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(out); len(got) != 1 || got[0] != "true,a b c,3,true" {
		t.Fatalf("got %q", got)
	}
}
