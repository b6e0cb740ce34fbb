package observe

import (
	"net/url"
	"strings"
	"unicode"
)

// Caps on the lengths of rendered strings, in runes; longer ones are cut
// and end with "…".
const (
	maxName  = 100
	maxText  = 200
	maxValue = 100
	// maxFieldValue is the longest field value BuildDOM keeps whole, in
	// characters.
	maxFieldValue = 2000
	maxContext    = 32
	maxURL        = 80
	maxFrame      = 48
	maxOption     = 60
)

// clean collapses runs of white space to one space, trims the ends, and
// cuts the result to max runes, ending a cut string with "…".
func clean(s string, max int) string {
	// Fast path: nothing to change.
	ok := len(s) <= max
	if ok {
		prevSpace := true // a leading space needs work
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= 0x80 {
				ok = false // non-ASCII spaces (NBSP…) take the slow path
				break
			}
			sp := c == ' '
			if c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || (sp && prevSpace) {
				ok = false
				break
			}
			prevSpace = sp
		}
		if ok && (len(s) == 0 || s[len(s)-1] != ' ') {
			return s
		}
	}
	var b strings.Builder
	b.Grow(min(len(s), max*4+4))
	n := 0
	pending := false
	for _, r := range s {
		if isSpace(r) {
			pending = n > 0
			continue
		}
		if pending {
			if n >= max {
				return b.String() + "…" // more words follow
			}
			b.WriteByte(' ')
			n++
			pending = false
		}
		if n >= max {
			return strings.TrimRight(b.String(), " ") + "…"
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\f', '\v', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x200B, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// shortURL drops the scheme, and the origin when it is base's, and caps it.
func shortURL(raw, base string) string {
	if raw == "" {
		return ""
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		if b, err := url.Parse(base); err == nil && b.Scheme == u.Scheme && b.Host == u.Host {
			raw = u.RequestURI()
			if u.Fragment != "" {
				raw += "#" + u.Fragment
			}
		} else {
			raw = strings.TrimPrefix(strings.TrimPrefix(raw, u.Scheme+"://"), "www.")
		}
	}
	return clean(raw, maxURL)
}

// maxLinkURL caps the target shown for a link without a name.
const maxLinkURL = 48

// linkURL shortens the target of a link without a name to what tells it
// apart: the path, after the host when it is not base's, without the
// query (kept when the path is empty or "/"), at most maxLinkURL runes;
// "" for a javascript: URL, which says nothing.
func linkURL(raw, base string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return clean(raw, maxLinkURL)
	}
	if u.Scheme == "javascript" {
		return ""
	}
	if u.Host == "" {
		return clean(raw, maxLinkURL)
	}
	s := u.EscapedPath()
	if (s == "" || s == "/") && u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	if b, err := url.Parse(base); err != nil || b.Scheme != u.Scheme || b.Host != u.Host {
		s = strings.TrimPrefix(u.Host, "www.") + s
	} else if s == "" {
		s = "/"
	}
	return clean(s, maxLinkURL)
}

// hasWord reports whether s has a letter or a digit.
func hasWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-cased lq, ignoring case.
func containsFold(s, lq string) bool {
	if s == "" {
		return false
	}
	return strings.Contains(strings.ToLower(s), lq)
}
