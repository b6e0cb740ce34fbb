package netlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"

	"github.com/tabpilot/tabpilot/errcode"
)

// request returns a requestWillBeSent of id for url at the monotonic
// second ts.
func request(id, url string, typ network.ResourceType, ts float64) *network.EventRequestWillBeSent {
	return &network.EventRequestWillBeSent{RequestID: network.RequestID(id), Type: typ, Timestamp: cdp.MonotonicTime(ts),
		WallTime: cdp.TimeSinceEpoch(1.7e9 + ts), Request: &network.Request{URL: url, Method: "GET"}}
}

func response(id string, status int64, mime string, ts float64) *network.EventResponseReceived {
	return &network.EventResponseReceived{RequestID: network.RequestID(id), Timestamp: cdp.MonotonicTime(ts),
		Response: &network.Response{Status: status, MimeType: mime, Protocol: "http/1.1"}}
}

func finished(id string, ts float64) *network.EventLoadingFinished {
	return &network.EventLoadingFinished{RequestID: network.RequestID(id), Timestamp: cdp.MonotonicTime(ts), EncodedDataLength: 100}
}

// TestRingBound feeds N+10 requests to a log of N: the newest N stay, 10
// are counted as dropped, and an evicted id is not found with a coded
// error.
func TestRingBound(t *testing.T) {
	const n = 50
	l := New(&Options{MaxRequests: n})
	for i := range n + 10 {
		id := fmt.Sprint("c", i)
		l.Handle(request(id, fmt.Sprintf("http://127.0.0.1/%d", i), network.ResourceTypeFetch, float64(i)))
		l.Handle(response(id, 200, "application/json", float64(i)+0.1))
		l.Handle(finished(id, float64(i)+0.2))
	}
	got, err := l.Requests(Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d entries kept, want %d", len(got), n)
	}
	if got[0].ID != "r11" || got[0].URL != "http://127.0.0.1/10" {
		t.Errorf("oldest kept entry is %s %s, want r11 http://127.0.0.1/10", got[0].ID, got[0].URL)
	}
	if d, _ := l.Dropped(); d != 10 {
		t.Errorf("dropped %d, want 10", d)
	}
	_, err = l.Request("r1")
	if !errors.Is(err, ErrNotFound) || errcode.Of(err) != errcode.ElementNotFound {
		t.Errorf("Request(r1) = %v (code %s), want ErrNotFound with element_not_found", err, errcode.Of(err))
	}
	if l.WantBody("c0") {
		t.Error("WantBody of an evicted request is true")
	}
	if !l.WantBody("c59") {
		t.Error("WantBody of a finished JSON response is false")
	}
}

// TestFilters checks the status, type, method and limit filters, and the
// errors of malformed ones.
func TestFilters(t *testing.T) {
	l := New(nil)
	for i, st := range []int64{200, 404, 500, 302} {
		id := fmt.Sprint(i)
		l.Handle(request(id, fmt.Sprintf("http://127.0.0.1/s/%d", st), network.ResourceTypeXHR, float64(i)))
		l.Handle(response(id, st, "text/plain", float64(i)+0.1))
		l.Handle(finished(id, float64(i)+0.2))
	}
	for _, c := range []struct {
		f    Filter
		want int
	}{
		{Filter{Status: "4xx"}, 1}, {Filter{Status: "400-599"}, 2}, {Filter{Status: "404,302"}, 2},
		{Filter{Type: "XHR"}, 4}, {Filter{Type: "script"}, 0}, {Filter{Method: "get"}, 4},
		{Filter{URL: "**/s/5*"}, 1}, {Filter{Limit: 3}, 3}, {Filter{Failed: true}, 0},
	} {
		got, err := l.Requests(c.f)
		if err != nil || len(got) != c.want {
			t.Errorf("Requests(%+v) = %d entries, %v; want %d", c.f, len(got), err, c.want)
		}
	}
	for _, f := range []Filter{{Status: "6xx"}, {Status: "500-400"}, {Status: "abc"}, {Type: "jpeg"}, {URL: "{a"}, {Limit: -1}} {
		_, err := l.Requests(f)
		var e *Error
		if !errors.As(err, &e) || errcode.Of(err) != errcode.BadRequest {
			t.Errorf("Requests(%+v) = %v, want a bad_request *Error", f, err)
		}
	}
}

func str0(s string) *runtime.RemoteObject {
	return &runtime.RemoteObject{Type: runtime.RemoteObjectTypeString, Value: []byte(fmt.Sprintf("%q", s))}
}

func num(s string) *runtime.RemoteObject {
	return &runtime.RemoteObject{Type: runtime.RemoteObjectTypeNumber, Value: []byte(s)}
}

// TestFormatArgs checks DevTools' rendering of console arguments.
func TestFormatArgs(t *testing.T) {
	obj := &runtime.RemoteObject{Type: runtime.RemoteObjectTypeObject, Description: "Object", Preview: &runtime.ObjectPreview{
		Type: runtime.ObjectPreviewTypeObject, Description: "Object", Properties: []*runtime.PropertyPreview{
			{Name: "a", Type: runtime.PropertyPreviewTypeNumber, Value: "1"}, {Name: "b", Type: runtime.PropertyPreviewTypeString, Value: "x"}}}}
	arr := &runtime.RemoteObject{Type: runtime.RemoteObjectTypeObject, Subtype: runtime.RemoteObjectSubtypeArray, Description: "Array(2)",
		Preview: &runtime.ObjectPreview{Type: runtime.ObjectPreviewTypeObject, Subtype: runtime.ObjectPreviewSubtypeArray, Description: "Array(2)",
			Properties: []*runtime.PropertyPreview{{Name: "0", Type: runtime.PropertyPreviewTypeNumber, Value: "1"}, {Name: "1", Type: runtime.PropertyPreviewTypeNumber, Value: "2"}}}}
	for _, c := range []struct {
		args []*runtime.RemoteObject
		want string
	}{
		{[]*runtime.RemoteObject{str0("x %d"), num("3")}, "x 3"},
		{[]*runtime.RemoteObject{str0("%s=%i%%"), str0("n"), num("4.7")}, "n=4%"},
		{[]*runtime.RemoteObject{str0("%cred"), str0("color: red")}, "red"},
		{[]*runtime.RemoteObject{str0("a"), num("1"), obj, arr}, "a 1 {a: 1, b: 'x'} [1, 2]"},
		{[]*runtime.RemoteObject{str0("%o and %s"), obj}, "{a: 1, b: 'x'} and %s"},
		{[]*runtime.RemoteObject{{Type: runtime.RemoteObjectTypeObject, Subtype: runtime.RemoteObjectSubtypeNull}, {Type: runtime.RemoteObjectTypeUndefined}}, "null undefined"},
	} {
		if got := FormatArgs(c.args); got != c.want {
			t.Errorf("FormatArgs = %q, want %q", got, c.want)
		}
	}
}

// TestBodySpill checks that a body above the inline cap goes to a 0600
// file whose path the entry gives, that HAR content "file" writes its own
// copy, and that Close removes the log's file.
func TestBodySpill(t *testing.T) {
	dir, harDir := t.TempDir(), t.TempDir()
	l := New(&Options{InlineBody: 8, BodyDir: dir})
	if err := l.StartHAR(HAROptions{Content: "file", Dir: harDir}); err != nil {
		t.Fatal(err)
	}
	l.Handle(request("a", "http://127.0.0.1/big.txt", network.ResourceTypeFetch, 1))
	l.Handle(response("a", 200, "text/plain", 1.1))
	l.Handle(finished("a", 1.2))
	body := []byte("0123456789abcdef")
	if err := l.SetBody("a", body, false); err != nil {
		t.Fatal(err)
	}
	e, err := l.Request("r1")
	if err != nil {
		t.Fatal(err)
	}
	if e.Body == nil || e.Body.Path == "" || e.Body.Text != "" || e.Body.Size != 16 {
		t.Fatalf("body %+v, want a 16-byte file", e.Body)
	}
	st, err := os.Stat(e.Body.Path)
	if err != nil || st.Mode().Perm() != 0o600 || filepath.Dir(e.Body.Path) != dir {
		t.Fatalf("body file %s: %v, mode %v; want 0600 in %s", e.Body.Path, err, st.Mode(), dir)
	}
	h, err := l.StopHAR()
	if err != nil {
		t.Fatal(err)
	}
	c := h.Log.Entries[0].Response.Content
	if got, _ := os.ReadFile(c.File); string(got) != string(body) || c.Text != "" || filepath.Dir(c.File) != harDir {
		t.Errorf("HAR content %+v holds %q, want the body in a file of %s", c, got, harDir)
	}
	if err := l.SetBody("nope", body, false); errcode.Of(err) != errcode.ElementNotFound {
		t.Errorf("SetBody of an unknown id = %v, want element_not_found", err)
	}
	if err := l.StartHAR(HAROptions{Content: "file"}); errcode.Of(err) != errcode.BadRequest {
		t.Errorf("StartHAR(file, no dir) = %v, want bad_request", err)
	}
	l.Close()
	if _, err := os.Stat(e.Body.Path); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", e.Body.Path, err)
	}
}

// TestRequestIDsCount: request IDs number the requests alone (r1, r2),
// whatever console messages come between them.
func TestRequestIDsCount(t *testing.T) {
	l := New(nil)
	l.Handle(request("a", "http://127.0.0.1/a", network.ResourceTypeFetch, 1))
	l.Handle(&log.EventEntryAdded{Entry: &log.Entry{Level: log.EntryLevelWarning, Text: "between", Timestamp: 1.7e12}})
	l.Handle(request("b", "http://127.0.0.1/b", network.ResourceTypeFetch, 2))
	got, err := l.Requests(Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "r1" || got[1].ID != "r2" {
		t.Fatalf("ids %+v, want r1 and r2", got)
	}
	if m, _ := l.Console(ConsoleFilter{}); len(m) != 1 {
		t.Fatalf("console %+v, want the one message", m)
	}
}
