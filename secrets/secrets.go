package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/joho/godotenv"

	"github.com/tabpilot/tabpilot/errcode"
)

// Mask replaces every secret value in redacted text.
const Mask = "••••"

// MinValueLen is the shortest value a store takes, in bytes: a shorter one
// would mask common substrings of every output.
const MinValueLen = 4

var (
	nameRE        = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	placeholderRE = regexp.MustCompile(`\{\{secret:([^{}]*)\}\}`)
)

// Placeholder returns the text that stands for the secret name:
// "{{secret:NAME}}".
func Placeholder(name string) string { return "{{secret:" + name + "}}" }

// Store is a set of named secrets. It is immutable once made, so safe for
// concurrent use; every method works on a nil *Store, which holds nothing
// (Redact returns its text as is).
type Store struct {
	values   map[string]string
	names    []string // sorted
	replacer *strings.Replacer
	forms    []string // every form of every value, longest first
}

// New returns a store of the given name → value pairs, checked as Load
// checks a file's. Errors: *errcode.Error with code bad_request, naming
// the name.
func New(values map[string]string) (*Store, error) {
	for name, v := range values {
		if err := check(name, v); err != nil {
			return nil, &errcode.Error{Code: errcode.BadRequest, Msg: err.Error()}
		}
	}
	return build(values), nil
}

func check(name, value string) error {
	switch {
	case !nameRE.MatchString(name):
		return fmt.Errorf("invalid secret name %q: a name is letters, digits and _, not starting with a digit ([A-Za-z_][A-Za-z0-9_]*)", name)
	case value == "":
		return fmt.Errorf("secret %s has an empty value", name)
	case len(value) < MinValueLen:
		return fmt.Errorf("the value of secret %s is shorter than %d bytes: too short to redact without mangling every output", name, MinValueLen)
	}
	return nil
}

func build(values map[string]string) *Store {
	s := &Store{values: map[string]string{}}
	seen := map[string]bool{}
	for name, v := range values {
		s.values[name] = v
		s.names = append(s.names, name)
		for _, f := range Forms(v) {
			if !seen[f] {
				seen[f] = true
				s.forms = append(s.forms, f)
			}
		}
	}
	sort.Strings(s.names)
	// strings.Replacer tries the olds in argument order at each position:
	// longest first, so a value that holds another is masked whole.
	sort.Slice(s.forms, func(i, j int) bool {
		if len(s.forms[i]) != len(s.forms[j]) {
			return len(s.forms[i]) > len(s.forms[j])
		}
		return s.forms[i] < s.forms[j]
	})
	pairs := make([]string, 0, 2*len(s.forms))
	for _, f := range s.forms {
		pairs = append(pairs, f, Mask)
	}
	if len(pairs) > 0 {
		s.replacer = strings.NewReplacer(pairs...)
	}
	return s
}

// Forms returns the forms of value that Redact masks: the value itself,
// URL-query-escaped (as a form post sends it), path-escaped, JSON-escaped
// (with and without HTML escapes, and twice, for JSON inside JSON),
// HTML-escaped (as html.EscapeString does, as a DOM serializes text and
// attributes, and with only < > escaped, as markdown keeps them), and base64 (standard and URL alphabets, padded and not).
// Each form is listed once; forms shorter than MinValueLen are left out.
func Forms(value string) []string {
	out := []string{value, url.QueryEscape(value), url.PathEscape(value),
		encodeURIComponent(value), lowerHex(encodeURIComponent(value)),
		html.EscapeString(value), htmlText.Replace(value), htmlAttr.Replace(value), htmlSpecial.Replace(value), angles.Replace(value)}
	j := jsonEscape(value, true)
	out = append(out, j, jsonEscape(value, false), jsonEscape(j, true), jsonEscape(j, false))
	b := []byte(value)
	out = append(out, base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b))
	var uniq []string
	for _, f := range out {
		if len(f) >= MinValueLen && !slices.Contains(uniq, f) {
			uniq = append(uniq, f)
		}
	}
	return uniq
}

// encodeURIComponent is JavaScript's encodeURIComponent of s (ECMA-262):
// every byte of its UTF-8 escaped as %XX (upper case) but the letters,
// digits and - _ . ! ~ * ' ( ), so a space is %20, where url.QueryEscape
// writes + and escapes ! ' ( ) *.
func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// lowerHex is a percent-encoding with lower-case hex digits, as some
// encoders write it.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if 'A' <= b[j] && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
		}
	}
	return string(b)
}

// The HTML escapes of a value besides html.EscapeString's: a DOM's
// serialization of a text node and of an attribute (innerHTML), the
// common &<>" escape, and the < > a markdown converter keeps escaped.
var (
	htmlText    = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	htmlAttr    = strings.NewReplacer("&", "&amp;", `"`, "&quot;")
	htmlSpecial = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	angles      = strings.NewReplacer("<", "&lt;", ">", "&gt;")
)

// jsonEscape is s as it appears between the quotes of a JSON string.
func jsonEscape(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// Load reads a dotenv file of NAME=value lines into a store. It refuses,
// with an error naming the file and the line or name but never a value:
// a file it cannot read or that is not a regular file; a file group or
// others may read or write (its mode must be 0600 or stricter, as for an
// ssh key); one that does not parse; an invalid name; an empty value; a
// value shorter than MinValueLen bytes. A file with no secrets gives an
// empty store.
func Load(path string) (*Store, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("secrets file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("secrets file %s has mode %04o: group or others may read it; it must be 0600 or stricter, like an ssh key (chmod 600 %s)", path, perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", path, err)
	}
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	values, err := godotenv.UnmarshalBytes(data)
	if err != nil {
		return nil, fmt.Errorf("secrets file %s: %s", path, parseError(data, err))
	}
	for _, name := range sortedKeys(values) {
		if err := check(name, values[name]); err != nil {
			if n := lineOf(data, name); n > 0 {
				return nil, fmt.Errorf("secrets file %s: line %d: %v", path, n, err)
			}
			return nil, fmt.Errorf("secrets file %s: %v", path, err)
		}
	}
	return build(values), nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lineOf returns the last line (from 1) that defines name, or 0.
func lineOf(data []byte, name string) int {
	re := regexp.MustCompile(`^\s*(export\s+)?` + regexp.QuoteMeta(name) + `\s*[=:]`)
	last := 0
	for i, line := range strings.Split(string(data), "\n") {
		if re.MatchString(line) {
			last = i + 1
		}
	}
	return last
}

// parseError says what godotenv could not parse, and where, without its
// message, which quotes the file's text (values included).
func parseError(data []byte, err error) string {
	m := err.Error()
	line := 0
	what := "cannot parse it as NAME=value lines"
	switch {
	case strings.HasPrefix(m, "unexpected character"):
		what = "a line is not NAME=value (an unexpected character before any =)"
		if i := strings.Index(m, ` near "`); i >= 0 {
			var rest string
			if _, serr := fmt.Sscanf(m[i+len(" near "):], "%q", &rest); serr == nil && len(rest) <= len(data) {
				line = bytes.Count(data[:len(data)-len(rest)], []byte("\n")) + 1
			}
		}
	case strings.HasPrefix(m, "unterminated quoted value"):
		what = "a quoted value has no closing quote"
		first := strings.TrimPrefix(m, "unterminated quoted value ")
		if i := bytes.LastIndex(data, []byte(first)); i >= 0 && first != "" {
			line = bytes.Count(data[:i], []byte("\n")) + 1
		}
	}
	if line > 0 {
		return fmt.Sprintf("line %d: %s", line, what)
	}
	return what
}

// Len returns how many secrets the store holds.
func (s *Store) Len() int {
	if s == nil {
		return 0
	}
	return len(s.names)
}

// Names returns the secrets' names, sorted.
func (s *Store) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.names)
}

// Has reports whether the store holds a secret called name.
func (s *Store) Has(name string) bool {
	if s == nil {
		return false
	}
	_, ok := s.values[name]
	return ok
}

// Check returns nil when the store holds name; else a bad_request error
// "unknown secret NAME" (listing the names the store holds in its hint),
// or, on a nil store, "no secrets file given (--secrets)".
func (s *Store) Check(name string) error {
	if s == nil {
		return &errcode.Error{Code: errcode.BadRequest, Msg: "no secrets file given (--secrets)",
			Hint: "Start tabpilot with --secrets FILE (or TABPILOT_SECRETS), a 0600 dotenv file of NAME=value lines."}
	}
	if !s.Has(name) {
		hint := "The secrets file defines: " + strings.Join(s.names, ", ") + "."
		if len(s.names) == 0 {
			hint = "The secrets file defines no secrets."
		}
		return &errcode.Error{Code: errcode.BadRequest, Msg: "unknown secret " + name, Hint: hint}
	}
	return nil
}

// HasPlaceholder reports whether text holds a {{secret:NAME}} placeholder.
func HasPlaceholder(text string) bool {
	return strings.Contains(text, "{{secret:") && placeholderRE.MatchString(text)
}

// PlaceholderNames returns the names of the {{secret:NAME}} placeholders
// in text, in order, each once; nil when it has none.
func PlaceholderNames(text string) []string {
	if !HasPlaceholder(text) {
		return nil
	}
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// Expand returns text with every {{secret:NAME}} replaced by the value of
// NAME. Text without placeholders is returned as is, on any store.
// Errors (Check's, never quoting a value): bad_request "unknown secret
// NAME", or "no secrets file given (--secrets)" on a nil store.
func (s *Store) Expand(text string) (string, error) {
	if !HasPlaceholder(text) {
		return text, nil
	}
	var err error
	out := placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		name := placeholderRE.FindStringSubmatch(m)[1]
		if cerr := s.Check(name); cerr != nil {
			if err == nil {
				err = cerr
			}
			return m
		}
		return s.values[name]
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

// Part is a piece of a text Split cut: literal text, or a secret's value.
type Part struct {
	Text   string
	Secret bool
}

// Split cuts text at its {{secret:NAME}} placeholders into literal parts
// and the values they stand for, in order, for a caller that must send a
// value in one piece (Type: a value typed key by key would show in every
// input event's prefix, which Redact cannot find). Errors: Expand's.
func (s *Store) Split(text string) ([]Part, error) {
	if !HasPlaceholder(text) {
		return []Part{{Text: text}}, nil
	}
	var out []Part
	last := 0
	for _, m := range placeholderRE.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		if err := s.Check(name); err != nil {
			return nil, err
		}
		if m[0] > last {
			out = append(out, Part{Text: text[last:m[0]]})
		}
		out = append(out, Part{Text: s.values[name], Secret: true})
		last = m[1]
	}
	if last < len(text) {
		out = append(out, Part{Text: text[last:]})
	}
	return out, nil
}

// Redact returns text with every form (Forms) of every value replaced by
// Mask. On a nil or empty store it returns text as is.
func (s *Store) Redact(text string) string {
	if s == nil || s.replacer == nil || text == "" {
		return text
	}
	return s.replacer.Replace(text)
}

// RedactBytes is Redact on bytes; it returns b itself when nothing was
// masked.
func (s *Store) RedactBytes(b []byte) []byte {
	if s == nil || s.replacer == nil || len(b) == 0 {
		return b
	}
	if !s.ContainsBytes(b) {
		return b
	}
	return []byte(s.replacer.Replace(string(b)))
}

// Contains reports whether text holds any form of any value.
func (s *Store) Contains(text string) bool {
	if s == nil {
		return false
	}
	for _, f := range s.forms {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// ContainsBytes is Contains on bytes.
func (s *Store) ContainsBytes(b []byte) bool {
	if s == nil {
		return false
	}
	for _, f := range s.forms {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}

// MapStrings replaces every string of a decoded JSON value (v from
// json.Unmarshal into an any: strings, []any, map[string]any), object
// keys included, by f of it, for masking a value inside JSON as it is
// decoded (Redact alone misses one that JSON or HTML escaping changed).
// Slices are changed in place; maps are copied.
func MapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for i := range x {
			x[i] = MapStrings(x[i], f)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[f(k)] = MapStrings(e, f)
		}
		return out
	}
	return v
}
