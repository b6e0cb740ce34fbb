package mcp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stepsPage has something for each of the step actions: a hover menu, a
// select, a tall body, a confirm and a prompt, a file input, text that
// appears later and a link to a second page.
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
<a id="frag" href="#out">To the output</a>
<p id="out"></p>
</body></html>`

func TestStepActions(t *testing.T) {
	// hover, select, scroll, wait, dialog, upload, back, forward and reload
	// do what their run counterparts do, and say so in their text.
	skipShort(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/second" {
			fmt.Fprint(w, `<!doctype html><title>Second</title><h1>The second page</h1>`)
			return
		}
		fmt.Fprint(w, stepsPage)
	}))
	defer srv.Close()
	cs := connect(t, svc)
	const tab = "steps"
	do := func(args map[string]any) (string, bool) {
		t.Helper()
		args["name"] = tab
		res := call(t, cs, args)
		return resultText(res), res.IsError
	}
	ok := func(args map[string]any, want string) string {
		t.Helper()
		text, isErr := do(args)
		if isErr || !strings.Contains(text, want) {
			t.Fatalf("%v: isError %v, %q; want it to contain %q", args, isErr, text, want)
		}
		return text
	}
	out := func() string {
		t.Helper()
		text, _ := do(map[string]any{"action": "run", "code": "return await tab.evaluate(() => document.getElementById('out').textContent)"})
		return text
	}
	ok(map[string]any{"action": "open", "url": srv.URL + "/"}, "Steps")
	defer call(t, cs, map[string]any{"action": "close", "name": tab})

	ok(map[string]any{"action": "hover", "target": "#menu"}, "Hovered over #menu")
	if got := out(); got != "hovered" {
		t.Errorf("after hover: out %q", got)
	}
	ok(map[string]any{"action": "select", "target": "#size", "values": []string{"Large"}}, `Selected "Large" in`)
	if got := out(); got != "size l" {
		t.Errorf("after select: out %q", got)
	}
	ok(map[string]any{"action": "scroll", "dy": 500}, "y=500")
	ok(map[string]any{"action": "scroll", "dy": -200}, "y=300")

	ok(map[string]any{"action": "click", "target": "#later"}, "Clicked")
	ok(map[string]any{"action": "wait", "text": "Ready now", "timeout": 5}, `The text "Ready now" is visible`)
	if text, isErr := do(map[string]any{"action": "wait", "text": "Never shown", "timeout": 1}); !isErr || !strings.HasPrefix(text, "timeout: ") {
		t.Errorf("wait for absent text: isError %v, %q", isErr, text)
	}
	ok(map[string]any{"action": "wait", "target": "#later", "state": "attached"}, "#later is attached")
	ok(map[string]any{"action": "wait", "load_state": "load"}, "The page reached load")

	ok(map[string]any{"action": "click", "target": "#ask"}, `a confirm dialog is open: "Sure?"`)
	ok(map[string]any{"action": "dialog", "response": "dismiss"}, `Dismissed a confirm dialog "Sure?"`)
	if got := out(); got != "cancelled" {
		t.Errorf("after dismiss: out %q", got)
	}
	ok(map[string]any{"action": "click", "target": "#who"}, "prompt dialog is open")
	ok(map[string]any{"action": "dialog", "response": "accept", "text": "Ada"}, `with the text "Ada"`)
	if got := out(); got != "name Ada" {
		t.Errorf("after accept with text: out %q", got)
	}
	if text, isErr := do(map[string]any{"action": "dialog", "response": "accept"}); !isErr || !strings.Contains(text, "no dialog is open") {
		t.Errorf("dialog with none open: isError %v, %q", isErr, text)
	}

	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok(map[string]any{"action": "upload", "target": "#file", "files": []string{file}}, `Uploaded 1 file to "#file": `+file)
	if got := out(); got != "file notes.txt" {
		t.Errorf("after upload: out %q", got)
	}
	missing := filepath.Join(t.TempDir(), "missing.txt")
	if text, isErr := do(map[string]any{"action": "upload", "target": "#file", "files": []string{missing}}); !isErr || !strings.Contains(text, "bad_request: upload: no such file "+missing) {
		t.Errorf("upload of a missing file: isError %v, %q", isErr, text)
	}

	ok(map[string]any{"action": "click", "target": "#frag"}, "the URL changed to "+srv.URL+"/#out (the same document")
	ok(map[string]any{"action": "click", "target": "#next"}, "the page navigated to "+srv.URL+"/second (observe again)")
	ok(map[string]any{"action": "wait", "url": "**/second"}, "The URL is "+srv.URL+"/second")
	ok(map[string]any{"action": "back"}, "Went back to "+srv.URL+`/#out — "Steps"`)
	ok(map[string]any{"action": "forward"}, "Went forward to "+srv.URL+`/second — "Second"`)
	ok(map[string]any{"action": "reload"}, "Reloaded "+srv.URL+"/second")
	if text, isErr := do(map[string]any{"action": "forward"}); !isErr || !strings.Contains(text, "bad_request: forward: the tab's history has no later page") {
		t.Errorf("forward at the last entry: isError %v, %q", isErr, text)
	}
}
