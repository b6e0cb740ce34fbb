package pagecore

import (
	"testing"
	"time"
)

// TestDocRequestBefore: a request and a commit are ordered by the
// protocol's timestamps when both have one (the inline redirect whose
// Network.requestWillBeSent, from the browser, came before its page's own
// "init", from the renderer, was requested after that commit), else by
// when their events came.
func TestDocRequestBefore(t *testing.T) {
	now := time.Now()
	early, late := now, now.Add(time.Millisecond)
	for _, c := range []struct {
		name string
		r    docRequest
		c    docCommit
		want bool
	}{
		{"came first, stamped after the commit", docRequest{at: early, ts: 100.030}, docCommit{at: late, ts: 100.000}, false},
		{"came after, stamped before the commit", docRequest{at: late, ts: 99.990}, docCommit{at: early, ts: 100.000}, true},
		{"no timestamp on the request: arrival order", docRequest{at: early}, docCommit{at: late, ts: 100.000}, true},
		{"no timestamp on the commit: arrival order", docRequest{at: late, ts: 99.990}, docCommit{at: early}, false},
	} {
		if got := c.r.before(c.c); got != c.want {
			t.Errorf("%s: before = %v, want %v", c.name, got, c.want)
		}
	}
}
