package secrets

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler returns h wrapped so that every record's message and string
// attributes (and errors, Stringers and other values, by their text) have
// their secrets masked (Redact) before h sees them. On an empty store, or
// when h is already wrapped by this store, it returns h.
func (s *Store) Handler(h slog.Handler) slog.Handler {
	if s.Len() == 0 {
		return h
	}
	if r, ok := h.(*redactHandler); ok && r.s == s {
		return h
	}
	return &redactHandler{s: s, h: h}
}

// Logger returns l with its handler wrapped (Handler); nil stays nil.
func (s *Store) Logger(l *slog.Logger) *slog.Logger {
	if l == nil || s.Len() == 0 {
		return l
	}
	return slog.New(s.Handler(l.Handler()))
}

type redactHandler struct {
	s *Store
	h slog.Handler
}

func (r *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.s.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = r.attr(a)
	}
	return &redactHandler{s: r.s, h: r.h.WithAttrs(red)}
}

func (r *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{s: r.s, h: r.h.WithGroup(name)}
}

// attr masks the secrets of one attribute's value.
func (r *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.s.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = r.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		default:
			text = fmt.Sprint(x)
		}
		if r.s.Contains(text) {
			return slog.String(a.Key, r.s.Redact(text))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
