package urlpattern

import (
	"testing"

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

// BenchmarkURLGlob measures matching a URL against a parsed glob.
func BenchmarkURLGlob(b *testing.B) {
	p, err := ParseGlob("**/api/{items,users}/*?page=*", "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !p.Match("https://shop.example.com/api/items/42?page=3") {
			b.Fatal("no match")
		}
	}
}
