package netlog

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
)

// TestRedact checks that Options.Redact masks what the log writes out —
// a spilled body file, a HAR's body file and the HAR's JSON (post data
// and an embedded body) — while the record in memory keeps what the page
// sent.
func TestRedact(t *testing.T) {
	const secret = "hunter2<&>"
	redact := strings.NewReplacer(secret, "••••", "hunter2&lt;&amp;&gt;", "••••", "hunter2%3C%26%3E", "••••").Replace
	dir, harDir := t.TempDir(), t.TempDir()
	for _, content := range []string{"file", "embed"} {
		l := New(&Options{InlineBody: 8, BodyDir: dir, Redact: redact})
		if err := l.StartHAR(HAROptions{Content: content, Dir: harDir}); err != nil {
			t.Fatal(err)
		}
		req := request("a", "http://127.0.0.1/login", network.ResourceTypeDocument, 1)
		req.Request.Method, req.Request.HasPostData = "POST", true
		req.Request.PostDataEntries = nil
		l.Handle(req)
		if err := l.SetPostData("a", []byte("pw=hunter2%3C%26%3E")); err != nil {
			t.Fatal(err)
		}
		l.Handle(response("a", 200, "text/html", 1.1))
		l.Handle(finished("a", 1.2))
		body := []byte("<p>your password: hunter2&lt;&amp;&gt;</p> and " + secret)
		if err := l.SetBody("a", body, false); err != nil {
			t.Fatal(err)
		}
		e, err := l.Request("r1")
		if err != nil {
			t.Fatal(err)
		}
		spilled, err := os.ReadFile(e.Body.Path)
		if err != nil {
			t.Fatal(err)
		}
		if want := "<p>your password: ••••</p> and ••••"; string(spilled) != want {
			t.Errorf("spilled body = %q, want %q", spilled, want)
		}
		if e.PostData != "pw=hunter2%3C%26%3E" {
			t.Errorf("the record's post data = %q, want it as sent", e.PostData)
		}
		h, err := l.StopHAR()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := h.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if content == "file" {
			f, err := os.ReadFile(h.Log.Entries[0].Response.Content.File)
			if err != nil {
				t.Fatal(err)
			}
			out += string(f)
		}
		if strings.Contains(out, "hunter2") {
			t.Errorf("%s: the HAR holds the secret:\n%s", content, out)
		}
		var doc struct{ Log HARLog }
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("the HAR is not JSON: %v", err)
		}
		if got := doc.Log.Entries[0].Request.PostData.Text; got != "pw=••••" {
			t.Errorf("%s: HAR post data = %q", content, got)
		}
		if content == "embed" && doc.Log.Entries[0].Response.Content.Text != "<p>your password: ••••</p> and ••••" {
			t.Errorf("embedded body = %q", doc.Log.Entries[0].Response.Content.Text)
		}
		l.Close()
	}
}
