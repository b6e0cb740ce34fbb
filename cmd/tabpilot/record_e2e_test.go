package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCLIRecordReplay(t *testing.T) {
	e, _ := browserEnv(t)
	var saved atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			saved.Store(r.FormValue("city"))
			fmt.Fprint(w, `<!doctype html><title>Saved</title><p>Saved</p>`)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Form</title><form method=post><label>City <input name=city></label><button>Save</button></form>`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "flow.js")
	mustRun(t, e, "record", "start", "--tab", "rec")
	mustRun(t, e, "open", srv.URL+"/", "--tab", "rec")
	obs := mustRun(t, e, "observe", "--tab", "rec")
	num := func(name string) string {
		for _, l := range strings.Split(obs, "\n") {
			if strings.Contains(l, `"`+name+`"`) || strings.Contains(l, "["+name+"]") {
				return strings.Fields(l)[0]
			}
		}
		t.Fatalf("no %q in:\n%s", name, obs)
		return ""
	}
	mustRun(t, e, "fill", num("City"), "Lyon", "--tab", "rec")
	mustRun(t, e, "click", num("Save"), "--tab", "rec")
	out := mustRun(t, e, "record", "stop", file)
	if !strings.Contains(out, "Recorded 3 steps to "+file) {
		t.Errorf("record stop: %s", out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"// step 1\nawait tab.goto(\"" + srv.URL + "/\");\n",
		"// step 2\nawait tab.fill('aria/City[role=\"textbox\"]', \"Lyon\");\n",
		"// step 3\nawait tab.click('aria/Save[role=\"button\"]');\n",
	} {
		if !strings.Contains(string(b), w) {
			t.Errorf("script lacks %q:\n%s", w, b)
		}
	}
	saved.Store("")
	mustRun(t, e, "open", "--tab", "again")
	if out := mustRun(t, e, "replay", file, "--tab", "again"); !strings.Contains(out, `Replayed 3 steps on tab "again"`) {
		t.Errorf("replay: %s", out)
	}
	if got := saved.Load(); got != "Lyon" {
		t.Errorf("replay posted city %q, want Lyon", got)
	}
	// A broken step: exit 1, the step, its locator and the candidates.
	broken := strings.Replace(string(b), "aria/Save[", "aria/Submit[", 1)
	if err := os.WriteFile(file, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.run("replay", file, "--tab", "again")
	if code != 1 || !strings.Contains(stderr, "step 3 failed") || !strings.Contains(stderr, `locator: aria/Submit[role="button"]`) || !strings.Contains(stderr, `button "Save"`) {
		t.Errorf("broken replay: exit %d\n%s", code, stderr)
	}
}
