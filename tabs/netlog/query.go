package netlog

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tabpilot/tabpilot/urlpattern"
)

// Filter selects requests. The zero Filter selects every request since the
// last navigation.
type Filter struct {
	// URL is a glob of urlpattern (Playwright's: ** any characters, * any
	// but '/', {a,b} either); one starting with '/' is relative to the
	// origin of the last navigation. "" matches every URL.
	URL string
	// Type is a resource type, case-insensitive: document, stylesheet,
	// image, media, font, script, texttrack, xhr, fetch, prefetch,
	// eventsource, websocket, manifest, signedexchange, ping,
	// cspviolationreport, preflight, fedcm, other; several are separated
	// by commas.
	Type string
	// Method is an HTTP method, case-insensitive.
	Method string
	// Status is an exact status ("404"), a class ("4xx") or an inclusive
	// range ("400-499"); several are separated by commas. A request with
	// no response (pending or failed) has status 0 and matches none.
	Status string
	// Failed keeps only the requests Network.loadingFailed ended.
	Failed bool
	// All looks across navigations instead of since the last one.
	All bool
	// Limit keeps the newest Limit matches; 0 keeps all.
	Limit int
}

// resourceTypes are CDP's Network.ResourceType values in lower case.
var resourceTypes = []string{"document", "stylesheet", "image", "media", "font", "script", "texttrack",
	"xhr", "fetch", "prefetch", "eventsource", "websocket", "manifest", "signedexchange", "ping",
	"cspviolationreport", "preflight", "fedcm", "other"}

// statusRange is an inclusive range of statuses.
type statusRange struct{ lo, hi int }

// parseStatus parses a status filter: comma-separated exact statuses
// ("404"), classes ("4xx") and inclusive ranges ("400-499"), each within
// 100-599. Errors: bad_request naming the bad part.
func parseStatus(s string) ([]statusRange, error) {
	var out []statusRange
	for part := range strings.SplitSeq(s, ",") {
		part = strings.ToLower(strings.TrimSpace(part))
		var r statusRange
		var err error
		switch {
		case len(part) == 3 && strings.HasSuffix(part, "xx") && part[0] >= '1' && part[0] <= '5':
			d := int(part[0] - '0')
			r = statusRange{d * 100, d*100 + 99}
		case strings.Contains(part, "-"):
			lo, hi, _ := strings.Cut(part, "-")
			r.lo, err = statusCode(lo)
			if err == nil {
				r.hi, err = statusCode(hi)
			}
			if err == nil && r.lo > r.hi {
				err = badRequest("status range %q is empty: %d is above %d", part, r.lo, r.hi)
			}
		default:
			r.lo, err = statusCode(part)
			r.hi = r.lo
		}
		if err != nil {
			return nil, badRequest("bad status filter %q: %w", s, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func statusCode(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 100 || n > 599 {
		return 0, badRequest("%q is not a status (100-599, a class such as 4xx, or a range such as 400-499)", s)
	}
	return n, nil
}

// matcher is a parsed Filter.
type matcher struct {
	f      Filter
	url    *urlpattern.Pattern
	types  []string
	status []statusRange
}

func (l *Log) compile(f Filter) (*matcher, error) {
	m := &matcher{f: f}
	if f.Limit < 0 {
		return nil, badRequest("limit %d is negative", f.Limit)
	}
	if f.URL != "" {
		base := ""
		if len(l.pages) > 0 {
			base = l.pages[len(l.pages)-1].url
		}
		p, err := urlpattern.ParseGlob(f.URL, base)
		if err != nil {
			return nil, badRequest("bad URL filter: %w", err)
		}
		m.url = &p
	}
	if f.Type != "" {
		for t := range strings.SplitSeq(f.Type, ",") {
			t = strings.ToLower(strings.TrimSpace(t))
			if !slices.Contains(resourceTypes, t) {
				return nil, badRequest("unknown resource type %q: use one of %s", t, strings.Join(resourceTypes, ", "))
			}
			m.types = append(m.types, t)
		}
	}
	if f.Status != "" {
		st, err := parseStatus(f.Status)
		if err != nil {
			return nil, err
		}
		m.status = st
	}
	return m, nil
}

func (m *matcher) match(e *Entry, nav int) bool {
	switch {
	case !m.f.All && e.Nav != nav:
		return false
	case m.url != nil && !m.url.Match(e.URL):
		return false
	case m.types != nil && !slices.Contains(m.types, e.Type):
		return false
	case m.f.Method != "" && !strings.EqualFold(m.f.Method, e.Method):
		return false
	case m.f.Failed && !e.Failed:
		return false
	}
	if m.status != nil {
		return slices.ContainsFunc(m.status, func(r statusRange) bool { return e.Status >= r.lo && e.Status <= r.hi })
	}
	return true
}

// Requests returns the entries that match f, oldest first, without their
// headers, post data, body and frames (Request has them). Errors:
// bad_request for a malformed filter.
func (l *Log) Requests(f Filter) ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, err := l.compile(f)
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	l.reqs.each(func(e *Entry) bool {
		if m.match(e, l.nav) {
			out = append(out, e.summary())
		}
		return true
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out, nil
}

// Request returns the entry of id ("r12") in full: headers, post data,
// body, frames. Errors: an *Error with code element_not_found wrapping
// ErrNotFound when the log holds no such entry.
func (l *Log) Request(id string) (*Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byID[id]
	if !ok {
		return nil, notFound(id)
	}
	return e.full(), nil
}
