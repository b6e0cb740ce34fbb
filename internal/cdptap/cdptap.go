// Package cdptap watches the CDP commands a browser connection writes, so
// that a caller can send two commands in a fixed order without waiting for
// the first one's answer: it sends the second once the first is written.
// Puppeteer and Playwright do the same when they send a mouse move, press
// and release together; chromedp's Call blocks until its answer, and two
// calls on two goroutines reach the connection in either order.
//
// It owns no connection. A Tap is the protocol logger of a chromedp
// browser (chromedp.WithDebugf): chromedp's transports (the pipe of a
// launched browser and the WebSocket of package remote) call it with
// "-> %s" and a command's bytes just before they write them, from the one
// goroutine that writes every command, and with "<- %s" for each message
// they read. A command that goroutine writes after the call is on the
// connection after the watched one.
package cdptap

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
)

// Tap is the protocol logger that tells when commands are written. Its
// zero value is not usable; use New.
type Tap struct {
	// live is set by the first write Logf sees: a transport that has no
	// protocol logger never sets it, and callers then wait for answers.
	live    atomic.Bool
	watched atomic.Int32 // len(watches), read without mu

	mu      sync.Mutex
	watches map[*watch]struct{}
}

// watch is one Watch call: the first write of method on session closes
// written.
type watch struct {
	session, method []byte
	written         chan struct{}
}

// New returns a Tap that watches nothing yet.
func New() *Tap { return &Tap{watches: map[*watch]struct{}{}} }

// Logf is the connection's protocol logger: pass it to
// chromedp.WithDebugf when the browser is allocated. It closes the
// channel of each Watch whose command the connection is about to write.
// It formats nothing, so it costs a string comparison per message.
func (t *Tap) Logf(format string, args ...any) {
	if format != "-> %s" || len(args) != 1 {
		return
	}
	t.live.Store(true)
	if t.watched.Load() == 0 {
		return
	}
	b, ok := args[0].([]byte)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for w := range t.watches {
		if bytes.Contains(b, w.method) && bytes.Contains(b, w.session) {
			close(w.written)
			delete(t.watches, w)
			t.watched.Add(-1)
		}
	}
}

// Live reports whether the tap has seen the connection write a command,
// that is, whether Watch can ever fire. (A browser writes its first
// commands as it connects, before any page exists.)
func (t *Tap) Live() bool { return t != nil && t.live.Load() }

// Watch returns a channel that is closed when the connection writes the
// next command of method (a CDP method such as "Input.dispatchMouseEvent")
// on the target session session, after Watch was called. stop ends the
// watch; call it once the channel is no longer read. The caller makes sure
// that no other such command goes to the session meanwhile (tabpilot's
// input actions take the page's input one at a time).
func (t *Tap) Watch(session, method string) (written <-chan struct{}, stop func()) {
	w := &watch{
		session: []byte(`"sessionId":"` + session + `"`),
		method:  []byte(`"method":"` + method + `"`),
		written: make(chan struct{}),
	}
	t.mu.Lock()
	t.watches[w] = struct{}{}
	t.watched.Add(1)
	t.mu.Unlock()
	return w.written, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, ok := t.watches[w]; ok {
			delete(t.watches, w)
			t.watched.Add(-1)
		}
	}
}

type key struct{}

// NewContext returns a copy of ctx that carries t: the browser's context,
// so that its tabs' contexts carry it too.
func NewContext(ctx context.Context, t *Tap) context.Context {
	return context.WithValue(ctx, key{}, t)
}

// FromContext returns the Tap ctx carries, or nil.
func FromContext(ctx context.Context) *Tap {
	t, _ := ctx.Value(key{}).(*Tap)
	return t
}
