package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/errcode"
)

// flowApp is a small site with a login, a form (a text field, a select,
// a file input, a link that opens a popup) and a list whose rows each have
// a Delete button behind a confirm dialog. It records what it received.
type flowApp struct {
	mu     sync.Mutex
	got    []string // "login a@b.c hunter2", "form …", "delete Bob"
	signIn string   // the sign-in button's label
	rows   []string
	srv    *httptest.Server
}

func newFlowApp(t *testing.T) *flowApp {
	a := &flowApp{signIn: "Sign in", rows: []string{"Alice", "Bob", "Carol"}}
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
	}
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		label := a.signIn
		a.mu.Unlock()
		page(w, "Login", `<h1>Login</h1><form method="post" action="/login">
<label>Email <input name="email" type="email"></label>
<label>Password <input name="password" type="password"></label>
<button type="submit">`+label+`</button></form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		a.add("login " + r.FormValue("email") + " " + r.FormValue("password"))
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s-" + r.FormValue("email"), Path: "/"})
		http.Redirect(w, r, "/profile", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /profile", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Profile", `<h1>Profile</h1><form method="post" action="/profile" enctype="multipart/form-data">
<label>Full name <input name="fullname"></label>
<label>Country <select name="country"><option value="">Choose…</option><option value="fr">France</option><option value="jp">Japan</option></select></label>
<label>Avatar <input type="file" name="avatar"></label>
<p><a href="/terms" target="_blank">Terms of use</a></p>
<button type="submit">Save profile</button></form>`)
	})
	mux.HandleFunc("POST /profile", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		file := "none"
		if f, h, err := r.FormFile("avatar"); err == nil {
			b, _ := io.ReadAll(f)
			file = h.Filename + ":" + string(b)
		}
		ck, _ := r.Cookie("session")
		cv := ""
		if ck != nil {
			cv = ck.Value
		}
		a.add(fmt.Sprintf("profile %s %s %s cookie=%s", r.FormValue("fullname"), r.FormValue("country"), file, cv))
		http.Redirect(w, r, "/items", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /terms", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Terms", `<h1>Terms of use</h1><p>Be nice.</p>`)
	})
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		var rows strings.Builder
		a.mu.Lock()
		for _, n := range a.rows {
			fmt.Fprintf(&rows, `<tr><td>%s</td><td>%s@example.com</td><td><button type="button" data-name="%s">Delete</button></td></tr>`, n, strings.ToLower(n), n)
		}
		a.mu.Unlock()
		page(w, "Items", `<h1>Items</h1><table><tbody>`+rows.String()+`</tbody></table><p id="status"></p>
<script>
for (const b of document.querySelectorAll('button[data-name]')) b.addEventListener('click', async () => {
  const n = b.dataset.name;
  if (!confirm('Delete ' + n + '?')) return;
  await fetch('/delete?name=' + n, {method: 'POST'});
  b.closest('tr').remove();
  document.getElementById('status').textContent = 'Deleted ' + n;
});
</script>`)
	})
	mux.HandleFunc("POST /delete", func(w http.ResponseWriter, r *http.Request) {
		a.add("delete " + r.URL.Query().Get("name"))
		a.mu.Lock()
		a.rows = slices.DeleteFunc(a.rows, func(s string) bool { return s == r.URL.Query().Get("name") })
		a.mu.Unlock()
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *flowApp) add(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, s)
}

// reset gives the app fresh state and returns what it had received.
func (a *flowApp) reset() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	got := a.got
	a.got, a.rows = nil, []string{"Alice", "Bob", "Carol"}
	return got
}

// numberOf returns the number of the element with role and name in the
// tab's observation, through the service (as an agent reads it).
func numberOf(t *testing.T, svc *service.Service, tab, role, name string) string {
	t.Helper()
	res := svc.Observe(context.Background(), &api.ObserveRequest{Common: api.Common{Name: tab}})
	if res.IsError {
		t.Fatalf("observe: %s", res.Text())
	}
	b, _ := json.Marshal(res.Details["elements"])
	var els []struct {
		ID   int    `json:"id"`
		Role string `json:"role"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal(b, &els)
	for _, e := range els {
		if e.Role == role && e.Name == name {
			return fmt.Sprint(e.ID)
		}
	}
	t.Fatalf("no %s %q in the observation:\n%s", role, name, res.Text())
	return ""
}

// must fails the test when res is an error.
func must(t *testing.T, what string, res *api.Result) *api.Result {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: %s", what, res.Text())
	}
	return res
}

// drive runs the flow on tab by element numbers, as an agent does.
func drive(t *testing.T, svc *service.Service, app *flowApp, tab, avatar string) {
	ctx := context.Background()
	c := api.Common{Name: tab}
	must(t, "open", svc.Open(ctx, &api.OpenRequest{Common: c, URL: app.srv.URL + "/login"}))
	must(t, "fill email", svc.Act(ctx, "fill", &api.ActRequest{Common: c, Target: api.Target(numberOf(t, svc, tab, "textbox", "Email")), Text: "a@b.c"}))
	must(t, "fill password", svc.Act(ctx, "fill", &api.ActRequest{Common: c, Target: api.Target(numberOf(t, svc, tab, "textbox", "Password")), Text: "hunter2"}))
	must(t, "sign in", svc.Act(ctx, "click", &api.ActRequest{Common: c, Target: api.Target(numberOf(t, svc, tab, "button", "Sign in"))}))
	must(t, "fill name", svc.Act(ctx, "fill", &api.ActRequest{Common: c, Target: api.Target(numberOf(t, svc, tab, "textbox", "Full name")), Text: `Ann "Q" O'Neil`}))
	must(t, "select", svc.Select(ctx, &api.SelectRequest{Common: c, Target: api.Target(numberOf(t, svc, tab, "combobox", "Country")), Values: []string{"Japan"}}))
	must(t, "upload", svc.Upload(ctx, &api.UploadRequest{Common: c, Target: api.Target(numberOf(t, svc, tab, "button", "Avatar")), Files: []string{avatar}}))
	// One step from inside a run: recorded all the same.
	must(t, "terms", svc.Run(ctx, &api.RunRequest{Common: c, Code: "await tab.click(" + numberOf(t, svc, tab, "link", "Terms of use") + ")"}))
	must(t, "save", svc.Act(ctx, "click", &api.ActRequest{Common: c, Target: api.Target(numberOf(t, svc, tab, "button", "Save profile"))}))
	// The second of three Delete buttons: only its row tells it apart.
	res := svc.Observe(ctx, &api.ObserveRequest{Common: c})
	var del []string
	b, _ := json.Marshal(res.Details["elements"])
	var els []struct {
		ID   int    `json:"id"`
		Role string `json:"role"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal(b, &els)
	for _, e := range els {
		if e.Name == "Delete" {
			del = append(del, fmt.Sprint(e.ID))
		}
	}
	if len(del) != 3 {
		t.Fatalf("want 3 Delete buttons, got %v:\n%s", del, res.Text())
	}
	clicked := must(t, "delete", svc.Act(ctx, "click", &api.ActRequest{Common: c, Target: api.Target(del[1])}))
	if clicked.Details["dialog"] == nil {
		t.Fatalf("delete opened no dialog: %v", clicked.Details)
	}
	must(t, "accept", svc.Dialog(ctx, &api.DialogRequest{Common: c, Response: "accept"}))
	must(t, "wait", svc.Wait(ctx, &api.WaitRequest{Common: c, Text: "Deleted Bob"}))
}

// finalState is the tab's URL and the status line of the items page.
func finalState(t *testing.T, svc *service.Service, tab string) string {
	t.Helper()
	res := must(t, "final", svc.Run(context.Background(), &api.RunRequest{Common: api.Common{Name: tab},
		Code: `await tab.waitFor("text/Deleted Bob"); return new URL(await tab.url()).pathname + " " + await tab.evaluate(() => document.getElementById("status").textContent + " rows=" + document.querySelectorAll("tr").length)`}))
	return res.Text()
}

func TestRecordReplayFlow(t *testing.T) {
	app := newFlowApp(t)
	svc := newService(t)
	ctx := context.Background()
	dir := t.TempDir()
	avatar := filepath.Join(dir, "avatar.txt")
	if err := os.WriteFile(avatar, []byte("AVATAR-BYTES"), 0o600); err != nil {
		t.Fatal(err)
	}
	start, err := svc.Call(ctx, "record", json.RawMessage(`{"op":"start"}`))
	if err != nil {
		t.Fatal(err)
	}
	must(t, "record start", start)
	drive(t, svc, app, "main", avatar)
	file := filepath.Join(dir, "flow.js")
	stop := must(t, "record stop", svc.Record(ctx, &api.RecordRequest{Op: "stop", Save: file}))
	if stop.Details["steps"] != 12 {
		t.Errorf("steps = %v, want 12:\n%s", stop.Details["steps"], stop.Text())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	t.Logf("recorded:\n%s", script)
	want := []string{
		"// step 1\nawait tab.goto(\"" + app.srv.URL + "/login\");\n",
		"// step 2\nawait tab.fill('aria/Email[role=\"textbox\"]', \"a@b.c\");\n",
		"// step 3\nawait tab.fill('aria/Password[role=\"textbox\"]', \"hunter2\");\n",
		"// step 4\nawait tab.click('aria/Sign in[role=\"button\"]');\n",
		"// step 5\nawait tab.fill('aria/Full name[role=\"textbox\"]', \"Ann \\\"Q\\\" O'Neil\");\n",
		"// step 6\nawait tab.select('aria/Country[role=\"combobox\"]', \"Japan\");\n",
		"// step 7\nawait tab.uploadFile('input[name=\"avatar\"]', \"" + avatar + "\");\n",
		"// step 8\nawait tab.click('aria/Terms of use[role=\"link\"]');\n",
		"// step 9\nawait tab.click('aria/Save profile[role=\"button\"]');\n",
		"// step 10\nawait tab.click('tr:has-text(\"Bob\") >> aria/Delete[role=\"button\"]');\n",
		"// step 12\nawait tab.waitFor(\"text/Deleted Bob\");\n",
		"// step 11\nawait tab.acceptDialog();\n",
	}
	for _, w := range want {
		if !strings.Contains(script, w) {
			t.Errorf("script lacks %q", w)
		}
	}
	if strings.Contains(script, "FIXME") {
		t.Errorf("a step has no verified locator:\n%s", script)
	}
	first := app.reset()
	wantGot := []string{"login a@b.c hunter2", "profile Ann \"Q\" O'Neil jp avatar.txt:AVATAR-BYTES cookie=s-a@b.c", "delete Bob"}
	if !slices.Equal(first, wantGot) {
		t.Fatalf("live run: server got %q, want %q", first, wantGot)
	}
	liveEnd := finalState(t, svc, "main")

	// Replay on a fresh tab, in a browser context of its own (no cookie),
	// against fresh server state.
	c := api.Common{Name: "replay", Timeout: 60}
	must(t, "open replay tab", svc.Open(ctx, &api.OpenRequest{Common: c, URL: "about:blank", Context: "replay"}))
	rep := must(t, "replay", svc.Replay(ctx, &api.ReplayRequest{Common: c, File: file}))
	if rep.Details["ran"] != 12 || rep.Details["steps"] != 12 {
		t.Errorf("replay ran %v of %v steps, want 12: %s", rep.Details["ran"], rep.Details["steps"], rep.Text())
	}
	if got := app.reset(); !slices.Equal(got, wantGot) {
		t.Errorf("replay: server got %q, want %q", got, wantGot)
	}
	if end := finalState(t, svc, "replay"); end != liveEnd || end != "/items Deleted Bob rows=2" {
		t.Errorf("replay ended in %q, the live run in %q", end, liveEnd)
	}
}

func TestReplayReportsBrokenStep(t *testing.T) {
	app := newFlowApp(t)
	svc := newService(t)
	ctx := context.Background()
	code := "// step 1\nawait tab.goto(\"" + app.srv.URL + "/login\");\n" +
		"// step 2\nawait tab.fill('aria/Email[role=\"textbox\"]', \"a@b.c\");\n" +
		"// step 3\nawait tab.click('aria/Sign in[role=\"button\"]');\n"
	app.mu.Lock()
	app.signIn = "Log in"
	app.mu.Unlock()
	c := api.Common{Name: "broken"}
	must(t, "open", svc.Open(ctx, &api.OpenRequest{Common: c, URL: "about:blank"}))
	res := svc.Replay(ctx, &api.ReplayRequest{Common: c, Code: code})
	if !res.IsError {
		t.Fatalf("replay of a renamed button succeeded: %s", res.Text())
	}
	if res.Details["ran"] != 2 {
		t.Errorf("ran = %v, want 2", res.Details["ran"])
	}
	failed, _ := res.Details["failed"].(map[string]any)
	if failed["step"] != 3 || failed["locator"] != `aria/Sign in[role="button"]` || failed["code"] != errcode.ElementNotFound {
		t.Errorf("failed = %v", failed)
	}
	text := res.Text()
	for _, w := range []string{"element_not_found: step 3 failed:", `locator: aria/Sign in[role="button"]`, `nearest: `, `button "Log in"`} {
		if !strings.Contains(text, w) {
			t.Errorf("report lacks %q:\n%s", w, text)
		}
	}
	// Two look-alikes: a strict replay refuses to pick one.
	app.mu.Lock()
	app.signIn = "Sign in"
	app.mu.Unlock()
	amb := "// step 1\nawait tab.goto(\"" + app.srv.URL + "/items\");\n// step 2\nawait tab.click('aria/Delete[role=\"button\"]');\n"
	res = svc.Replay(ctx, &api.ReplayRequest{Common: c, Code: amb})
	if !res.IsError || !strings.Contains(res.Text(), "step 2 failed") || !strings.Contains(res.Text(), "matches 3 elements") {
		t.Errorf("ambiguous step: %s", res.Text())
	}
}

// TestRecordReplayJSONRPC drives record and replay through the JSON-RPC
// dispatch (Service.Call, as api/rpc and MCP reach it): start, an open
// and a click by number, stop into a file, replay the file on another
// tab, and the errors of a bad op and a relative path.
func TestRecordReplayJSONRPC(t *testing.T) {
	clicks := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/done" {
			clicks++
		}
		fmt.Fprint(w, `<!doctype html><title>rpc</title><a href="/done">Finish order</a>`)
	}))
	defer srv.Close()
	svc := newService(t)
	ctx := context.Background()
	call := func(method, params string) *api.Result {
		t.Helper()
		res, err := svc.Call(ctx, method, json.RawMessage(params))
		if err != nil {
			t.Fatalf("%s %s: %v", method, params, err)
		}
		return res
	}
	if res := call("record", `{"op":"start","name":"a"}`); res.IsError {
		t.Fatal(res.Text())
	}
	call("open", fmt.Sprintf(`{"name":"a","url":%q}`, srv.URL+"/"))
	obs := call("observe", `{"name":"a"}`)
	if !strings.Contains(obs.Text(), `1 "Finish order"`) {
		t.Fatalf("observe: %s", obs.Text())
	}
	call("click", `{"name":"a","target":1}`)
	file := filepath.Join(t.TempDir(), "flow.js")
	res := call("record", fmt.Sprintf(`{"op":"stop","save":%q}`, file))
	b, err := os.ReadFile(file)
	if res.IsError || err != nil || !strings.Contains(string(b), `tab.click('aria/Finish order[role="link"]')`) || !strings.Contains(string(b), "// step 2") {
		t.Fatalf("stop: %s; the file (%v):\n%s", res.Text(), err, b)
	}
	res = call("replay", fmt.Sprintf(`{"name":"b","file":%q}`, file))
	if res.IsError || res.Details["ran"] != 2 || clicks != 2 {
		t.Fatalf("replay: %s %v (the link was followed %d times, want 2)", res.Text(), res.Details, clicks)
	}
	for _, c := range [][2]string{{`{"op":"pause"}`, `record op "pause"`}, {`{"op":"stop","save":"rel.js"}`, "absolute path"}} {
		res := call("record", c[0])
		if e := res.ErrorOf(); e == nil || e.Code != errcode.BadRequest || !strings.Contains(e.Message, c[1]) {
			t.Errorf("record %s: %s", c[0], res.Text())
		}
	}
}
