package tabs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
)

func TestURLGlobs(t *testing.T) {
	cases := []struct {
		glob, base, url string
		want            bool
	}{
		{"**/app/settings", "", "http://127.0.0.1:8080/app/settings", true},
		{"**/app/settings", "", "http://127.0.0.1:8080/app/settings/more", false},
		{"http://h.test/*.html", "", "http://h.test/a.html", true},
		{"http://h.test/*.html", "", "http://h.test/a/b.html", false},
		{"http://h.test/**/*.html", "", "http://h.test/a/b.html", true},
		{"/done", "http://127.0.0.1:5/form?x", "http://127.0.0.1:5/done", true},
		{"/done", "http://127.0.0.1:5/form?x", "http://127.0.0.1:6/done", false},
		{"http://h.test", "", "http://h.test/", true},
		{"http://h.test/", "", "http://h.test/", true},
		{"http://h.test/", "", "http://h.test/x", false},
		{"**/{login,signin}", "", "https://a.test/signin", true},
		{"**/{login,signin}", "", "https://a.test/signup", false},
		{"**/search?q=1", "", "https://a.test/search?q=1", true},
		{"**/search?q=1", "", "https://a.test/searchXq=1", false},
		{"**/a.b", "", "https://a.test/aXb", false},
		{`**/\*star`, "", "https://a.test/*star", true},
	}
	for _, c := range cases {
		p, err := ParseGlob(c.glob, c.base)
		if err != nil {
			t.Fatalf("ParseGlob(%q): %v", c.glob, err)
		}
		if got := p.Match(c.url); got != c.want {
			t.Errorf("glob %q (base %q) on %q = %v, want %v", c.glob, c.base, c.url, got, c.want)
		}
	}
	for _, bad := range []string{"", "  ", "**/{a,b"} {
		if _, err := ParseGlob(bad, ""); errcode.Of(err) != errcode.BadRequest {
			t.Errorf("ParseGlob(%q) = %v, want bad_request", bad, err)
		}
	}
}

func TestDownloadNames(t *testing.T) {
	for in, want := range map[string]string{
		"report.txt": "report.txt", "../../etc/passwd": "passwd", "": "download", ".bashrc": "bashrc",
		`C:\Users\x\file.pdf`: "file.pdf", "a\x00b.txt": "ab.txt", "/": "download",
	} {
		if got := safeFileName(in); got != want {
			t.Errorf("safeFileName(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	p, err := uniquePath(dir, "a.txt")
	if err != nil || p != filepath.Join(dir, "a.txt") {
		t.Fatalf("uniquePath = %q, %v", p, err)
	}
	os.WriteFile(p, nil, 0o600)
	os.WriteFile(filepath.Join(dir, "a (1).txt"), nil, 0o600)
	if p, _ := uniquePath(dir, "a.txt"); p != filepath.Join(dir, "a (2).txt") {
		t.Fatalf("uniquePath with two taken = %q", p)
	}
}

func TestActionWait(t *testing.T) {
	near := func(got, want time.Duration) bool { return got <= want && got > want-200*time.Millisecond }
	if got := actionWait(context.Background()); got != autoWait {
		t.Errorf("no deadline: %v, want %v", got, autoWait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := actionWait(ctx); !near(got, 9*time.Second) {
		t.Errorf("10s deadline: %v, want about 9s", got)
	}
	if got := actionWait(WithActionTimeout(ctx, 2*time.Second)); got != 2*time.Second {
		t.Errorf("2s action timeout: %v", got)
	}
	short, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if got := actionWait(WithActionTimeout(short, 5*time.Second)); !near(got, 800*time.Millisecond) {
		t.Errorf("1s deadline, 5s action timeout: %v, want about 800ms", got)
	}
}

func TestDialogArticle(t *testing.T) {
	for typ, want := range map[string]string{"alert": "an alert", "confirm": "a confirm", "prompt": "a prompt", "beforeunload": "a beforeunload"} {
		if got := (&Dialog{Type: typ}).Article(); got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}
}
