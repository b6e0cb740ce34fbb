package netlog

import (
	"context"
	"encoding/base64"
	"os"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TextType reports whether a MIME type is text a body capture keeps by
// default: text/*, JSON, JavaScript, XML, SVG, form data and the like.
func TextType(mime string) bool {
	m := strings.ToLower(strings.TrimSpace(mime))
	m, _, _ = strings.Cut(m, ";")
	if strings.HasPrefix(m, "text/") {
		return true
	}
	for _, s := range []string{"json", "javascript", "ecmascript", "xml", "x-www-form-urlencoded", "graphql", "yaml", "csv"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// WantBody is the body policy: it reports whether the caller should fetch
// the response body of the CDP request id (FetchBody) once
// Network.loadingFinished came, and attach it with SetBody. It says yes
// for a finished, not failed response that has a body of at most
// Options.MaxBody bytes (by Network.dataReceived, else by the transfer
// size) and a text MIME type (TextType), or any type while a HAR
// recording that keeps content runs. It says no for redirects, WebSockets
// and 204/304 responses.
func (l *Log) WantBody(id network.RequestID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.last(id)
	if e == nil || !e.Finished || e.Failed || !e.hasResponse || e.Type == "websocket" || e.RedirectURL != "" {
		return false
	}
	if e.Status == 204 || e.Status == 304 || e.Method == "HEAD" || (e.Status >= 300 && e.Status < 400) {
		return false
	}
	size := e.Size.Decoded
	if size == 0 {
		size = max(e.Size.Encoded, e.Size.Transfer)
	}
	if size > int64(l.o.MaxBody) {
		return false
	}
	if l.har != nil && l.har.o.Content != "omit" {
		return true
	}
	return TextType(e.MimeType)
}

// SetBody attaches the response body of the newest hop of the CDP request
// id: body is its bytes (decoded, as FetchBody returns them), base64 says
// the browser sent it as base64 (a binary body, kept and exported as
// base64). A body above Options.InlineBody goes to a 0600 file under
// Options.BodyDir, or is cut when there is none. Errors: element_not_found
// for an id the log does not hold; the error of the file write.
func (l *Log) SetBody(id network.RequestID, body []byte, base64 bool) error {
	l.mu.Lock()
	e := l.last(id)
	if e == nil {
		l.mu.Unlock()
		return notFound(string(id))
	}
	entryID, dir, inline := e.ID, l.o.BodyDir, l.o.InlineBody
	l.mu.Unlock()

	b := &Body{Size: len(body), Base64: base64}
	switch {
	case len(body) <= inline:
		b.raw = append([]byte(nil), body...)
	case dir != "":
		path, err := writeBody(dir, entryID+"-*.body", l.redactBody(body, base64))
		if err != nil {
			return err
		}
		b.Path = path
	default:
		b.raw, b.Truncated = append([]byte(nil), body[:inline]...), true
	}
	if b.raw != nil {
		b.Text = string(b.raw)
		if base64 {
			b.Text = b64(b.raw)
		}
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byID[entryID]
	if !ok { // evicted while the file was written
		if b.Path != "" {
			os.Remove(b.Path)
		}
		return notFound(entryID)
	}
	if e.Body != nil && e.Body.Path != "" {
		os.Remove(e.Body.Path)
	}
	e.Body = b
	if e.Size.Decoded == 0 {
		e.Size.Decoded = int64(len(body))
	}
	return nil
}

// SetPostData attaches the request body of the newest hop of the CDP
// request id, for a request whose post data CDP did not send inline
// (Entry.HasPostData with an empty PostData; see FetchPostData). Errors:
// element_not_found for an unknown id.
func (l *Log) SetPostData(id network.RequestID, data []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.last(id)
	if e == nil {
		return notFound(string(id))
	}
	e.PostData, e.HasPostData = string(data), true
	return nil
}

// redactBody masks Options.Redact's secrets in a text body; a base64
// (binary) one is kept as it is.
func (l *Log) redactBody(b []byte, base64 bool) []byte {
	if base64 || len(b) == 0 || l.o.Redact == nil {
		return b
	}
	if r := l.o.Redact(string(b)); r != string(b) {
		return []byte(r)
	}
	return b
}

// writeBody writes b to a new 0600 file in dir (created 0700) named by
// pattern, and returns its path.
func writeBody(dir, pattern string, b []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, pattern) // CreateTemp makes 0600 files
	if err != nil {
		return "", err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// bodyBytes returns the bytes of a body, reading its file when spilled.
func bodyBytes(b *Body) ([]byte, error) {
	if b.Path != "" {
		return os.ReadFile(b.Path)
	}
	return b.raw, nil
}

// FetchBody gets the response body of a finished request with
// Network.getResponseBody on sess: its bytes, decoded, and whether the
// browser sent it as base64 (a binary body). Call it outside the event
// listener, after Network.loadingFinished; a body is gone once the page
// navigates or the browser evicts it from its buffer.
func FetchBody(ctx context.Context, sess cdp.Session, id network.RequestID) ([]byte, bool, error) {
	res, err := cdp.Call(ctx, sess, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
	if err != nil {
		return nil, false, err
	}
	return res.Body, res.Base64encoded, nil
}

// FetchPostData gets the request body CDP left out of
// Network.requestWillBeSent (a large one) with Network.getRequestPostData.
func FetchPostData(ctx context.Context, sess cdp.Session, id network.RequestID) ([]byte, error) {
	res, err := cdp.Call(ctx, sess, network.GetRequestPostData, network.GetRequestPostDataParams{RequestID: id})
	if err != nil {
		return nil, err
	}
	return res.PostData, nil
}
