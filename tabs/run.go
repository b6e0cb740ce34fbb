package tabs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// opCtx derives an operation context from parent (a tab's or the
// supervisor's) with the timeout, cancelled too when req is done or dead
// is closed (the tab died: a CDP call to a crashed renderer is never
// answered, so every call under the context ends at once instead of at
// the deadline).
func opCtx(parent, req context.Context, timeout time.Duration, dead <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	stop := context.AfterFunc(req, cancel)
	go func() {
		select {
		case <-dead:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { stop(); cancel() }
}

// Run runs job on the tab name's action slot with the timeout. A busy tab
// fails at once with busy. When the timeout passes (or ctx is cancelled)
// the job is interrupted; if it has not returned within the grace period
// the tab is killed and the error says so. A job that returns after the
// deadline yields a timeout error. Panics in the job become internal errors.
func (s *Supervisor) Run(ctx context.Context, name string, timeout time.Duration, job Job) error {
	t, err := s.Tab(name)
	if err != nil {
		return err
	}
	if !t.tryAcquire() {
		return &Error{Code: errcode.Busy, Msg: fmt.Sprintf("tab %q is busy running another action", t.Name()), Err: ErrBusy}
	}
	defer t.release()
	asked := timeout
	timeout = s.Timeout(timeout)
	rctx, cancel := opCtx(t.Context(), ctx, timeout, t.Dead())
	defer cancel()
	// A run that starts while a navigation holds the page ends with the
	// honest error once it has held it for 5 s, not at its timeout.
	rctx, cancelHeld, held := t.HeldByPending(rctx)
	defer cancelHeld()

	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in run", "tab", t.Name(), "panic", p)
				done <- Errorf(errcode.Internal, "internal error: %v", p)
			}
		}()
		if t.unsettled.CompareAndSwap(true, false) {
			// A popup's first run finds its page settled, as an open's
			// would: the page opened it, and nothing waited for it yet.
			t.AwaitSettled(rctx, pagecore.NavLoadWait)
		}
		done <- job.Run(rctx, t)
	}()
	select {
	case err = <-done:
		if h := held(); err != nil && h != nil {
			return h
		}
		if err != nil && ctx.Err() == nil && !t.Alive() {
			return goneErr(t)
		}
		if err != nil && ctx.Err() != nil && t.Alive() {
			// Cancelled by the caller: the page may still be running what
			// the run started (a loop in an evaluate); a hung one is killed
			// now, not found by the next call.
			s.afterTimeout(t)
		}
		if err != nil && rctx.Err() != nil && ctx.Err() == nil && t.Alive() && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			err = s.timeoutErr(t, timeout, asked, err, s.afterTimeout(t))
		}
		return err
	case <-rctx.Done():
	}
	if h := held(); h != nil && ctx.Err() == nil && t.Alive() {
		// Its calls were cut by the pending navigation, which is not the
		// run's fault: the tab stays.
		job.Interrupt("the page is held by a navigation")
		select {
		case <-done:
		case <-time.After(s.opts.Grace):
		}
		return h
	}
	reason := "timeout"
	if ctx.Err() != nil {
		reason = "cancelled"
	} else if !t.Alive() {
		reason = "the tab is gone"
	}
	job.Interrupt(reason)
	grace := time.NewTimer(s.opts.Grace)
	defer grace.Stop()
	select {
	case err = <-done:
		if err == nil && t.Alive() {
			// It finished as the deadline passed (a click whose navigation
			// committed at the last moment): it did what it was asked.
			return nil
		}
		if !t.Alive() {
			return goneErr(t)
		}
		killed := s.afterTimeout(t)
		if ctx.Err() != nil {
			return Errorf(errcode.Timeout, "run on tab %q cancelled: %w", t.Name(), ctx.Err())
		}
		return s.timeoutErr(t, timeout, asked, err, killed)
	case <-grace.C:
		s.log.Warn("run did not yield; killing tab", "tab", t.Name())
		s.killTab(t, fmt.Sprintf("killed: a run overran its %v timeout and did not stop within %v", timeout, s.opts.Grace))
		return &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("run on tab %q timed out after %v and did not stop; the tab was killed (open it again)", t.Name(), timeout)}
	}
}

// goneErr is the error of a run whose tab was closed, or whose page
// crashed, under it.
func goneErr(t *Tab) error {
	return &Error{Code: errcode.NotAlive, Msg: fmt.Sprintf("run on tab %q stopped: the tab is gone (%s)", t.Name(), t.DeadReason()), Err: ErrNotAlive}
}

// timeoutErr is the timeout error of an action on tab t that ran for d,
// when asked asked for (0: the default): it says what the action was
// waiting for (cause's message, a navigation that had not committed), and
// whether the tab was killed after it (killed).
func (s *Supervisor) timeoutErr(t *Tab, d, asked time.Duration, cause error, killed bool) error {
	msg := fmt.Sprintf("the action on tab %q timed out after %v", t.Name(), d)
	if asked > d && d == s.opts.MaxTimeout {
		msg += fmt.Sprintf(" (%v asked, cut to the maximum; the daemon's --max-timeout or TABPILOT_MAX_TIMEOUT raises it)", asked)
	}
	var e *Error
	switch {
	case errors.As(cause, &e) && e.Code == errcode.Timeout && e.Msg != "" && !strings.HasSuffix(e.Msg, ": timed out") && !strings.HasPrefix(e.Msg, "run stopped"):
		// What the action was waiting for when the time ran out.
		msg += ": " + e.Msg
	case cause != nil && !errors.Is(cause, context.DeadlineExceeded) && !strings.Contains(cause.Error(), "timed out"):
		msg += " (" + cause.Error() + ")"
	}
	if loop, u := t.Looping(); loop && !killed {
		msg += fmt.Sprintf("; the page keeps sending itself on (now to %s), and holds every call while each of its pages loads: close the tab", u)
	} else if u := t.PendingNavigation(); u != "" && !killed {
		msg += fmt.Sprintf("; the page is still navigating to %s, which has not answered (the page holds every call until it does: open another URL to give up on it)", u)
	}
	if killed {
		msg += fmt.Sprintf("; the page did not answer for %v after it, so the tab was killed (open it again)", probeWait)
	}
	return &Error{Code: errcode.Timeout, Msg: msg, Err: context.DeadlineExceeded}
}

// afterTimeout probes a tab after a run timed out: a page stuck in a loop
// does not answer Runtime.evaluate, and such a tab is killed so the next
// call does not hang on it.
// It reports whether it killed the tab.
func (s *Supervisor) afterTimeout(t *Tab) bool {
	if t.Probe(probeWait) {
		return false
	}
	s.killTab(t, fmt.Sprintf("killed: the page did not answer for %v after the action timed out (a script in an endless loop?)", probeWait))
	return true
}

// probeWait is how long a page has to answer the probe after an action
// timed out before its tab is killed.
const probeWait = 1500 * time.Millisecond

// killTab closes a tab's target in the background, removes it from the
// registry and marks it dead with reason.
func (s *Supervisor) killTab(t *Tab, reason string) {
	s.kills.Add(1)
	t.kill(reason)
	s.mu.Lock()
	if s.tabs[t.Name()] == t {
		delete(s.tabs, t.Name())
		s.deadTabs(t)
	}
	s.mu.Unlock()
	s.wg.Go(func() { s.dispose(t) })
}

// deadTabs keeps a killed tab listed as dead until the next open of its
// name, so the caller learns what happened. s.mu is held.
func (s *Supervisor) deadTabs(t *Tab) {
	s.tabs[t.Name()] = t
}
