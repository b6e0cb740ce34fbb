package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stepsPage has something for each step verb: a hover menu, a select, a
// tall body, a confirm and a prompt, a file input, text that appears later
// and a link to a second page.
const stepsPage = `<!doctype html>
<html><head><title>Steps</title></head>
<body style="height: 3000px">
<h1>Steps</h1>
<div id="menu" onmouseover="document.getElementById('out').textContent='hovered'">Menu</div>
<label>Size <select id="size" onchange="document.getElementById('out').textContent='size ' + this.value">
  <option value="s">Small</option><option value="l">Large</option></select></label>
<button id="ask" onclick="document.getElementById('out').textContent = confirm('Sure?') ? 'confirmed' : 'cancelled'">Ask</button>
<button id="who" onclick="document.getElementById('out').textContent = 'name ' + prompt('Your name?', 'nobody')">Who</button>
<input type="file" id="file" aria-label="Attachment" onchange="document.getElementById('out').textContent = 'file ' + this.files[0].name">
<button id="later" onclick="setTimeout(() => { const p = document.createElement('p'); p.textContent = 'Ready now'; document.body.append(p); }, 400)">Later</button>
<a id="next" href="/second">Second page</a>
<p id="out"></p>
</body></html>`

func TestCLIStepVerbs(t *testing.T) {
	e, marker := browserEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/second" {
			fmt.Fprint(w, `<!doctype html><title>Second</title><h1>The second page</h1>`)
			return
		}
		fmt.Fprint(w, stepsPage)
	}))
	defer srv.Close()
	mustRun(t, e, "open", srv.URL+"/")

	// hover, then select: the text and the JSON.
	if out := mustRun(t, e, "hover", "#menu"); !strings.Contains(out, "Hovered over #menu") {
		t.Errorf("hover: %q", out)
	}
	if got := evalOut(t, e); got != "hovered" {
		t.Errorf("after hover: out = %q", got)
	}
	r := decodeResult(t, mustRun(t, e, "select", "#size", "Large", "--json"))
	if sel, _ := r.Details["selected"].([]any); r.Details["action"] != "select" || len(sel) != 1 || sel[0] != "Large" || fmt.Sprint(r.Details["values"]) != "[l]" {
		t.Errorf("select --json: %+v", r)
	}
	if got := evalOut(t, e); got != "size l" {
		t.Errorf("after select: out = %q", got)
	}

	// scroll DY, a negative DY, and DX DY.
	r = decodeResult(t, mustRun(t, e, "scroll", "600", "--json"))
	if r.Details["action"] != "scroll" || r.Details["y"] != 600.0 || r.Details["x"] != 0.0 || r.Details["container"] != "page" {
		t.Errorf("scroll 600: %+v", r.Details)
	}
	if out := mustRun(t, e, "scroll", "-250"); !strings.Contains(out, "y=350") {
		t.Errorf("scroll -250: %q", out)
	}
	if _, stderr, code := e.run("scroll", "down"); code != 2 || !strings.Contains(stderr, `"down" is not a number`) {
		t.Errorf("scroll down: exit %d, %q", code, stderr)
	}

	// wait for text that appears later; a wait that times out.
	mustRun(t, e, "click", "#later")
	if out := mustRun(t, e, "wait", "Ready now", "--timeout", "5"); !strings.Contains(out, `The text "Ready now" is visible`) {
		t.Errorf("wait TEXT: %q", out)
	}
	_, stderr, code := e.run("wait", "Never shown", "--timeout", "1")
	if code != 1 || !strings.Contains(stderr, "timeout: ") {
		t.Errorf("wait for absent text: exit %d, %q", code, stderr)
	}
	r = decodeResult(t, mustRun(t, e, "wait", "--selector", "#menu", "--state", "visible", "--json"))
	if r.Details["action"] != "wait" || r.Details["state"] != "visible" {
		t.Errorf("wait --selector --json: %+v", r.Details)
	}
	if out := mustRun(t, e, "wait", "--load-state", "domcontentloaded"); !strings.Contains(out, "The page reached domcontentloaded: "+srv.URL+"/") {
		t.Errorf("wait --load-state: %q", out)
	}
	if out := mustRun(t, e, "wait", "--load-state", "networkidle"); !strings.Contains(out, "The page reached networkidle: "+srv.URL+"/") {
		t.Errorf("wait --load-state networkidle: %q", out)
	}
	if _, stderr, code := e.run("wait", "--load-state", "idle"); code != 2 || !strings.Contains(stderr, "want one of load, domcontentloaded, networkidle") {
		t.Errorf("wait --load-state idle: exit %d, %q", code, stderr)
	}
	if _, stderr, code := e.run("wait", "x", "--url", "**/y"); code != 2 || !strings.Contains(stderr, "one of TEXT") {
		t.Errorf("wait TEXT --url: exit %d, %q", code, stderr)
	}

	// dialog: dismiss a confirm, answer a prompt.
	if out := mustRun(t, e, "click", "#ask"); !strings.Contains(out, `a confirm dialog is open: "Sure?"`) {
		t.Errorf("click #ask: %q", out)
	}
	if out := mustRun(t, e, "dialog", "dismiss"); !strings.Contains(out, `Dismissed a confirm dialog "Sure?"`) {
		t.Errorf("dialog dismiss: %q", out)
	}
	if got := evalOut(t, e); got != "cancelled" {
		t.Errorf("after dismiss: out = %q", got)
	}
	mustRun(t, e, "click", "#who")
	r = decodeResult(t, mustRun(t, e, "dialog", "accept", "Ada", "--json"))
	if d, _ := r.Details["dialog"].(map[string]any); r.Details["response"] != "accept" || r.Details["text"] != "Ada" || d["type"] != "prompt" {
		t.Errorf("dialog accept Ada --json: %+v", r.Details)
	}
	if got := evalOut(t, e); got != "name Ada" {
		t.Errorf("after accept: out = %q", got)
	}
	if _, stderr, code := e.run("dialog", "accept"); code != 1 || !strings.Contains(stderr, "no dialog is open") {
		t.Errorf("dialog with none open: exit %d, %q", code, stderr)
	}

	// upload a relative path (resolved here); a missing file is refused
	// before the daemon is asked.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.cwd = dir
	r = decodeResult(t, mustRun(t, e, "upload", "#file", "notes.txt", "--json"))
	if files, _ := r.Details["files"].([]any); r.Details["action"] != "upload" || len(files) != 1 || files[0] != filepath.Join(dir, "notes.txt") || r.Details["via"] != "input" {
		t.Errorf("upload --json: %+v", r.Details)
	}
	if got := evalOut(t, e); got != "file notes.txt" {
		t.Errorf("after upload: out = %q", got)
	}
	if _, stderr, code := e.run("upload", "#file", "missing.txt"); code != 2 || !strings.Contains(stderr, "no such file "+filepath.Join(dir, "missing.txt")) {
		t.Errorf("upload missing.txt: exit %d, %q", code, stderr)
	}
	e.cwd = ""

	// back, forward, reload; wait --url.
	mustRun(t, e, "click", "#next")
	if out := mustRun(t, e, "wait", "--url", "/second"); !strings.Contains(out, "The URL is "+srv.URL+"/second") {
		t.Errorf("wait --url: %q", out)
	}
	r = decodeResult(t, mustRun(t, e, "back", "--json"))
	if r.Details["action"] != "back" || r.Details["url"] != srv.URL+"/" || r.Details["title"] != "Steps" || r.Details["status"] != 200.0 {
		t.Errorf("back --json: %+v", r.Details)
	}
	if out := mustRun(t, e, "forward"); !strings.Contains(out, "Went forward to "+srv.URL+`/second — "Second"`) {
		t.Errorf("forward: %q", out)
	}
	if out := mustRun(t, e, "reload"); !strings.Contains(out, "Reloaded "+srv.URL+"/second") {
		t.Errorf("reload: %q", out)
	}
	if _, stderr, code := e.run("forward"); code != 1 || !strings.Contains(stderr, "no later page") {
		t.Errorf("forward at the end: exit %d, %q", code, stderr)
	}

	// Every verb has its help.
	for _, v := range []string{"hover", "select", "scroll", "wait", "back", "forward", "reload", "dialog", "upload"} {
		if out := mustRun(t, e, v, "--help"); !strings.HasPrefix(out, "Usage: tabpilot "+v) || !strings.Contains(out, "--timeout") {
			t.Errorf("%s --help: %q", v, out)
		}
	}
	mustRun(t, e, "stop")
	checkNoBrowser(t, marker)
}
