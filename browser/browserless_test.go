package browser

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/internal/testenv"
)

// TestBrowserless connects to a real browserless through RemoteKey, the
// token in the query and then in an Authorization header, with the
// session's own timeout passed on (&timeout=) and the test flags as its
// launch options, and runs a navigate + evaluate round trip in each.
func TestBrowserless(t *testing.T) {
	t.Parallel()
	addr := testenv.NeedBrowserless(t)
	tok := testenv.BrowserlessToken
	launch, _ := json.Marshal(map[string]any{"args": testArgs()})
	q := "timeout=60000&launch=" + url.QueryEscape(string(launch))
	ctx := context.Background()
	u := page(t, "browserless")
	for _, c := range []struct {
		name string
		url  string
		hdr  http.Header
	}{
		{"query", "ws://" + addr + "/chromium?token=" + tok + "&" + q, nil},
		{"header", "ws://" + addr + "/chromium?" + q, http.Header{"Authorization": {"Bearer " + tok}}},
	} {
		key, err := RemoteKey(c.url, &RemoteOptions{Header: c.hdr, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		h, err := connectKey(ctx, ctx, key, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Logf("%s: connect %v, %s", c.name, time.Since(t0), h.Version())
		if got := roundTrip(ctx, t, h, u); got != "browserless/browserless" {
			t.Fatalf("%s: title = %q", c.name, got)
		}
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	bad, _ := RemoteKey("ws://"+addr+"/chromium?token=WRONG", &RemoteOptions{Timeout: 10 * time.Second})
	if _, err := connectKey(ctx, ctx, bad, nil); err == nil {
		t.Fatal("a wrong token connected")
	}
}
