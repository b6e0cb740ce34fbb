package stealth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// errSessionEnded is the error of a command on a relayed session that ended before it answered:
// the target detached (an iframe that went away, a worker that ended) or crashed.
var errSessionEnded = errors.New("the session ended (Target.detachedFromTarget or Inspector.targetCrashed)")

// sendMessageToTarget is Target.sendMessageToTarget, which cdproto no longer generates (the
// protocol marks it deprecated, but Chromium still serves it for sessions that are not flat).
var sendMessageToTarget = cdp.Command[sendMessageParams, cdp.Empty]{Method: "Target.sendMessageToTarget"}

type sendMessageParams struct {
	Message   string           `json:"message"`
	SessionID target.SessionID `json:"sessionId"`
}

// relay is a [cdp.Session] on a target that a watch auto-attached with flatten false: its
// commands go to the target as Target.sendMessageToTarget on the parent session, and its replies
// and events come back inside the parent's Target.receivedMessageFromTarget events, which the
// parent's hub hands to receive.
//
// Why not flat: chromedp v0.23.0 routes a flattened session's messages only for the sessions it
// opened itself with Target.attachToTarget (its Browser keeps them in an unexported map, and
// neither Browser.Call nor Target.Call can name another session), so it cannot address an
// auto-attach session. And Chromium lets a frame that waitForDebuggerOnStart paused go only on
// that auto-attach session: the pause is a navigation throttle of the parent's
// TargetHandler, released by Runtime.runIfWaitingForDebugger on that very session
// (content/browser/devtools/protocol/target_handler.cc, Session::ResumeIfThrottled). Measured on
// Chromium 156 with chromedp v0.23.0: detaching the auto-attach session leaves the iframe
// unloaded for good, and chromedp cannot open a session of its own on the paused frame (its
// attach runs Runtime.evaluate("self"), which fails there: "Cannot find default execution
// context"). A session that is not flat is Chromium's other way in: Target.sendMessageToTarget
// of Runtime.runIfWaitingForDebugger resumes the throttle too (Session::SendMessageToAgentHost).
type relay struct {
	parent cdp.Session
	id     target.SessionID
	next   atomic.Int64

	mu        sync.Mutex
	pending   map[int64]chan *cdproto.Message
	subs      map[string]map[*subscription]struct{}
	listeners []func(method string, params jsonv2.Value)
	onClose   []func()
	closed    bool
	done      chan struct{}
}

func newRelay(parent cdp.Session, id target.SessionID) *relay {
	return &relay{parent: parent, id: id, pending: map[int64]chan *cdproto.Message{}, done: make(chan struct{})}
}

// Call sends the command to the relayed session and waits for its reply. It satisfies
// [cdp.Session]. A browser error comes back as a [*cdproto.Error]; errSessionEnded when the
// session ends first.
func (r *relay) Call(ctx context.Context, method string, params, res any) error {
	wait, err := r.start(ctx, method, params)
	if err != nil {
		return err
	}
	return wait(ctx, res)
}

// start sends the command and returns once the browser has taken it (the reply to
// Target.sendMessageToTarget): a command started after it reaches the target after it. wait
// then waits for its reply, as Call does; it must be called once.
func (r *relay) start(ctx context.Context, method string, params any) (wait func(ctx context.Context, res any) error, err error) {
	id := r.next.Add(1)
	msg := &cdproto.Message{ID: id, Method: cdproto.MethodType(method)}
	if params != nil {
		buf, err := jsonv2.Marshal(params, chromedp.DefaultMarshalOptions)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", method, err)
		}
		msg.Params = buf
	}
	raw, err := jsonv2.Marshal(msg, chromedp.DefaultMarshalOptions)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", method, err)
	}
	ch := make(chan *cdproto.Message, 1)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errSessionEnded
	}
	r.pending[id] = ch
	r.mu.Unlock()
	forget := func() {
		r.mu.Lock()
		delete(r.pending, id)
		r.mu.Unlock()
	}
	if _, err := cdp.Call(ctx, r.parent, sendMessageToTarget, sendMessageParams{Message: string(raw), SessionID: r.id}); err != nil {
		forget()
		return nil, fmt.Errorf("Target.sendMessageToTarget(%s): %w", method, err)
	}
	return func(ctx context.Context, res any) error {
		defer forget()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-ch:
			return decodeReply(m, res)
		case <-r.done:
			select {
			case m := <-ch:
				return decodeReply(m, res)
			default:
			}
			return errSessionEnded
		}
	}, nil
}

func decodeReply(m *cdproto.Message, res any) error {
	switch {
	case m.Error != nil:
		return m.Error
	case res != nil && len(m.Result) > 0:
		return jsonv2.Unmarshal(m.Result, res, chromedp.DefaultUnmarshalOptions)
	}
	return nil
}

// Subscribe buffers the session's events of the method, without a limit, from when it returns,
// until the session ends. It satisfies [cdp.Session].
func (r *relay) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	s := newSubscription()
	r.mu.Lock()
	if r.closed {
		s.finish()
	} else {
		if r.subs == nil {
			r.subs = map[string]map[*subscription]struct{}{}
		}
		if r.subs[method] == nil {
			r.subs[method] = map[*subscription]struct{}{}
		}
		r.subs[method][s] = struct{}{}
	}
	r.mu.Unlock()
	return s.out, func() {
		r.mu.Lock()
		delete(r.subs[method], s)
		r.mu.Unlock()
		s.stop()
	}
}

// listen calls fn with every event of the session, in order, from the goroutine that receives
// them: fn must not block.
func (r *relay) listen(fn func(method string, params jsonv2.Value)) {
	r.mu.Lock()
	r.listeners = append(r.listeners, fn)
	r.mu.Unlock()
}

// whenClosed runs fn once the session ends (at once if it has).
func (r *relay) whenClosed(fn func()) {
	r.mu.Lock()
	if !r.closed {
		r.onClose = append(r.onClose, fn)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	fn()
}

// receive takes one message of the session (the message of a Target.receivedMessageFromTarget):
// a reply goes to its command, an event to the listeners and subscriptions. It never blocks.
func (r *relay) receive(raw string) {
	m := new(cdproto.Message)
	if err := jsonv2.Unmarshal([]byte(raw), m, chromedp.DefaultUnmarshalOptions); err != nil {
		return
	}
	if m.ID != 0 {
		r.mu.Lock()
		ch := r.pending[m.ID]
		r.mu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default:
			}
		}
		return
	}
	if m.Method == "" {
		return
	}
	method := string(m.Method)
	r.mu.Lock()
	listeners := r.listeners
	for s := range r.subs[method] {
		s.push(m.Params)
	}
	r.mu.Unlock()
	for _, fn := range listeners {
		fn(method, m.Params)
	}
	if method == inspector.TargetCrashed.Method {
		// An ended worker or a crashed renderer never answers again.
		r.close()
	}
}

// close ends the session: its waiting commands fail with errSessionEnded, its subscriptions
// deliver what they hold and end, and its whenClosed funcs run. Safe to call more than once.
func (r *relay) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	close(r.done)
	for _, m := range r.subs {
		for s := range m {
			s.finish()
		}
	}
	r.subs = nil
	fns := r.onClose
	r.onClose = nil
	r.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// subscription is one Subscribe of a relay: an unbounded queue, so that the relay never blocks,
// and a goroutine that moves its events to out in order.
type subscription struct {
	out  chan jsonv2.Value
	wake chan struct{}
	done chan struct{}

	mu       sync.Mutex
	queue    []jsonv2.Value
	finished bool
	stopOnce sync.Once
}

func newSubscription() *subscription {
	s := &subscription{out: make(chan jsonv2.Value), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.pump()
	return s
}

func (s *subscription) push(v jsonv2.Value) {
	s.mu.Lock()
	s.queue = append(s.queue, v)
	s.mu.Unlock()
	s.signal()
}

// finish ends the subscription once it has delivered what it holds.
func (s *subscription) finish() {
	s.mu.Lock()
	s.finished = true
	s.mu.Unlock()
	s.signal()
}

// stop ends the subscription at once.
func (s *subscription) stop() { s.stopOnce.Do(func() { close(s.done) }) }

func (s *subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscription) pump() {
	defer close(s.out)
	for {
		s.mu.Lock()
		q, finished := s.queue, s.finished
		s.queue = nil
		s.mu.Unlock()
		for _, v := range q {
			select {
			case s.out <- v:
			case <-s.done:
				return
			}
		}
		if len(q) > 0 {
			continue
		}
		if finished {
			return
		}
		select {
		case <-s.wake:
		case <-s.done:
			return
		}
	}
}

// hub routes the messages of the sessions that one session (the page's, or a relayed iframe's)
// auto-attached, and starts the patch of each target that attaches. Its event func runs on the
// goroutine that receives the parent's events: it never blocks and never calls CDP.
type hub struct {
	in     *installer
	ctx    context.Context
	parent cdp.Session

	mu       sync.Mutex
	children map[target.SessionID]*relay
	closed   bool
}

func newHub(ctx context.Context, in *installer, parent cdp.Session) *hub {
	return &hub{in: in, ctx: ctx, parent: parent, children: map[target.SessionID]*relay{}}
}

// event handles one event of the parent session.
func (h *hub) event(ev any) {
	switch e := ev.(type) {
	case *target.EventAttachedToTarget:
		if e.TargetInfo == nil {
			return
		}
		r := newRelay(h.parent, e.SessionID)
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return
		}
		h.children[e.SessionID] = r
		h.mu.Unlock()
		go h.in.child(h.ctx, h.parent, r, e) // never blocks the parent's events, never calls CDP from them
	case *target.EventReceivedMessageFromTarget:
		h.mu.Lock()
		r := h.children[e.SessionID]
		h.mu.Unlock()
		if r != nil {
			r.receive(e.Message)
		}
	case *target.EventDetachedFromTarget:
		h.mu.Lock()
		r := h.children[e.SessionID]
		delete(h.children, e.SessionID)
		h.mu.Unlock()
		if r != nil {
			r.close()
		}
	}
}

// rawEvent decodes the parent's events that the hub handles, for a relayed parent.
func (h *hub) rawEvent(method string, params jsonv2.Value) {
	var ev any
	switch method {
	case target.AttachedToTarget.Method:
		ev = new(target.EventAttachedToTarget)
	case target.ReceivedMessageFromTarget.Method:
		ev = new(target.EventReceivedMessageFromTarget)
	case target.DetachedFromTarget.Method:
		ev = new(target.EventDetachedFromTarget)
	default:
		return
	}
	if err := jsonv2.Unmarshal(params, ev, chromedp.DefaultUnmarshalOptions); err != nil {
		return
	}
	h.event(ev)
}

// close ends every child session: the parent session ended (and its targets with it) or the
// watch's context did.
func (h *hub) close() {
	h.mu.Lock()
	h.closed = true
	children := h.children
	h.children = nil
	h.mu.Unlock()
	for _, r := range children {
		r.close()
	}
}
