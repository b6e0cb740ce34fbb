package netlog_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/tabs/netlog"
)

// TestCapture loads the test page in a real headless Chromium, feeds the
// tab's events into a Log and checks what it recorded: each request's
// type, method, status, post data, body, failure and redirect hops, the
// WebSocket's frames, the console messages and the uncaught errors, the
// navigation scoping, and a HAR 1.2 of it all read back by har-validator
// and har-to-k6.
func TestCapture(t *testing.T) {
	ctx := browserTab(t)
	srv, closed := server(t)
	l := netlog.New(&netlog.Options{BodyDir: t.TempDir()})
	t.Cleanup(func() { l.Close() })
	drain := feed(t, ctx, l)
	if err := l.StartHAR(netlog.HAROptions{Content: "embed"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitDone(t, ctx)
	drain()
	// Network.responseReceivedExtraInfo comes from the network service,
	// not the renderer, and may come after loadingFinished: on a loaded
	// machine after the drain. Wait for the raw head of data.json, which
	// the assertions below read, rather than for a time.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, _ := l.Requests(netlog.Filter{URL: "**/data.json"})
		if len(list) == 1 {
			if e, err := l.Request(list[0].ID); err == nil && headerValue(e.ResponseHeaders, "Set-Cookie") != "" {
				break
			}
		}
	}

	all, _ := l.Requests(netlog.Filter{})
	for _, e := range all {
		t.Logf("%s %-9s %-4s %3d %-40s %.1fms %s", e.ID, e.Type, e.Method, e.Status, e.URL, e.Duration, e.FailureText)
	}

	doc := find(t, l, netlog.Filter{Type: "document"})
	if doc.Status != 200 || doc.Nav != 1 || doc.URL != srv.URL+"/" {
		t.Errorf("document: status %d nav %d url %s, want 200, 1, %s/", doc.Status, doc.Nav, doc.URL, srv.URL)
	}

	data := find(t, l, netlog.Filter{URL: "**/data.json"})
	if data.Type != "fetch" || data.Method != "GET" || data.Status != 200 || data.MimeType != "application/json" {
		t.Errorf("data.json: %s %s %d %s, want fetch GET 200 application/json", data.Type, data.Method, data.Status, data.MimeType)
	}
	if data.Initiator.Type != "script" || data.Initiator.URL != srv.URL+"/" {
		t.Errorf("data.json initiator %+v, want script at %s/", data.Initiator, srv.URL)
	}
	if data.Timing == nil || data.Timing.Wait < 0 || data.Timing.Send < 0 || data.Duration <= 0 {
		t.Errorf("data.json timing %+v, duration %v: want phases >= 0 and a duration", data.Timing, data.Duration)
	}
	full, err := l.Request(data.ID)
	if err != nil {
		t.Fatal(err)
	}
	if full.Body == nil || full.Body.Text != `{"user":"ann","n":3}` || full.Body.Base64 {
		t.Errorf("data.json body %+v, want the JSON inline", full.Body)
	}
	if got := headerValue(full.ResponseHeaders, "Set-Cookie"); got != "seen=1; Path=/" {
		t.Errorf("data.json Set-Cookie %q, want the raw header seen=1; Path=/", got)
	}
	if full.Size.Decoded != int64(len(`{"user":"ann","n":3}`)) || full.Size.Transfer <= full.Size.Decoded || full.Size.Encoded != full.Size.Decoded {
		t.Errorf("data.json size %+v: want decoded 20 and a transfer size with the headers", full.Size)
	}

	post := find(t, l, netlog.Filter{Method: "post"})
	pfull, _ := l.Request(post.ID)
	if post.Status != 201 || pfull.PostData != "name=ann&age=3" || pfull.Body == nil || pfull.Body.Text != "hello ann" {
		t.Errorf("submit: status %d post %q body %+v, want 201, name=ann&age=3, hello ann", post.Status, pfull.PostData, pfull.Body)
	}
	if got := headerValue(pfull.RequestHeaders, "Content-Type"); got != "application/x-www-form-urlencoded" {
		t.Errorf("submit Content-Type %q", got)
	}

	missing := find(t, l, netlog.Filter{Status: "4xx"})
	if !strings.HasSuffix(missing.URL, "/missing") || missing.Status != 404 {
		t.Errorf("4xx: %s %d, want /missing 404", missing.URL, missing.Status)
	}

	failed := find(t, l, netlog.Filter{Failed: true})
	if failed.FailureText != "net::ERR_CONNECTION_REFUSED" || !strings.Contains(failed.URL, ":"+strconv.Itoa(closed)+"/refused") || failed.Status != 0 {
		t.Errorf("failed: %s %q status %d, want the refused port and net::ERR_CONNECTION_REFUSED", failed.URL, failed.FailureText, failed.Status)
	}

	hops, _ := l.Requests(netlog.Filter{URL: "**/{redirect,final}"})
	if len(hops) != 2 {
		t.Fatalf("redirect: %d entries, want 2 hops: %+v", len(hops), hops)
	}
	if hops[0].Status != 302 || hops[0].RedirectURL != srv.URL+"/final" || hops[1].Status != 200 ||
		hops[1].URL != srv.URL+"/final" || hops[0].RequestID != hops[1].RequestID || hops[0].ID == hops[1].ID {
		t.Errorf("redirect hops %+v / %+v: want 302 → /final, then 200, one CDP id, two entry ids", hops[0], hops[1])
	}

	ws := find(t, l, netlog.Filter{Type: "websocket"})
	wfull, _ := l.Request(ws.ID)
	if ws.Status != 101 || len(wfull.Frames) != 2 || wfull.Frames[0].Type != "send" || wfull.Frames[0].Data != "hello" ||
		wfull.Frames[1].Type != "receive" || wfull.Frames[1].Data != "echo: hello" || !ws.Finished {
		t.Errorf("websocket: status %d frames %+v finished %v, want 101, send hello, receive echo: hello, closed", ws.Status, wfull.Frames, ws.Finished)
	}

	msgs, _ := l.Console(netlog.ConsoleFilter{})
	texts := map[string]string{}
	for _, m := range msgs {
		texts[m.Text] = m.Level
	}
	if texts["x 3"] != "log" || texts["bad {a: 1}"] != "error" {
		t.Errorf("console %+v: want x 3 (log) and bad {a: 1} (error)", msgs)
	}
	errsOnly, _ := l.Console(netlog.ConsoleFilter{Level: "error"})
	for _, m := range errsOnly {
		if m.Level != "error" {
			t.Errorf("Console(level error) has a %s message %q", m.Level, m.Text)
		}
	}
	if len(errsOnly) < 3 {
		t.Errorf("Console(level error) = %+v, want console.error and the two uncaught errors", errsOnly)
	}
	var x3 netlog.Message
	for _, m := range msgs {
		if m.Text == "x 3" {
			x3 = m
		}
	}
	if x3.URL != srv.URL+"/" || x3.Line != 2 {
		t.Errorf("x 3 at %s:%d, want %s/:2", x3.URL, x3.Line, srv.URL)
	}

	pe := l.Errors(false)
	if len(pe) != 2 || l.ErrorCount() != 2 {
		t.Fatalf("errors %+v (count %d), want the throw and the rejection", pe, l.ErrorCount())
	}
	var thrown, rejected netlog.PageError
	for _, e := range pe {
		if e.Rejection {
			rejected = e
		} else {
			thrown = e
		}
	}
	if thrown.Message != "Error: boom" || len(thrown.Stack) == 0 || thrown.Stack[0].Function != "thrower" || thrown.Stack[0].Line != 4 {
		t.Errorf("thrown %+v, want Error: boom in thrower at line 4", thrown)
	}
	if rejected.Message != "Error: nope" {
		t.Errorf("rejection %+v, want Error: nope", rejected)
	}

	// A second navigation: the default scope is the new page.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/second")); err != nil {
		t.Fatal(err)
	}
	drain()
	now, _ := l.Requests(netlog.Filter{})
	if len(now) != 1 || now[0].URL != srv.URL+"/second" || now[0].Nav != 2 {
		t.Errorf("requests since the second navigation %+v, want only /second", now)
	}
	if across, _ := l.Requests(netlog.Filter{All: true}); len(across) != len(all)+1 {
		t.Errorf("requests across navigations: %d, want %d", len(across), len(all)+1)
	}
	if cm, _ := l.Console(netlog.ConsoleFilter{Level: "warning"}); len(cm) != 1 || cm[0].Text != "second page" {
		t.Errorf("console since the second navigation %+v, want the one warning", cm)
	}
	if len(l.Errors(false)) != 0 || len(l.Errors(true)) != 2 || l.ErrorCount() != 2 {
		t.Errorf("errors after the second navigation: %d now, %d all, count %d; want 0, 2, 2", len(l.Errors(false)), len(l.Errors(true)), l.ErrorCount())
	}

	h, err := l.StopHAR()
	if err != nil {
		t.Fatal(err)
	}
	checkHAR(t, h, srv.URL)
	path := filepath.Join(t.TempDir(), "capture.har")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	readHAR(t, path, srv.URL)
}

// checkHAR checks the HAR's own values.
func checkHAR(t *testing.T, h *netlog.HAR, base string) {
	t.Helper()
	if h.Log.Version != "1.2" || h.Log.Creator.Name != "tabpilot" || len(h.Log.Pages) != 2 {
		t.Errorf("HAR log version %q creator %q pages %d, want 1.2, tabpilot, 2", h.Log.Version, h.Log.Creator.Name, len(h.Log.Pages))
	}
	if len(h.Log.Pages) > 0 && (h.Log.Pages[0].ID != "page_1" || h.Log.Pages[0].Title != base+"/" || h.Log.Pages[0].PageTimings.OnLoad <= 0) {
		t.Errorf("HAR page %+v, want page_1 of %s/ with an onLoad", h.Log.Pages[0], base)
	}
	var sawJSON, sawWS, sawFail bool
	for _, e := range h.Log.Entries {
		switch {
		case strings.HasSuffix(e.Request.URL, "/data.json"):
			sawJSON = e.Response.Content.Text == `{"user":"ann","n":3}` && e.Pageref == "page_1" &&
				len(e.Response.Cookies) == 1 && e.Response.Cookies[0].Name == "seen" && e.ServerIPAddress == "127.0.0.1"
		case strings.HasPrefix(e.Request.URL, "ws:"):
			sawWS = len(e.WebSocketMessages) == 2 && e.WebSocketMessages[1].Data == "echo: hello"
		case strings.HasSuffix(e.Request.URL, "/refused"):
			sawFail = e.Response.Status == 0 && e.Response.Error == "net::ERR_CONNECTION_REFUSED"
		}
		tm := e.Timings
		var sum float64
		for _, v := range []float64{tm.Blocked, tm.DNS, tm.Connect, tm.Send, tm.Wait, tm.Receive} {
			sum += max(v, 0)
		}
		if e.Time > 0 && math.Abs(sum-e.Time) > 0.01 {
			t.Errorf("%s: time %v but the timings %+v add up to %v", e.Request.URL, e.Time, tm, sum)
		}
		if !strings.HasSuffix(e.StartedDateTime, "Z") || len(e.StartedDateTime) != len("2006-01-02T15:04:05.000Z") {
			t.Errorf("startedDateTime %q is not RFC 3339 with milliseconds", e.StartedDateTime)
		}
	}
	if !sawJSON || !sawWS || !sawFail {
		t.Errorf("HAR entries: JSON body %v, WebSocket messages %v, failure %v; want all", sawJSON, sawWS, sawFail)
	}
	b, _ := json.Marshal(h)
	if !strings.Contains(string(b), `"cache":{}`) {
		t.Error("HAR entries have no cache object")
	}
}

func headerValue(hs []netlog.Header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}
