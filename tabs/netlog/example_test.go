package netlog_test

import (
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"

	"github.com/tabpilot/tabpilot/tabs/netlog"
)

// A Log fed a few CDP events, as a tab's listener would, then queried for
// the failed and 4xx requests and the errors on the console.
func Example() {
	l := netlog.New(nil)
	l.Navigated("http://127.0.0.1:8080/")
	send := func(id, url string, typ network.ResourceType, ts float64) {
		l.Handle(&network.EventRequestWillBeSent{RequestID: network.RequestID(id), Type: typ,
			Timestamp: cdp.MonotonicTime(ts), WallTime: cdp.TimeSinceEpoch(1.7e9 + ts),
			Request: &network.Request{URL: url, Method: "GET"}})
	}
	send("1", "http://127.0.0.1:8080/api/user", network.ResourceTypeFetch, 10)
	l.Handle(&network.EventResponseReceived{RequestID: "1", Timestamp: 10.05,
		Response: &network.Response{Status: 404, StatusText: "Not Found", MimeType: "application/json"}})
	l.Handle(&network.EventLoadingFinished{RequestID: "1", Timestamp: 10.08, EncodedDataLength: 120})
	send("2", "http://127.0.0.1:9/down.js", network.ResourceTypeScript, 10.1)
	l.Handle(&network.EventLoadingFailed{RequestID: "2", Timestamp: 10.11, ErrorText: "net::ERR_CONNECTION_REFUSED"})
	l.Handle(&runtime.EventConsoleAPICalled{Type: runtime.ConsoleAPICalledTypeError, Args: []*runtime.RemoteObject{
		{Type: runtime.RemoteObjectTypeString, Value: []byte(`"user %s missing"`)},
		{Type: runtime.RemoteObjectTypeString, Value: []byte(`"ann"`)}}})

	notFound, _ := l.Requests(netlog.Filter{Status: "4xx"})
	failed, _ := l.Requests(netlog.Filter{Failed: true})
	for _, e := range append(notFound, failed...) {
		fmt.Println(e.ID, e.Type, e.Method, e.URL, e.Status, e.FailureText, e.Duration, "ms")
	}
	msgs, _ := l.Console(netlog.ConsoleFilter{Level: "error"})
	for _, m := range msgs {
		fmt.Println(m.Level, m.Text)
	}
	// Output:
	// r1 fetch GET http://127.0.0.1:8080/api/user 404  80 ms
	// r2 script GET http://127.0.0.1:9/down.js 0 net::ERR_CONNECTION_REFUSED 10 ms
	// error user ann missing
}
