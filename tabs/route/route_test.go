package route

import (
	"testing"

	"github.com/chromedp/cdproto/network"

	"github.com/tabpilot/tabpilot/errcode"
)

func TestFetchGlob(t *testing.T) {
	for in, want := range map[string]string{
		"**/api/*":                 "*/api/*",
		"https://a.test/x?y=1":     `https://a.test/x\?y=1`,
		"**/{a,b}.js":              "*",
		"/relative/**":             "*",
		"http://127.0.0.1:8/**.js": "http://127.0.0.1:8/*.js",
	} {
		if got := fetchGlob(in); got != want {
			t.Errorf("fetchGlob(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	r, err := check("**/*.png", "", Spec{Abort: "BlockedByClient", Types: []string{"Image", "media"}})
	if err != nil || r.reason != network.ErrorReasonBlockedByClient || len(r.types) != 2 || r.types[0] != network.ResourceTypeImage {
		t.Fatalf("check: %+v, %v", r, err)
	}
	for _, bad := range []Spec{
		{Abort: "nope"},
		{Abort: "failed", Status: 200},
		{Status: 99},
		{Status: 200, URL: "http://elsewhere/"},
		{Body: "a", BodyBase64: "YQ=="},
		{BodyBase64: "not base64!"},
		{Types: []string{"pictures"}},
	} {
		if _, err := check("**", "", bad); errcode.Of(err) != errcode.BadRequest {
			t.Errorf("check(%+v) = %v, want bad_request", bad, err)
		}
	}
	if _, err := check("{a", "", Spec{}); errcode.Of(err) != errcode.BadRequest {
		t.Errorf("an unbalanced glob: %v, want bad_request", err)
	}
	if k := (&Spec{Body: "x"}).Kind(); k != "fulfill" {
		t.Errorf("a body alone is %s, want fulfill", k)
	}
}
