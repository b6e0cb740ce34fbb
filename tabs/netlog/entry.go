package netlog

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/network"
)

// Entry is one request of the log: one hop of a redirect chain, or one
// WebSocket. The fields come from Network.requestWillBeSent (request,
// initiator, start), Network.responseReceived (response), the two ExtraInfo
// events (the headers as sent and received on the wire), and
// Network.loadingFinished or Network.loadingFailed (end, size, failure).
type Entry struct {
	// ID is the log's own id, "r1", "r2", …, stable for the entry's life
	// and independent of CDP's.
	ID string `json:"id"`
	// RequestID is CDP's id; the hops of one redirect chain share it.
	RequestID network.RequestID `json:"requestId"`
	// Nav is the index of the top-level navigation the request belongs to:
	// 0 before the first Navigated, then 1, 2, …
	Nav    int    `json:"nav"`
	Method string `json:"method"`
	// URL is the request URL with its fragment, if any.
	URL string `json:"url"`
	// Type is the resource type of CDP in lower case: document,
	// stylesheet, image, media, font, script, xhr, fetch, websocket, …
	Type string `json:"type"`
	// Status is the HTTP status, 0 while no response arrived or when the
	// request failed before one.
	Status     int    `json:"status,omitempty"`
	StatusText string `json:"statusText,omitempty"`
	MimeType   string `json:"mimeType,omitempty"`
	// Protocol is the response's protocol as Chromium names it: http/1.1,
	// h2, h3, data, blob.
	Protocol string `json:"protocol,omitempty"`
	// RemoteAddress is the server's ip:port.
	RemoteAddress string `json:"remoteAddress,omitempty"`
	// Started is the wall-clock time the request was issued.
	Started time.Time `json:"started"`
	// Duration is the time from the start to the last byte, the failure,
	// or the next hop of a redirect, in milliseconds; 0 while pending.
	Duration float64 `json:"durationMs"`
	// Finished is set once the request has loaded, failed, redirected or
	// (a WebSocket) closed.
	Finished bool `json:"finished"`
	// Failed is set by Network.loadingFailed; FailureText is its
	// errorText, e.g. net::ERR_CONNECTION_REFUSED.
	Failed        bool   `json:"failed,omitempty"`
	FailureText   string `json:"failureText,omitempty"`
	Canceled      bool   `json:"canceled,omitempty"`
	BlockedReason string `json:"blockedReason,omitempty"`
	// RedirectURL is where a redirect hop went (the next hop's URL).
	RedirectURL       string `json:"redirectURL,omitempty"`
	FromCache         bool   `json:"fromCache,omitempty"`
	FromServiceWorker bool   `json:"fromServiceWorker,omitempty"`
	// Worker marks the main script of a worker the page started (a
	// Script of the page's frame with no loader, in
	// Network.requestWillBeSent). Chromium reports that request's start to
	// the page, and its status when it came over the network
	// (Network.responseReceivedExtraInfo), but its end only to the worker's
	// target: such an entry stays unfinished, and one from blob: or data:
	// has no status.
	Worker    bool      `json:"worker,omitempty"`
	Initiator Initiator `json:"initiator"`
	Size      Size      `json:"size"`
	// Timing splits Duration into HAR's phases; nil before a response.
	Timing *Timing `json:"timing,omitempty"`

	// The fields below are filled by Request only; Requests leaves them
	// empty.

	// RequestHeaders are the headers as sent on the wire when
	// Network.requestWillBeSentExtraInfo came, else as the page set them;
	// ResponseHeaders likewise. A header sent twice appears twice.
	RequestHeaders  []Header `json:"requestHeaders,omitempty"`
	ResponseHeaders []Header `json:"responseHeaders,omitempty"`
	// HasPostData is set when the request had a body; PostData holds it
	// when CDP sent it inline (else FetchPostData gets it).
	HasPostData bool   `json:"hasPostData,omitempty"`
	PostData    string `json:"postData,omitempty"`
	// Body is the response body the caller attached with SetBody.
	Body *Body `json:"body,omitempty"`
	// Frames are a WebSocket's messages, oldest first, at most
	// Options.MaxFrames.
	Frames []Frame `json:"frames,omitempty"`

	requestHeadersSize  int // bytes of the raw request head, -1 unknown
	responseHeadersSize int
	rawRequest          bool // RequestHeaders are from ExtraInfo
	rawResponse         bool
	hasResponse         bool
	seq                 int
	start               float64 // monotonic seconds of requestWillBeSent
	end                 float64
	connection          string
	rt                  *network.ResourceTiming
	droppedFrames       int
}

// Header is one HTTP header.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Initiator says what started a request (Network.Initiator): Type is
// parser, script, preload, SignedExchange, preflight or other; URL, Line
// and Column (1-based) locate the parser position or the top frame of the
// script's stack.
type Initiator struct {
	Type     string `json:"type"`
	URL      string `json:"url,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Function string `json:"function,omitempty"`
}

// Size is what a request moved, in bytes. Transfer counts the whole
// response on the wire, headers included (Network.loadingFinished
// encodedDataLength); Encoded the body as sent, before content decoding
// (encodedBodyLength); Decoded the body after decoding (the sum of
// Network.dataReceived dataLength, or the attached body's length).
type Size struct {
	Transfer int64 `json:"transfer"`
	Encoded  int64 `json:"encoded"`
	Decoded  int64 `json:"decoded"`
}

// Timing is the time of each phase of a request in milliseconds, derived
// from Network.ResourceTiming as Chromium's HAR export does; -1 when the
// phase did not happen (a reused connection has no dns or connect).
// Blocked includes the queueing before Network.ResourceTiming's
// requestTime; SSL is part of Connect, as HAR 1.2 counts it.
type Timing struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	SSL     float64 `json:"ssl"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// Body is a response body attached with SetBody. Text holds it inline when
// it fits Options.InlineBody, base64-encoded when Base64 (a binary body);
// else Path names the 0600 file under Options.BodyDir that holds its
// bytes. Size is its length in bytes.
type Body struct {
	Text      string `json:"text,omitempty"`
	Base64    bool   `json:"base64,omitempty"`
	Path      string `json:"path,omitempty"`
	Size      int    `json:"size"`
	Truncated bool   `json:"truncated,omitempty"`

	raw []byte // the bytes, when inline
}

// Frame is one WebSocket message (Network.webSocketFrameSent and
// Network.webSocketFrameReceived). Data is the text of a text frame
// (opcode 1), else base64 of the payload.
type Frame struct {
	Type   string    `json:"type"` // send or receive
	Time   time.Time `json:"time"`
	Opcode int       `json:"opcode"`
	Data   string    `json:"data"`
}

// summary returns a copy of e without the heavy fields (headers, post
// data, body, frames).
func (e *Entry) summary() Entry {
	c := *e
	c.RequestHeaders, c.ResponseHeaders, c.PostData, c.Body, c.Frames = nil, nil, "", nil, nil
	if e.Timing != nil {
		t := *e.Timing
		c.Timing = &t
	}
	return c
}

// full returns a deep copy of e.
func (e *Entry) full() *Entry {
	c := e.summary()
	c.RequestHeaders = slices.Clone(e.RequestHeaders)
	c.ResponseHeaders = slices.Clone(e.ResponseHeaders)
	c.PostData = e.PostData
	c.Frames = slices.Clone(e.Frames)
	if e.Body != nil {
		b := *e.Body
		b.raw = nil
		c.Body = &b
	}
	return &c
}

// headerList turns CDP headers into a list sorted by name; a value holding
// several lines (a repeated header, as CDP joins them) gives one Header
// each.
func headerList(h network.Headers) []Header {
	var out []Header
	for name, v := range h {
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		for line := range strings.SplitSeq(s, "\n") {
			out = append(out, Header{Name: name, Value: line})
		}
	}
	slices.SortStableFunc(out, func(a, b Header) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return out
}

// headerValue returns the first value of the header name, case-insensitive.
func headerValue(hs []Header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// timing derives the phases from rt, the request's start (monotonic
// seconds, requestWillBeSent's timestamp) and its end.
func timing(rt *network.ResourceTiming, start, end float64) *Timing {
	t := &Timing{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 0, Wait: 0, Receive: 0}
	if rt == nil {
		t.Blocked = max(0, (end-start)*1000)
		return t
	}
	queued := max(0, (rt.RequestTime-start)*1000)
	first := rt.SendStart
	for _, v := range []float64{rt.ConnectStart, rt.DNSStart} {
		if v >= 0 && v < first {
			first = v
		}
	}
	t.Blocked = queued + max(0, first)
	if rt.DNSStart >= 0 && rt.DNSEnd >= rt.DNSStart {
		t.DNS = rt.DNSEnd - rt.DNSStart
	}
	if rt.ConnectStart >= 0 && rt.ConnectEnd >= rt.ConnectStart {
		t.Connect = rt.ConnectEnd - rt.ConnectStart
	}
	if rt.SslStart >= 0 && rt.SslEnd >= rt.SslStart {
		t.SSL = rt.SslEnd - rt.SslStart
	}
	t.Send = max(0, rt.SendEnd-rt.SendStart)
	t.Wait = max(0, rt.ReceiveHeadersEnd-rt.SendEnd)
	if end > 0 {
		t.Receive = max(0, (end-rt.RequestTime)*1000-rt.ReceiveHeadersEnd)
	}
	for _, p := range []*float64{&t.Blocked, &t.DNS, &t.Connect, &t.SSL, &t.Send, &t.Wait, &t.Receive} {
		if *p >= 0 {
			*p = round3(*p)
		}
	}
	return t
}

// total is the sum of the phases HAR adds up for entry.time (SSL is in
// Connect).
func (t *Timing) total() float64 {
	var s float64
	for _, v := range []float64{t.Blocked, t.DNS, t.Connect, t.Send, t.Wait, t.Receive} {
		if v > 0 {
			s += v
		}
	}
	return round3(s)
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// lineCol turns CDP's 0-based line and column into 1-based ones.
func lineCol(line, col float64) (int, int) { return int(line) + 1, int(col) + 1 }
