package netlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/secrets"
)

// HAROptions configure a HAR recording.
type HAROptions struct {
	// Content says what becomes of response bodies: "embed" (the default)
	// puts them in content.text (base64 for binary ones), "omit" leaves
	// them out, "file" writes each to a 0600 file under Dir and names it
	// in content._file.
	Content string
	// Dir is the directory of the body files of Content "file".
	Dir string
}

// harState is a running recording.
type harState struct {
	o        HAROptions
	startSeq int // entries with a higher seq belong to it
	startNav int
	dropped  int // the request ring's dropped count at the start
}

// StartHAR starts a HAR recording: the requests issued from now on, and
// the navigations, go into the HAR that StopHAR returns. While it runs with
// content kept, WantBody asks for bodies of every type. Errors:
// bad_request for an unknown Content, a "file" recording without Dir, or
// a recording already running.
func (l *Log) StartHAR(o HAROptions) error {
	switch o.Content {
	case "":
		o.Content = "embed"
	case "embed", "omit":
	case "file":
		if o.Dir == "" {
			return badRequest("HAR content \"file\" needs a directory")
		}
	default:
		return badRequest("unknown HAR content %q: use embed, omit or file", o.Content)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.har != nil {
		return badRequest("a HAR recording is already running; stop it first")
	}
	l.har = &harState{o: o, startSeq: l.seq, startNav: l.nav, dropped: l.reqs.dropped}
	return nil
}

// StopHAR ends the recording and returns its HAR. Errors: bad_request when
// none runs; the error of writing a body file (Content "file").
func (l *Log) StopHAR() (*HAR, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.har == nil {
		return nil, badRequest("no HAR recording is running")
	}
	h, err := l.buildHAR()
	l.har = nil
	return h, err
}

// WriteHAR writes the running recording, as it is so far, to w as
// indented JSON; the recording goes on. Errors: bad_request when none
// runs, else those of the body files and of w.
func (l *Log) WriteHAR(w io.Writer) error {
	l.mu.Lock()
	if l.har == nil {
		l.mu.Unlock()
		return badRequest("no HAR recording is running")
	}
	h, err := l.buildHAR()
	l.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = h.WriteTo(w)
	return err
}

// HAR is an HTTP Archive 1.2 document (http://www.softwareishard.com/blog/har-12-spec/),
// with Chromium's extensions _resourceType, _initiator, _error and
// _webSocketMessages.
type HAR struct {
	Log HARLog `json:"log"`
	// redact is the log's Options.Redact, for WriteTo.
	redact func(string) string
}

// WriteTo writes h as indented JSON, with the secrets of the log's
// Options.Redact masked.
func (h *HAR) WriteTo(w io.Writer) (int64, error) {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return 0, err
	}
	if h.redact != nil {
		b = redactJSON(b, h.redact)
	}
	n, err := w.Write(append(b, '\n'))
	return int64(n), err
}

// redactJSON masks the secrets of redact in the JSON document b, string
// by string (and key by key) of the decoded document, so that a value is
// found in whatever form the page gave it, before JSON escaped it again.
func redactJSON(b []byte, redact func(string) string) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // sizes and times as they were
	if err := dec.Decode(&v); err != nil {
		return []byte(redact(string(b)))
	}
	out, err := json.MarshalIndent(secrets.MapStrings(v, redact), "", "  ")
	if err != nil {
		return []byte(redact(string(b)))
	}
	return out
}

// HARLog is the log object: version "1.2", the creator, pages and entries.
type HARLog struct {
	Version string     `json:"version"`
	Creator HARCreator `json:"creator"`
	Pages   []HARPage  `json:"pages"`
	Entries []HAREntry `json:"entries"`
	Comment string     `json:"comment,omitempty"`
}

// HARCreator names the program that wrote the HAR.
type HARCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// HARPage is a top-level navigation; PageTimings are milliseconds after its
// start, -1 unknown.
type HARPage struct {
	StartedDateTime string         `json:"startedDateTime"`
	ID              string         `json:"id"`
	Title           string         `json:"title"`
	PageTimings     HARPageTimings `json:"pageTimings"`
}

// HARPageTimings are Page.domContentEventFired and Page.loadEventFired, in
// milliseconds after the page's start.
type HARPageTimings struct {
	OnContentLoad float64 `json:"onContentLoad"`
	OnLoad        float64 `json:"onLoad"`
}

// HAREntry is one request. Time is in milliseconds.
type HAREntry struct {
	Pageref           string                `json:"pageref,omitempty"`
	StartedDateTime   string                `json:"startedDateTime"`
	Time              float64               `json:"time"`
	Request           HARRequest            `json:"request"`
	Response          HARResponse           `json:"response"`
	Cache             struct{}              `json:"cache"`
	Timings           HARTimings            `json:"timings"`
	ServerIPAddress   string                `json:"serverIPAddress,omitempty"`
	Connection        string                `json:"connection,omitempty"`
	ResourceType      string                `json:"_resourceType,omitempty"`
	Initiator         *HARInitiator         `json:"_initiator,omitempty"`
	WebSocketMessages []HARWebSocketMessage `json:"_webSocketMessages,omitempty"`
}

// HARInitiator is Chromium's _initiator; LineNumber is 0-based as there.
type HARInitiator struct {
	Type       string `json:"type"`
	URL        string `json:"url,omitempty"`
	LineNumber *int   `json:"lineNumber,omitempty"`
}

// HARRequest is the request; sizes are bytes, -1 unknown.
type HARRequest struct {
	Method      string       `json:"method"`
	URL         string       `json:"url"`
	HTTPVersion string       `json:"httpVersion"`
	Cookies     []HARCookie  `json:"cookies"`
	Headers     []Header     `json:"headers"`
	QueryString []Header     `json:"queryString"`
	PostData    *HARPostData `json:"postData,omitempty"`
	HeadersSize int          `json:"headersSize"`
	BodySize    int          `json:"bodySize"`
}

// HARPostData is a request body.
type HARPostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// HARResponse is the response; Status 0 and _error for a failed request.
type HARResponse struct {
	Status      int         `json:"status"`
	StatusText  string      `json:"statusText"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []HARCookie `json:"cookies"`
	Headers     []Header    `json:"headers"`
	Content     HARContent  `json:"content"`
	RedirectURL string      `json:"redirectURL"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int64       `json:"bodySize"`
	Error       string      `json:"_error,omitempty"`
}

// HARContent is the response body: Size its decoded length in bytes, Text
// the body (Encoding "base64" for binary) or File the file holding it.
type HARContent struct {
	Size        int64  `json:"size"`
	Compression int64  `json:"compression,omitempty"`
	MimeType    string `json:"mimeType"`
	Text        string `json:"text,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	File        string `json:"_file,omitempty"`
}

// HARCookie is a cookie of a Cookie or Set-Cookie header.
type HARCookie struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Path     string `json:"path,omitempty"`
	Domain   string `json:"domain,omitempty"`
	Expires  string `json:"expires,omitempty"`
	HTTPOnly bool   `json:"httpOnly,omitempty"`
	Secure   bool   `json:"secure,omitempty"`
}

// HARTimings are the phases in milliseconds, -1 for one that did not
// happen.
type HARTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
}

// HARWebSocketMessage is one frame in Chromium's _webSocketMessages: Time
// in seconds since the epoch.
type HARWebSocketMessage struct {
	Type   string  `json:"type"`
	Time   float64 `json:"time"`
	Opcode int     `json:"opcode"`
	Data   string  `json:"data"`
}

const harTime = "2006-01-02T15:04:05.000Z07:00"

func creatorVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// buildHAR builds the HAR of the running recording; l.mu is held.
func (l *Log) buildHAR() (*HAR, error) {
	st := l.har
	h := &HAR{Log: HARLog{Version: "1.2", Creator: HARCreator{Name: "tabpilot", Version: creatorVersion()},
		Pages: []HARPage{}, Entries: []HAREntry{}}, redact: l.o.Redact}
	if d := l.reqs.dropped - st.dropped; d > 0 {
		h.Log.Comment = fmt.Sprintf("%d requests were dropped from the log's ring and are missing", d)
	}
	navs := map[int]bool{}
	var err error
	l.reqs.each(func(e *Entry) bool {
		if e.seq <= st.startSeq {
			return true
		}
		var he HAREntry
		he, err = l.harEntry(e, st.o)
		if err != nil {
			return false
		}
		if e.Nav > 0 {
			navs[e.Nav] = true
		}
		h.Log.Entries = append(h.Log.Entries, he)
		return true
	})
	if err != nil {
		return nil, err
	}
	for _, p := range l.pages {
		if p.nav > st.startNav || navs[p.nav] {
			h.Log.Pages = append(h.Log.Pages, HARPage{StartedDateTime: p.started.UTC().Format(harTime),
				ID: pageID(p.nav), Title: p.url, PageTimings: HARPageTimings{OnContentLoad: p.onContentLoad, OnLoad: p.onLoad}})
		}
	}
	return h, nil
}

func pageID(nav int) string { return "page_" + strconv.Itoa(nav) }

func (l *Log) harEntry(e *Entry, o HAROptions) (HAREntry, error) {
	he := HAREntry{StartedDateTime: e.Started.UTC().Format(harTime), Time: e.Duration, ResourceType: e.Type}
	if e.Nav > 0 {
		he.Pageref = pageID(e.Nav)
	}
	t := e.Timing
	if t == nil {
		t = &Timing{Blocked: e.Duration, DNS: -1, Connect: -1, SSL: -1}
	}
	he.Timings = HARTimings{Blocked: t.Blocked, DNS: t.DNS, Connect: t.Connect, Send: t.Send, Wait: t.Wait, Receive: t.Receive, SSL: t.SSL}
	if host, _, err := net.SplitHostPort(e.RemoteAddress); err == nil {
		he.ServerIPAddress = host
	} else if e.RemoteAddress != "" {
		he.ServerIPAddress = strings.Trim(e.RemoteAddress, "[]")
	}
	he.Connection = e.connection
	he.Initiator = &HARInitiator{Type: e.Initiator.Type, URL: e.Initiator.URL}
	if e.Initiator.Line > 0 {
		n := e.Initiator.Line - 1
		he.Initiator.LineNumber = &n
	}
	version := httpVersion(e.Protocol)
	req := HARRequest{Method: e.Method, URL: e.URL, HTTPVersion: version, Cookies: requestCookies(e.RequestHeaders),
		Headers: nonNil(e.RequestHeaders), QueryString: queryString(e.URL), HeadersSize: -1, BodySize: len(e.PostData)}
	if e.PostData != "" {
		mime := headerValue(e.RequestHeaders, "Content-Type")
		if mime == "" {
			mime = "application/octet-stream"
		}
		req.PostData = &HARPostData{MimeType: mime, Text: e.PostData}
	}
	he.Request = req
	resp := HARResponse{Status: e.Status, StatusText: e.StatusText, HTTPVersion: version,
		Cookies: responseCookies(e.ResponseHeaders), Headers: nonNil(e.ResponseHeaders),
		RedirectURL: e.RedirectURL, HeadersSize: e.responseHeadersSize, BodySize: -1, Error: e.FailureText}
	switch {
	case e.Size.Encoded > 0:
		resp.BodySize = e.Size.Encoded
	case e.FromCache || e.Status == 304 || e.RedirectURL != "":
		resp.BodySize = 0
	case e.Finished && !e.Failed:
		resp.BodySize = e.Size.Decoded
	}
	c := HARContent{Size: e.Size.Decoded, MimeType: e.MimeType}
	if c.MimeType == "" {
		c.MimeType = "x-unknown"
	}
	if e.Size.Encoded > 0 && e.Size.Decoded > e.Size.Encoded {
		c.Compression = e.Size.Decoded - e.Size.Encoded
	}
	if b := e.Body; b != nil && o.Content != "omit" && !b.Truncated {
		raw, err := bodyBytes(b)
		if err != nil {
			return he, fmt.Errorf("read the body of %s: %w", e.ID, err)
		}
		c.Size = int64(len(raw))
		if o.Content == "file" {
			name := e.ID + "-*" + path.Ext(strings.SplitN(e.URL, "?", 2)[0])
			if c.File, err = writeBody(o.Dir, name, l.redactBody(raw, b.Base64)); err != nil {
				return he, fmt.Errorf("write the body of %s: %w", e.ID, err)
			}
		} else if b.Base64 {
			c.Text, c.Encoding = b64(raw), "base64"
		} else {
			c.Text = string(raw)
		}
	}
	resp.Content = c
	he.Response = resp
	for _, f := range e.Frames {
		he.WebSocketMessages = append(he.WebSocketMessages, HARWebSocketMessage{Type: f.Type,
			Time: float64(f.Time.UnixNano()) / 1e9, Opcode: f.Opcode, Data: f.Data})
	}
	return he, nil
}

func nonNil(h []Header) []Header {
	if h == nil {
		return []Header{}
	}
	return h
}

// httpVersion names Chromium's protocol as HAR does: HTTP/1.1, HTTP/2,
// HTTP/3, else the protocol as it is (data, blob) or "".
func httpVersion(p string) string {
	switch strings.ToLower(p) {
	case "http/1.0":
		return "HTTP/1.0"
	case "http/1.1":
		return "HTTP/1.1"
	case "h2", "http/2", "http/2.0":
		return "HTTP/2"
	case "h3", "http/3", "quic":
		return "HTTP/3"
	}
	return p
}

func queryString(u string) []Header {
	out := []Header{}
	pu, err := url.Parse(u)
	if err != nil || pu.RawQuery == "" {
		return out
	}
	for kv := range strings.SplitSeq(pu.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		out = append(out, Header{Name: k, Value: v})
	}
	return out
}

func requestCookies(hs []Header) []HARCookie {
	out := []HARCookie{}
	for _, h := range hs {
		if !strings.EqualFold(h.Name, "Cookie") {
			continue
		}
		cs, err := http.ParseCookie(h.Value)
		if err != nil {
			continue
		}
		for _, c := range cs {
			out = append(out, HARCookie{Name: c.Name, Value: c.Value})
		}
	}
	return out
}

func responseCookies(hs []Header) []HARCookie {
	out := []HARCookie{}
	for _, h := range hs {
		if !strings.EqualFold(h.Name, "Set-Cookie") {
			continue
		}
		c, err := http.ParseSetCookie(h.Value)
		if err != nil {
			continue
		}
		hc := HARCookie{Name: c.Name, Value: c.Value, Path: c.Path, Domain: c.Domain, HTTPOnly: c.HttpOnly, Secure: c.Secure}
		if !c.Expires.IsZero() {
			hc.Expires = c.Expires.UTC().Format(time.RFC3339)
		}
		out = append(out, hc)
	}
	return out
}
