// Package urlpattern matches URLs against the patterns an agent gives:
// Playwright's URL globs, regular expressions and predicates. It owns the
// glob syntax and nothing of the browser: waits (waitForUrl,
// waitForResponse) and, later, request filters and routes use it. It must
// not import the rest of tabpilot but errcode.
package urlpattern

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/tabpilot/tabpilot/errcode"
)

// Pattern matches URLs (waitForUrl, waitForResponse): a glob (a
// plain URL matches itself only), a regular expression, or a predicate.
//
// Globs follow Playwright: ** matches any characters, * any but '/',
// {a,b} either, and ? is literal (URLs have query strings). A glob that
// starts with one '/' is relative to the origin of Base.
type Pattern struct {
	Glob   string
	Regexp *regexp.Regexp
	Func   func(url string) bool
	// Base resolves a glob that starts with '/'.
	Base string

	re *regexp.Regexp
}

// ParseGlob returns the Pattern of a glob. Errors: bad_request for an
// empty glob or unbalanced braces.
func ParseGlob(glob, base string) (Pattern, error) {
	p := Pattern{Glob: glob, Base: base}
	if strings.TrimSpace(glob) == "" {
		return p, errorf("empty URL pattern")
	}
	g := glob
	if strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "//") {
		if u, err := url.Parse(base); err == nil && u.Scheme != "" && u.Host != "" {
			g = u.Scheme + "://" + u.Host + g
		}
	}
	if u, err := url.Parse(g); err == nil && u.Scheme != "" && u.Host != "" && u.Path == "" && u.RawQuery == "" && u.Fragment == "" && !strings.ContainsAny(g, "*{") {
		g += "/" // http://h.test is http://h.test/
	}
	re, err := globRegexp(g)
	if err != nil {
		return p, err
	}
	p.re = re
	return p, nil
}

func globRegexp(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && i+1 < len(g) && g[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteString(regexp.QuoteMeta(string(g[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return nil, errorf("URL pattern %q has an unclosed {", g)
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errorf("invalid URL pattern %q: %v", g, err)
	}
	return re, nil
}

// Match reports whether u matches. A URL without a path matches the same
// URL with "/".
func (p Pattern) Match(u string) bool {
	switch {
	case p.Func != nil:
		return p.Func(u)
	case p.Regexp != nil:
		return p.Regexp.MatchString(u)
	case p.re != nil:
		if p.re.MatchString(u) {
			return true
		}
		if pu, err := url.Parse(u); err == nil && pu.Path == "" && pu.Host != "" {
			pu.Path = "/"
			return p.re.MatchString(pu.String())
		}
	}
	return false
}

func (p Pattern) String() string {
	switch {
	case p.Func != nil:
		return "a predicate"
	case p.Regexp != nil:
		return "/" + p.Regexp.String() + "/"
	}
	return fmt.Sprintf("%q", p.Glob)
}

// Error is a malformed pattern; its code is errcode.BadRequest.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// ErrorCode returns errcode.BadRequest.
func (e *Error) ErrorCode() errcode.Code { return errcode.BadRequest }

func errorf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}
