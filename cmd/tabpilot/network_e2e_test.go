package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCLINetworkVerbs drives network, console, errors, har, route and
// unroute from the CLI against a page that fetches, logs and throws.
func TestCLINetworkVerbs(t *testing.T) {
	e, _ := browserEnv(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/items":
			hits.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"items": ["from the server"]}`)
		case "/gone":
			http.NotFound(w, r)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><title>Net</title><p id=out></p><script>
fetch('/api/items').then(r => r.json()).then(j => { document.getElementById('out').textContent = j.items[0]; });
fetch('/gone');
console.warn('careful');
setTimeout(function explode() { throw new Error('kaboom'); }, 0);
</script>`)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	mustRun(t, e, "open", "--tab", "net")
	mustRun(t, e, "har", "start", "--content", "embed", "--tab", "net")
	mustRun(t, e, "open", srv.URL+"/", "--tab", "net")

	out := mustRun(t, e, "network", "--type", "fetch", "--tab", "net")
	if !strings.Contains(out, "GET 200 fetch") || !strings.Contains(out, "/api/items") || !strings.Contains(out, "GET 404 fetch") {
		t.Errorf("network --type fetch:\n%s", out)
	}
	r := decodeResult(t, mustRun(t, e, "network", "--url", "**/api/**", "--json", "--tab", "net"))
	reqs, _ := r.Details["requests"].([]any)
	if len(reqs) != 1 {
		t.Fatalf("network --url: %+v", r.Details)
	}
	id, _ := reqs[0].(map[string]any)["id"].(string)
	if out := mustRun(t, e, "network", "show", id, "--tab", "net"); !strings.Contains(out, `{"items": ["from the server"]}`) || !strings.Contains(out, "< 200") {
		t.Errorf("network show %s:\n%s", id, out)
	}
	if out := mustRun(t, e, "console", "--level", "warning", "--tab", "net"); !strings.Contains(out, "[warning] careful") {
		t.Errorf("console --level warning:\n%s", out)
	}
	if out := mustRun(t, e, "errors", "--tab", "net"); !strings.Contains(out, "Uncaught Error: kaboom") || !strings.Contains(out, "at explode") {
		t.Errorf("errors:\n%s", out)
	}
	har := filepath.Join(dir, "run.har")
	mustRun(t, e, "har", "stop", har, "--tab", "net")
	b, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Log struct{ Entries []json.RawMessage }
	}
	if err := json.Unmarshal(b, &h); err != nil || len(h.Log.Entries) < 3 || !strings.Contains(string(b), "from the server") {
		t.Errorf("HAR: %d entries, %v", len(h.Log.Entries), err)
	}

	body := filepath.Join(dir, "items.json")
	os.WriteFile(body, []byte(`{"items": ["from the route"]}`), 0o600)
	mustRun(t, e, "route", "**/api/items", "--status", "200", "--content-type", "application/json", "--body", body, "--tab", "net")
	before := hits.Load()
	mustRun(t, e, "reload", "--tab", "net")
	if got := strings.TrimSpace(mustRun(t, e, "run", "--tab", "net", "-e", `return await tab.evaluate(() => document.getElementById("out").textContent)`)); got != "from the route" {
		t.Errorf("after route and reload: %q", got)
	}
	if n := hits.Load() - before; n != 0 {
		t.Errorf("the server got /api/items %d more times while routed", n)
	}
	if out := mustRun(t, e, "unroute", "--tab", "net"); !strings.Contains(out, "Removed 1 route") {
		t.Errorf("unroute: %q", out)
	}
	if _, stderr, code := e.run("route", "**", "--tab", "net"); code != 2 || !strings.Contains(stderr, "route needs") {
		t.Errorf("route without an action: exit %d, %q", code, stderr)
	}
	if _, stderr, code := e.run("network", "show", "r999999", "--tab", "net"); code != 1 || !strings.Contains(stderr, "r999999") {
		t.Errorf("network show of an unknown id: exit %d, %q", code, stderr)
	}
}
