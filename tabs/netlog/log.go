package netlog

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// Options configure a Log. The zero value, or nil, gives the defaults.
type Options struct {
	// MaxRequests bounds the request ring (entries; default 2000).
	MaxRequests int
	// MaxConsole bounds the console ring and the error ring (messages;
	// default 2000).
	MaxConsole int
	// MaxFrames bounds the frames kept per WebSocket (default 200).
	MaxFrames int
	// InlineBody is the largest body, in bytes, kept in memory (default
	// 64 KiB). A larger one goes to a file under BodyDir, or is cut to
	// InlineBody and marked Truncated when BodyDir is "".
	InlineBody int
	// MaxBody is the largest body, in bytes, WantBody asks for (default
	// 1 MiB with a BodyDir, else InlineBody).
	MaxBody int
	// BodyDir is the directory for bodies above InlineBody; created 0700
	// when missing, the files are 0600 and removed when their entry leaves
	// the ring or the log is closed.
	BodyDir string
	// Now is the clock (default time.Now); for tests.
	Now func() time.Time
	// Redact, when set, masks what the log writes out: the text bodies it
	// spills to files, the body files and the JSON of a HAR (the secrets
	// of the session, package secrets). The record in memory is as the
	// page sent it; the caller redacts what it shows of it.
	Redact func(string) string
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.MaxRequests <= 0 {
		c.MaxRequests = 2000
	}
	if c.MaxConsole <= 0 {
		c.MaxConsole = 2000
	}
	if c.MaxFrames <= 0 {
		c.MaxFrames = 200
	}
	if c.InlineBody <= 0 {
		c.InlineBody = 64 << 10
	}
	if c.MaxBody <= 0 {
		c.MaxBody = c.InlineBody
		if c.BodyDir != "" {
			c.MaxBody = max(c.InlineBody, 1<<20)
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Log is the network and console record of one tab. It is safe for
// concurrent use; Handle never blocks on I/O and makes no CDP call, so it
// may run inside a CDP listener.
type Log struct {
	o Options

	mu       sync.Mutex
	seq      int // orders requests, messages and errors together
	nreq     int // numbers the requests: their IDs are r1, r2, …
	reqs     *ring[*Entry]
	byID     map[string]*Entry
	hops     map[network.RequestID][]*Entry // live hops of a CDP id, oldest first
	pendReq  map[network.RequestID][]*network.EventRequestWillBeSentExtraInfo
	pendResp map[network.RequestID][]*network.EventResponseReceivedExtraInfo
	clock    float64 // wall minus monotonic seconds, from the last requestWillBeSent
	haveClk  bool

	nav   int
	pages []*page0 // navigations, oldest first (bounded like the request ring)

	console *ring[*Message]
	errs    *ring[*PageError]
	nerrs   int

	har *harState
}

// page0 is a top-level navigation, a HAR page.
type page0 struct {
	nav           int
	url           string
	started       time.Time
	start         float64 // monotonic seconds of its document request, 0 unknown
	onContentLoad float64 // ms after start, -1 unknown
	onLoad        float64
}

// New returns an empty Log. o is copied; nil means the defaults.
func New(o *Options) *Log {
	c := o.withDefaults()
	return &Log{
		o:        c,
		reqs:     newRing[*Entry](c.MaxRequests),
		byID:     map[string]*Entry{},
		hops:     map[network.RequestID][]*Entry{},
		pendReq:  map[network.RequestID][]*network.EventRequestWillBeSentExtraInfo{},
		pendResp: map[network.RequestID][]*network.EventResponseReceivedExtraInfo{},
		console:  newRing[*Message](c.MaxConsole),
		errs:     newRing[*PageError](c.MaxConsole),
	}
}

// Handle records one decoded CDP event, as chromedp's listeners deliver
// them (a pointer to a cdproto event type). It takes the events of the
// Network domain (requestWillBeSent and its ExtraInfo, responseReceived
// and its ExtraInfo, dataReceived, loadingFinished, loadingFailed,
// requestServedFromCache, the webSocket events), Runtime.consoleAPICalled,
// Runtime.exceptionThrown, Log.entryAdded, and Page.domContentEventFired
// and Page.loadEventFired (HAR page timings); it ignores any other value.
func (l *Log) Handle(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		l.onRequest(ev)
	case *network.EventRequestWillBeSentExtraInfo:
		l.onRequestExtra(ev)
	case *network.EventResponseReceived:
		if e := l.last(ev.RequestID); e != nil {
			l.applyResponse(e, ev.Response)
			if ev.Type != "" {
				e.Type = strings.ToLower(string(ev.Type))
			}
		}
	case *network.EventResponseReceivedExtraInfo:
		l.onResponseExtra(ev)
	case *network.EventDataReceived:
		if e := l.last(ev.RequestID); e != nil {
			e.Size.Decoded += ev.DataLength
		}
	case *network.EventRequestServedFromCache:
		if e := l.last(ev.RequestID); e != nil {
			e.FromCache = true
		}
	case *network.EventLoadingFinished:
		if e := l.last(ev.RequestID); e != nil {
			e.Size.Transfer = int64(ev.EncodedDataLength)
			if ev.EncodedBodyLength > 0 {
				e.Size.Encoded = int64(ev.EncodedBodyLength)
			} else if e.responseHeadersSize > 0 && e.Size.Transfer >= int64(e.responseHeadersSize) {
				e.Size.Encoded = e.Size.Transfer - int64(e.responseHeadersSize)
			}
			l.finish(e, ev.Timestamp.Float64())
		}
	case *network.EventLoadingFailed:
		if e := l.last(ev.RequestID); e != nil {
			e.Failed, e.FailureText, e.Canceled = true, ev.ErrorText, ev.Canceled
			e.BlockedReason = string(ev.BlockedReason)
			if ev.Type != "" {
				e.Type = strings.ToLower(string(ev.Type))
			}
			l.finish(e, ev.Timestamp.Float64())
		}
	case *network.EventWebSocketCreated:
		l.onWebSocket(ev)
	case *network.EventWebSocketWillSendHandshakeRequest:
		if e := l.last(ev.RequestID); e != nil && ev.Request != nil {
			e.RequestHeaders, e.rawRequest = headerList(ev.Request.Headers), true
		}
	case *network.EventWebSocketHandshakeResponseReceived:
		if e := l.last(ev.RequestID); e != nil && ev.Response != nil {
			e.Status, e.StatusText, e.hasResponse = int(ev.Response.Status), ev.Response.StatusText, true
			e.ResponseHeaders, e.rawResponse = headerList(ev.Response.Headers), true
		}
	case *network.EventWebSocketFrameSent:
		l.onFrame(ev.RequestID, "send", ev.Timestamp.Float64(), ev.Response)
	case *network.EventWebSocketFrameReceived:
		l.onFrame(ev.RequestID, "receive", ev.Timestamp.Float64(), ev.Response)
	case *network.EventWebSocketClosed:
		if e := l.last(ev.RequestID); e != nil {
			l.finish(e, ev.Timestamp.Float64())
		}
	case *runtime.EventConsoleAPICalled:
		l.onConsole(ev)
	case *runtime.EventExceptionThrown:
		l.onException(ev)
	case *log.EventEntryAdded:
		l.onLogEntry(ev)
	case *page.EventDomContentEventFired:
		l.onPageTiming(ev.Timestamp.Float64(), false)
	case *page.EventLoadEventFired:
		l.onPageTiming(ev.Timestamp.Float64(), true)
	}
}

// last returns the newest hop of a CDP request, or nil.
func (l *Log) last(id network.RequestID) *Entry {
	h := l.hops[id]
	if len(h) == 0 {
		return nil
	}
	return h[len(h)-1]
}

// wall converts a monotonic timestamp (seconds) into wall-clock time,
// using the offset of the last requestWillBeSent; Now when none came yet.
func (l *Log) wall(mono float64) time.Time {
	if !l.haveClk || mono == 0 {
		return l.o.Now()
	}
	return epoch(l.clock + mono)
}

func epoch(sec float64) time.Time {
	return time.Unix(0, int64(sec*1e9))
}

func (l *Log) onRequest(ev *network.EventRequestWillBeSent) {
	if ev.Request == nil {
		return
	}
	if ev.WallTime > 0 && ev.Timestamp > 0 {
		l.clock, l.haveClk = ev.WallTime.Float64()-ev.Timestamp.Float64(), true
	}
	if prev := l.last(ev.RequestID); prev != nil && ev.RedirectResponse != nil {
		l.applyResponse(prev, ev.RedirectResponse)
		prev.RedirectURL = ev.Request.URL + ev.Request.URLFragment
		prev.Size.Transfer = int64(ev.RedirectResponse.EncodedDataLength)
		l.finish(prev, ev.Timestamp.Float64())
	}
	e := l.add(ev.RequestID)
	r := ev.Request
	e.Method, e.URL = r.Method, r.URL+r.URLFragment
	e.Type = strings.ToLower(string(ev.Type))
	if e.Type == "" {
		e.Type = "other"
	}
	e.Worker = ev.Type == network.ResourceTypeScript && ev.LoaderID == ""
	e.start = ev.Timestamp.Float64()
	e.Started = epoch(ev.WallTime.Float64())
	if ev.WallTime == 0 {
		e.Started = l.o.Now()
	}
	e.RequestHeaders = headerList(r.Headers)
	e.HasPostData = r.HasPostData
	var post []byte
	for _, p := range r.PostDataEntries {
		if p != nil {
			post = append(post, p.Bytes...)
		}
	}
	e.PostData = string(post)
	e.Initiator = initiator(ev.Initiator)
	if q := l.pendReq[ev.RequestID]; len(q) > 0 {
		l.applyRequestExtra(e, q[0])
		l.pendReq[ev.RequestID] = q[1:]
	}
	if q := l.pendResp[ev.RequestID]; len(q) > 0 {
		l.applyResponseExtra(e, q[0])
		l.pendResp[ev.RequestID] = q[1:]
	}
}

// add appends a new entry for the CDP id to the ring.
func (l *Log) add(id network.RequestID) *Entry {
	l.seq++
	l.nreq++
	e := &Entry{ID: "r" + strconv.Itoa(l.nreq), RequestID: id, Nav: l.nav, seq: l.seq,
		requestHeadersSize: -1, responseHeadersSize: -1}
	if old, evicted := l.reqs.push(e); evicted {
		l.forget(old)
	}
	l.byID[e.ID] = e
	l.hops[id] = append(l.hops[id], e)
	return e
}

// forget drops an entry evicted from the ring.
func (l *Log) forget(e *Entry) {
	delete(l.byID, e.ID)
	h := l.hops[e.RequestID]
	for i, x := range h {
		if x == e {
			h = append(h[:i:i], h[i+1:]...)
			break
		}
	}
	if len(h) == 0 {
		delete(l.hops, e.RequestID)
		delete(l.pendReq, e.RequestID)
		delete(l.pendResp, e.RequestID)
	} else {
		l.hops[e.RequestID] = h
	}
	if e.Body != nil && e.Body.Path != "" {
		os.Remove(e.Body.Path)
	}
}

func initiator(in *network.Initiator) Initiator {
	if in == nil {
		return Initiator{Type: "other"}
	}
	out := Initiator{Type: string(in.Type), URL: in.URL}
	if in.URL != "" {
		out.Line, out.Column = lineCol(in.LineNumber, in.ColumnNumber)
	}
	for st := in.Stack; st != nil && out.URL == ""; st = st.Parent {
		for _, f := range st.CallFrames {
			if f != nil && f.URL != "" {
				out.URL, out.Function = f.URL, f.FunctionName
				out.Line, out.Column = lineCol(float64(f.LineNumber), float64(f.ColumnNumber))
				break
			}
		}
	}
	return out
}

func (l *Log) applyResponse(e *Entry, r *network.Response) {
	if r == nil {
		return
	}
	e.hasResponse = true
	if !e.rawResponse || e.Status == 0 {
		e.Status = int(r.Status)
	}
	e.StatusText, e.MimeType, e.Protocol = r.StatusText, r.MimeType, r.Protocol
	if r.RemoteIPAddress != "" {
		e.RemoteAddress = r.RemoteIPAddress
		if r.RemotePort != 0 {
			e.RemoteAddress += ":" + strconv.FormatInt(r.RemotePort, 10)
		}
	}
	if r.ConnectionID != 0 {
		e.connection = strconv.FormatFloat(r.ConnectionID, 'f', -1, 64)
	}
	e.FromCache = e.FromCache || r.FromDiskCache || r.FromPrefetchCache
	e.FromServiceWorker = r.FromServiceWorker
	if !e.rawResponse {
		e.ResponseHeaders = headerList(r.Headers)
	}
	if !e.rawRequest && len(r.RequestHeaders) > 0 {
		e.RequestHeaders = headerList(r.RequestHeaders)
	}
	// A response the memory cache served carries the timing of the fetch
	// that first loaded it, long before this request: it says nothing of
	// this one.
	if r.Timing != nil && !e.FromCache && (e.start == 0 || r.Timing.RequestTime >= e.start-1) {
		t := *r.Timing
		e.Timing = timing(&t, e.start, 0)
		e.rt = &t
	}
	if e.Size.Transfer == 0 {
		e.Size.Transfer = int64(r.EncodedDataLength)
	}
}

// finish closes an entry at the monotonic time end (seconds).
func (l *Log) finish(e *Entry, end float64) {
	if e.Finished {
		return
	}
	e.Finished, e.end = true, end
	if end > 0 && e.start > 0 {
		e.Duration = round3(max(0, (end-e.start)*1000))
	}
	e.Timing = timing(e.rt, e.start, end)
	if e.start > 0 && end > 0 {
		// Blocked takes the gaps between phases, so that the phases add
		// up to Duration as HAR's entry.time wants.
		if d := e.Duration - e.Timing.total(); d > 0 {
			e.Timing.Blocked = round3(e.Timing.Blocked + d)
		}
		e.Duration = max(e.Duration, e.Timing.total())
	}
}

// onRequestExtra matches the raw request headers to the oldest hop of the
// id that lacks them; they may come before requestWillBeSent, and are kept
// until it does.
func (l *Log) onRequestExtra(ev *network.EventRequestWillBeSentExtraInfo) {
	for _, e := range l.hops[ev.RequestID] {
		if !e.rawRequest {
			l.applyRequestExtra(e, ev)
			return
		}
	}
	if q := l.pendReq[ev.RequestID]; len(q) < 8 {
		l.pendReq[ev.RequestID] = append(q, ev)
	}
}

func (l *Log) applyRequestExtra(e *Entry, ev *network.EventRequestWillBeSentExtraInfo) {
	e.RequestHeaders, e.rawRequest = headerList(ev.Headers), true
}

// onResponseExtra matches the raw response head to the oldest hop of the
// id that lacks it. It comes from the network service and may come before
// the hop's Network.requestWillBeSent: it is then kept until that does
// (CI lost data.json's Set-Cookie and sizes this way).
func (l *Log) onResponseExtra(ev *network.EventResponseReceivedExtraInfo) {
	for _, e := range l.hops[ev.RequestID] {
		if !e.rawResponse && e.Type != "websocket" {
			l.applyResponseExtra(e, ev)
			return
		}
	}
	if q := l.pendResp[ev.RequestID]; len(q) < 8 {
		l.pendResp[ev.RequestID] = append(q, ev)
	}
}

func (l *Log) applyResponseExtra(e *Entry, ev *network.EventResponseReceivedExtraInfo) {
	e.ResponseHeaders, e.rawResponse = headerList(ev.Headers), true
	if ev.StatusCode != 0 {
		e.Status = int(ev.StatusCode)
	}
	if ev.HeadersText != "" {
		e.responseHeadersSize = len(ev.HeadersText)
		// A head that comes after Network.loadingFinished still gives the
		// body's size on the wire.
		if e.Finished && e.Size.Encoded == 0 && e.Size.Transfer >= int64(e.responseHeadersSize) {
			e.Size.Encoded = e.Size.Transfer - int64(e.responseHeadersSize)
		}
	}
}

func (l *Log) onWebSocket(ev *network.EventWebSocketCreated) {
	e := l.add(ev.RequestID)
	e.Method, e.URL, e.Type = "GET", ev.URL, "websocket"
	e.Started = l.o.Now()
	e.Initiator = initiator(ev.Initiator)
}

func (l *Log) onFrame(id network.RequestID, typ string, ts float64, f *network.WebSocketFrame) {
	e := l.last(id)
	if e == nil || f == nil {
		return
	}
	if e.start == 0 {
		e.start = ts
	}
	data := string(f.PayloadData)
	if f.Opcode != 1 {
		data = b64(f.PayloadData)
	}
	if len(e.Frames) >= l.o.MaxFrames {
		e.Frames = append(e.Frames[:0], e.Frames[1:]...)
		e.droppedFrames++
	}
	e.Frames = append(e.Frames, Frame{Type: typ, Time: l.wall(ts), Opcode: int(f.Opcode), Data: data})
}

// Navigated marks a top-level navigation to url (Page.frameNavigated of
// the main frame). Requests and messages from then on get the next
// navigation index; so does the document request of that navigation and
// what followed it, which Chromium sends before the frame commits.
func (l *Log) Navigated(url string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nav++
	p := &page0{nav: l.nav, url: url, started: l.o.Now(), onContentLoad: -1, onLoad: -1}
	bare, _, _ := strings.Cut(url, "#")
	var doc *Entry
	l.reqs.each(func(e *Entry) bool {
		if e.Nav == l.nav-1 && e.Type == "document" && strings.TrimSuffix(strings.SplitN(e.URL, "#", 2)[0], "/") == strings.TrimSuffix(bare, "/") && !e.Failed {
			doc = e
		}
		return true
	})
	if doc != nil {
		first := doc
		if h := l.hops[doc.RequestID]; len(h) > 0 {
			first = h[0]
		}
		p.started, p.start = first.Started, first.start
		l.reqs.each(func(e *Entry) bool {
			if e.seq >= first.seq {
				e.Nav = l.nav
			}
			return true
		})
	}
	l.pages = append(l.pages, p)
	if len(l.pages) > l.o.MaxRequests {
		l.pages = l.pages[1:]
	}
}

func (l *Log) onPageTiming(ts float64, load bool) {
	if len(l.pages) == 0 {
		return
	}
	p := l.pages[len(l.pages)-1]
	if p.start == 0 || ts == 0 {
		return
	}
	ms := round3(max(0, (ts-p.start)*1000))
	if load {
		p.onLoad = ms
	} else {
		p.onContentLoad = ms
	}
}

// Dropped returns how many requests and console messages the rings have
// dropped since the log began.
func (l *Log) Dropped() (requests, console int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reqs.dropped, l.console.dropped
}

// Close removes the body files the log wrote. The log stays usable.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first error
	l.reqs.each(func(e *Entry) bool {
		if e.Body != nil && e.Body.Path != "" {
			if err := os.Remove(e.Body.Path); err != nil && !os.IsNotExist(err) && first == nil {
				first = err
			}
			e.Body.Path = ""
		}
		return true
	})
	return first
}
