package browser

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/tabpilot/tabpilot/errcode"
)

// Key identifies a browser in the Registry: its kind, and the executable
// path (spawned), endpoint (connected, grid) or profile directory
// (headless). A remote endpoint's headers, credentials and timeouts are in
// an unexported part that RemoteKey and GridKey fill, so two endpoints
// that differ only in their headers are two browsers. That part holds
// tokens: String, GoString and LogValue never show it (they show the
// endpoint with its query values and user info redacted), and
// encoding/json skips it.
type Key struct {
	Kind     Kind
	Path     string
	Endpoint string
	Profile  string
	remote   remoteSpec
}

func (k Key) String() string {
	switch {
	case k.Endpoint != "":
		s := fmt.Sprintf("%s %s", k.Kind, RedactURL(k.Endpoint))
		if n := k.remote.headerCount(); n > 0 {
			s += fmt.Sprintf(" (%d headers)", n)
		}
		if k.remote.user != "" {
			s += " (basic auth)"
		}
		return s
	case k.Path != "":
		return fmt.Sprintf("%s %s", k.Kind, k.Path)
	case k.Profile != "":
		return fmt.Sprintf("%s (profile %s)", k.Kind, k.Profile)
	}
	return string(k.Kind)
}

// GoString is String, so that %#v shows no header value either.
func (k Key) GoString() string { return "browser.Key(" + k.String() + ")" }

// LogValue is String, so that a logged Key shows no header value.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// Registry holds refcounted Handles keyed by Key. Acquire returns the live
// handle of a key or creates it; Release drops a reference and closes the
// handle when none is left. A handle whose connection is lost is disposed
// and recreated by the next Acquire. Safe for concurrent use.
type Registry struct {
	parent context.Context
	opts   Options
	log    *slog.Logger

	mu      sync.Mutex
	entries map[Key]*entry
}

type entry struct {
	ready chan struct{} // closed when h/err are set
	h     *Handle
	err   error
	refs  int
}

// NewRegistry returns a Registry whose browsers hang below parent (the
// supervisor's long-lived context) and launch with opts.
func NewRegistry(parent context.Context, opts *Options) *Registry {
	r := &Registry{parent: parent, entries: map[Key]*entry{}}
	if opts != nil {
		r.opts = *opts
	}
	r.log = r.opts.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// Acquire returns a live handle for key, launching (or connecting) it when
// there is none, and takes a reference. args are a spawned app's
// arguments, used only when it is started. ctx bounds only the wait.
func (r *Registry) Acquire(ctx context.Context, key Key, args ...string) (*Handle, error) {
	for {
		r.mu.Lock()
		e := r.entries[key]
		if e != nil {
			select {
			case <-e.ready:
				if e.err != nil || !e.h.Alive() {
					// Failed launch or lost connection: dispose, then retry.
					delete(r.entries, key)
					r.mu.Unlock()
					if e.h != nil {
						go e.h.Close(context.WithoutCancel(ctx))
					}
					continue
				}
				e.refs++
				r.mu.Unlock()
				return e.h, nil
			default:
			}
			r.mu.Unlock()
			select {
			case <-e.ready:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		e = &entry{ready: make(chan struct{})}
		r.entries[key] = e
		r.mu.Unlock()

		h, err := r.open(ctx, key, args)
		r.mu.Lock()
		e.h, e.err = h, err
		if err != nil {
			delete(r.entries, key)
		} else {
			e.refs++
		}
		close(e.ready)
		r.mu.Unlock()
		return h, err
	}
}

func (r *Registry) open(ctx context.Context, key Key, args []string) (*Handle, error) {
	switch key.Kind {
	case Headless:
		o := r.opts
		o.ProfileDir = key.Profile
		h, err := Launch(r.parent, ctx, &o)
		if err != nil {
			return nil, err
		}
		h.key = key
		return h, nil
	case Connected:
		return connectKey(r.parent, ctx, key, &r.opts)
	case Grid:
		return ConnectGrid(r.parent, ctx, key, &r.opts)
	case Spawned:
		return Spawn(r.parent, ctx, key.Path, args, &r.opts)
	default:
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("unknown browser kind %q", key.Kind)}
	}
}

// Release drops one reference to h; the last one closes it (a headless
// browser exits; a connected or spawned one is only disconnected) and
// Release reports last.
func (r *Registry) Release(ctx context.Context, h *Handle) (last bool, err error) {
	r.mu.Lock()
	e := r.entries[h.key]
	if e != nil && e.h == h {
		e.refs--
		if e.refs <= 0 {
			delete(r.entries, h.key)
			last = true
		}
	} else {
		last = true // already disposed
	}
	r.mu.Unlock()
	if last {
		return true, h.Close(ctx)
	}
	return false, nil
}

// Handles returns the live handles.
func (r *Registry) Handles() []*Handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hs []*Handle
	for _, e := range r.entries {
		select {
		case <-e.ready:
			if e.h != nil {
				hs = append(hs, e.h)
			}
		default:
		}
	}
	return hs
}

// Close closes every handle, waiting at most until ctx is done.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	var hs []*Handle
	for k, e := range r.entries {
		select {
		case <-e.ready:
			if e.h != nil {
				hs = append(hs, e.h)
			}
		default:
		}
		delete(r.entries, k)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(hs))
	for i, h := range hs {
		wg.Go(func() { errs[i] = h.Close(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
