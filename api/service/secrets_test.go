package service_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/secrets"
)

// The secret of the login flow: its characters encode differently in a
// form body, JSON, HTML and a URL.
const (
	secretPW   = `S3cr3t&p@ss+w/rd"<q>`
	secretUser = "alice-the-user"
)

// loginServer serves a login form that posts to itself, and a welcome
// page that shows the password back every way a page can: in its text, in
// a hidden input, in a text field set by a script, and in console.log.
type loginServer struct {
	*httptest.Server
	mu       sync.Mutex
	gotUser  string
	gotPW    string
	gotPosts int
}

func newLoginServer(t *testing.T) *loginServer {
	ls := &loginServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>Sign in</title>
<form method="post" action="/login">
<label>User <input id="user" name="user"></label>
<label>Password <input id="pw" name="password" type="password"></label>
<button id="go" type="submit">Sign in</button>
</form>`))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		pw := r.PostForm.Get("password")
		ls.mu.Lock()
		ls.gotUser, ls.gotPW = r.PostForm.Get("user"), pw
		ls.gotPosts++
		ls.mu.Unlock()
		js, _ := json.Marshal(pw)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>Welcome</title>
<main><h1>Welcome ` + html.EscapeString(r.PostForm.Get("user")) + `</h1>
<p>You signed in with the password ` + html.EscapeString(pw) + `.</p>
<input type="hidden" id="echo" value="` + html.EscapeString(pw) + `">
<label>Shown <input id="shown" type="text"></label>
<label>Short <input id="short" type="text" maxlength="5"></label>
</main>
<script>
const pw = ` + string(js) + `;
console.log("the password is " + pw);
document.getElementById("shown").value = pw;
</script>`))
	})
	ls.Server = httptest.NewServer(mux)
	t.Cleanup(ls.Close)
	return ls
}

// outputs collects everything the service gave back, as the doors see it.
type outputs struct {
	t    *testing.T
	svc  *service.Service
	all  []string
	errs []string
}

// call is a JSON-RPC call through Service.Call; it records the result's
// JSON and fails the test on a protocol error.
func (o *outputs) call(method string, params any) *api.Result {
	o.t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		o.t.Fatal(err)
	}
	res, err := o.svc.Call(context.Background(), method, p)
	if err != nil {
		o.t.Fatalf("%s: %v", method, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		o.t.Fatalf("%s: marshal the result: %v", method, err)
	}
	o.all = append(o.all, method+": "+string(b))
	if res.IsError {
		o.errs = append(o.errs, res.Text())
	}
	return res
}

func (o *outputs) ok(method string, params any) *api.Result {
	o.t.Helper()
	res := o.call(method, params)
	if res.IsError {
		o.t.Fatalf("%s: %s", method, res.Text())
	}
	return res
}

// secretForms are the forms in which the password must appear nowhere.
func secretForms() map[string]string {
	j, _ := json.Marshal(secretPW)
	forms := map[string]string{
		"raw":    secretPW,
		"query":  url.QueryEscape(secretPW),
		"path":   url.PathEscape(secretPW),
		"json":   string(j[1 : len(j)-1]),
		"html":   html.EscapeString(secretPW),
		"base64": base64.StdEncoding.EncodeToString([]byte(secretPW)),
		// As the markdown converter leaves it: only < and > escaped.
		"markdown": strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(secretPW),
	}
	for i, f := range secrets.Forms(secretPW) {
		forms["form"+strconv.Itoa(i)] = f
	}
	return forms
}

// assertNoSecret checks text, and each string of the JSON documents it
// holds (one, or JSON lines), for every form of the secret: a string of a
// JSON document may hold it in a form its escaping hides.
func assertNoSecret(t *testing.T, what, text string) {
	t.Helper()
	assertNoForm(t, what, text)
	dec := json.NewDecoder(strings.NewReader(text))
	for n := 0; ; n++ {
		var v any
		if err := dec.Decode(&v); err != nil {
			if n == 0 {
				if i := strings.IndexAny(text, "{["); i > 0 { // "method: {json}"
					assertNoSecret(t, what, text[i:])
				}
			}
			return
		}
		walkStrings(v, func(s string) { assertNoForm(t, what+" (a JSON string)", s) })
	}
}

func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for k, e := range x {
			f(k)
			walkStrings(e, f)
		}
	}
}

func assertNoForm(t *testing.T, what, text string) {
	t.Helper()
	for kind, f := range secretForms() {
		if strings.Contains(text, f) {
			i := strings.Index(text, f)
			t.Errorf("%s holds the secret (%s form) at %d: …%s…", what, kind, i, text[max(0, i-80):min(len(text), i+len(f)+40)])
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecretsLoginFlow drives a login through every door's path
// (Service.Call) with the password given as a secret, and then greps
// every output for it: results, observations, evaluate and run output,
// extract, screenshot text, the network listing and the login request's
// body, the console, a HAR with bodies, the audit log, the logs, errors
// and the full observation's file.
func TestSecretsLoginFlow(t *testing.T) {
	ls := newLoginServer(t)
	dir := t.TempDir()
	secFile := filepath.Join(dir, "secrets.env")
	if err := os.WriteFile(secFile, []byte("USER="+secretUser+"\nPW='"+secretPW+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := secrets.Load(secFile)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := service.OpenAudit(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc := service.New(&service.Options{BrowserArgs: testenv.BrowserArgs, MaxTimeout: 60 * time.Second,
		Secrets: store, Audit: audit, Logger: logger})
	t.Cleanup(func() {
		svc.Shutdown(context.Background())
		audit.Close()
	})
	o := &outputs{t: t, svc: svc}
	const tab = "login"
	c := api.Common{Name: tab, Timeout: 30}

	o.ok("open", api.OpenRequest{Common: c, URL: ls.URL + "/login"})
	o.ok("har", api.HARRequest{Common: c, Op: "start", Content: "embed"})

	// type with a placeholder, on the JSON-RPC path.
	typed := o.ok("type", api.ActRequest{Common: c, Target: "#pw", Text: "{{secret:PW}}"})
	if !strings.Contains(typed.Text(), "{{secret:PW}}") && !strings.Contains(typed.Text(), "#pw") {
		t.Errorf("type's text: %q", typed.Text())
	}
	if v, _ := typed.Details["value"].(string); strings.Trim(v, "•") != "" && v != "••••" {
		t.Errorf("type's value = %q, want dots", v)
	}
	// An unknown secret fails, naming it and not typing anything.
	bad := o.call("fill", api.ActRequest{Common: c, Target: "#user", Text: "x{{secret:NOPE}}"})
	if e := bad.ErrorOf(); e == nil || e.Code != errcode.BadRequest || e.Message != "unknown secret NOPE" {
		t.Fatalf("unknown secret: %+v", e)
	}

	// A run: secret() names it, fill sends it, the page echoes it back.
	run := o.ok("run", api.RunRequest{Common: c, Code: `
		const p = secret("PW");
		if (p !== "{{secret:PW}}") throw new Error("secret() gave " + p);
		await tab.fill("#user", secret("USER"));
		await tab.fill("#pw", p);
		await tab.click("#go");
		await tab.waitFor("#shown");
		const echo = await tab.evaluate(() => document.querySelector("#echo").value);
		console.log("the script read", echo);
		display("echo: " + echo);
		return {echo, placeholder: p, shown: await tab.value("#shown")};`})
	if got := run.Text(); !strings.Contains(got, "echo: ••••") || !strings.Contains(got, `"echo": "••••"`) || !strings.Contains(got, "{{secret:PW}}") {
		t.Errorf("run output: %s", got)
	}
	ls.mu.Lock()
	gotPW, gotUser, posts := ls.gotPW, ls.gotUser, ls.gotPosts
	ls.mu.Unlock()
	if gotPW != secretPW || gotUser != secretUser || posts != 1 {
		t.Fatalf("the server got user %q, password %q in %d posts; want the secrets", gotUser, gotPW, posts)
	}

	// evaluate, on its own.
	ev := o.ok("run", api.RunRequest{Common: c, Code: `return await tab.evaluate(() => document.querySelector('#echo').value)`})
	if ev.Text() != "••••" {
		t.Errorf("evaluate of #echo = %q, want ••••", ev.Text())
	}

	// The observation shows the text field that holds it as ••••.
	obs := o.ok("observe", api.ObserveRequest{Common: c})
	if !strings.Contains(obs.Text(), `"Shown" ••••`) && !strings.Contains(obs.Text(), `••••`) {
		t.Errorf("observe text: %s", obs.Text())
	}
	shownValue := ""
	for _, e := range obs.Details["elements"].([]any) {
		if m := e.(map[string]any); m["name"] == "Shown" {
			shownValue, _ = m["value"].(string)
		}
	}
	if shownValue != "••••" {
		t.Errorf("the Shown field's value = %q, want ••••", shownValue)
	}
	// Over the budget, the full observation goes to a file: masked too.
	small := o.ok("observe", api.ObserveRequest{Common: c, IncludeAll: true, MaxTokens: 10})
	var files []string
	if p, _ := small.Details["fullPath"].(string); p != "" {
		files = append(files, p)
		t.Cleanup(func() { os.Remove(p) })
	} else {
		t.Errorf("a 10-token observation wrote no full file: %v", small.Details)
	}

	if ex := o.ok("extract", api.ExtractRequest{Common: c}); !strings.Contains(ex.Text(), "Welcome "+secretUser) && !strings.Contains(ex.Text(), "Welcome ••••") {
		t.Errorf("extract: %s", ex.Text())
	} else if !strings.Contains(ex.Text(), "password ••••") {
		t.Errorf("extract does not show the password masked: %s", ex.Text())
	}
	o.ok("screenshot", api.ScreenshotRequest{Common: c})

	// The network listing, and the login request with its body.
	netRes := o.ok("network", api.NetworkRequest{Common: c, All: true})
	loginID := ""
	for _, line := range strings.Split(netRes.Text(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == "POST" {
			loginID = f[0]
		}
	}
	if loginID == "" {
		t.Fatalf("no POST in the network listing: %s", netRes.Text())
	}
	req := o.ok("network", api.NetworkRequest{Common: c, ID: loginID})
	if !strings.Contains(req.Text(), "password=••••") {
		t.Errorf("the login request's body is not shown masked: %s", req.Text())
	}
	con := o.ok("console", api.ConsoleRequest{Common: c, All: true})
	if !strings.Contains(con.Text(), "the password is ••••") {
		t.Errorf("console: %s", con.Text())
	}

	// Errors that would quote the value: a cut fill, a script's throw.
	cut := o.call("fill", api.ActRequest{Common: c, Target: "#short", Text: "{{secret:PW}}"})
	if e := cut.ErrorOf(); e == nil || e.Code != errcode.NotActionable || !strings.Contains(e.Message, "••••") {
		t.Errorf("a cut fill: %+v", e)
	}
	thrown := o.call("run", api.RunRequest{Common: c, Code: `throw new Error("leak " + await tab.evaluate(() => document.querySelector('#echo').value))`})
	if e := thrown.ErrorOf(); e == nil || e.Code != errcode.ScriptError || !strings.Contains(e.Message, "leak ••••") {
		t.Errorf("a script's throw: %+v", e)
	}

	harPath := filepath.Join(dir, "login.har")
	o.ok("har", api.HARRequest{Common: c, Op: "stop", Save: harPath})
	files = append(files, harPath, filepath.Join(dir, "audit.jsonl"))
	o.ok("close", api.CloseRequest{Common: c})

	for _, out := range o.all {
		assertNoSecret(t, "result "+out[:strings.IndexByte(out, ':')], out)
	}
	for _, e := range o.errs {
		assertNoSecret(t, "error", e)
	}
	assertNoSecret(t, "the logs", logs.String())
	if !strings.Contains(logs.String(), "the script read") {
		t.Errorf("the script's console.log is not in the logs: %.2000s", logs.String())
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		assertNoSecret(t, f, string(b))
		if f == harPath && (!strings.Contains(string(b), "password=••••") || !strings.Contains(string(b), "the password ••••")) {
			t.Errorf("the HAR does not show the post data and the page masked: %.6000s", b)
		}
	}
	aud, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if !strings.Contains(string(aud), `"secrets":["PW"]`) {
		t.Errorf("the audit log does not name the secret: %s", aud)
	}
}

// TestSecretsNone: without --secrets, secret() and a placeholder fail
// with a clear error and nothing is typed.
func TestSecretsNone(t *testing.T) {
	ls := newLoginServer(t)
	svc := newService(t)
	o := &outputs{t: t, svc: svc}
	c := api.Common{Name: "nosecrets", Timeout: 30}
	o.ok("open", api.OpenRequest{Common: c, URL: ls.URL + "/login"})
	run := o.call("run", api.RunRequest{Common: c, Code: `await tab.type("#pw", secret("PW"))`})
	if e := run.ErrorOf(); e == nil || e.Code != errcode.BadRequest || !strings.Contains(e.Message, "no secrets file given (--secrets)") {
		t.Errorf("secret() without a file: %+v", e)
	}
	typ := o.call("type", api.ActRequest{Common: c, Target: "#pw", Text: "{{secret:PW}}"})
	if e := typ.ErrorOf(); e == nil || e.Code != errcode.BadRequest || e.Message != "no secrets file given (--secrets)" {
		t.Errorf("a placeholder without a file: %+v", e)
	}
	v := o.ok("run", api.RunRequest{Common: c, Code: `return await tab.value("#pw")`})
	if v.Text() != "" {
		t.Errorf("the field got %q", v.Text())
	}
}

// TestSecretTypedInOnePiece: a type of {{secret:NAME}} into a field whose
// page logs every input event shows no prefix of the value in the console
// (the value goes in one Input.insertText, not key by key), and a fetch of
// the value encoded as encodeURIComponent encodes it is masked in the
// network listing.
func TestSecretTypedInOnePiece(t *testing.T) {
	const value = "tok$en&=/+ xyz"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>t</title><input id=tok aria-label=Token oninput="console.log('now', this.value)">`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	f := filepath.Join(dir, "s.env")
	if err := os.WriteFile(f, []byte("TOK='"+value+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := secrets.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(&service.Options{BrowserArgs: testenv.BrowserArgs, MaxTimeout: 60 * time.Second, Secrets: store})
	defer svc.Shutdown(context.Background())
	ctx := context.Background()
	tab := api.Common{Name: "t"}
	if res := svc.Open(ctx, &api.OpenRequest{Common: tab, URL: srv.URL + "/"}); res.IsError {
		t.Fatal(res.Text())
	}
	if res := svc.Act(ctx, "type", &api.ActRequest{Common: tab, Target: "#tok", Text: "{{secret:TOK}}"}); res.IsError {
		t.Fatal(res.Text())
	}
	svc.Run(ctx, &api.RunRequest{Common: tab, Code: `await tab.evaluate(() => fetch("/api?t=" + encodeURIComponent(document.getElementById("tok").value)).catch(() => {}))`})
	out := svc.Console(ctx, &api.ConsoleRequest{Common: tab, All: true}).Text() + svc.Network(ctx, &api.NetworkRequest{Common: tab}).Text()
	for n := 4; n <= len(value); n++ {
		if strings.Contains(out, value[:n]) {
			t.Fatalf("a prefix %q of the secret shows:\n%s", value[:n], out)
		}
	}
	if strings.Contains(out, "tok%24en") || !strings.Contains(out, "now ••••") {
		t.Fatalf("the console and network listing:\n%s", out)
	}
}
