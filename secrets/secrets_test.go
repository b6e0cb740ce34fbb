package secrets_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/secrets"
)

const pw = `p@ss w0rd&"<x>/ü`

func writeFile(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	p := writeFile(t, "# the login\nexport USER=alice-the-user\nPW='"+pw+"'\nTOKEN=\"tok\\nline\" # comment\n", 0o600)
	s, err := secrets.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "PW,TOKEN,USER" {
		t.Fatalf("names %q", got)
	}
	out, err := s.Expand("{{secret:USER}}/{{secret:PW}}")
	if err != nil {
		t.Fatal(err)
	}
	if out != "alice-the-user/"+pw {
		t.Fatalf("expand = %q", out)
	}
	if got, _ := s.Expand("{{secret:TOKEN}}"); got != "tok\nline" {
		t.Fatalf("token %q", got)
	}
	// Stricter modes are fine.
	if err := os.Chmod(p, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Load(p); err != nil {
		t.Fatalf("0400: %v", err)
	}
}

func TestLoadRefuses(t *testing.T) {
	const value = "hunter2-very-secret"
	for _, c := range []struct {
		name, body string
		mode       os.FileMode
		want       []string
	}{
		{"group readable", "PW=" + value + "\n", 0o640, []string{"mode 0640", "0600 or stricter", "ssh key"}},
		{"world readable", "PW=" + value + "\n", 0o604, []string{"mode 0604", "0600 or stricter"}},
		{"bad name digit", "OK=" + value + "\n1PW=" + value + "\n", 0o600, []string{"line 2", `invalid secret name "1PW"`}},
		{"bad name dot", "\n\nA.B=" + value + "\n", 0o600, []string{"line 3", `"A.B"`}},
		{"empty", "PW=\n", 0o600, []string{"line 1", "PW has an empty value"}},
		{"short", "X=" + value + "\nPIN=123\n", 0o600, []string{"line 2", "PIN", "shorter than 4 bytes", "too short to redact"}},
		{"unparsable", "OK=" + value + "\n" + value + "!\n", 0o600, []string{"line 2", "not NAME=value"}},
		{"unterminated", "OK=" + value + "\nPW=\"" + value + "\n", 0o600, []string{"line 2", "no closing quote"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, c.body, c.mode)
			_, err := secrets.Load(p)
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			for _, w := range append(c.want, p) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			// The file's path is in the message; its temp directory's
			// random digits may hold "123".
			if rest := strings.ReplaceAll(msg, p, ""); strings.Contains(rest, "hunter2") || strings.Contains(rest, "123") {
				t.Errorf("error %q quotes a value", msg)
			}
		})
	}
	if _, err := secrets.Load(filepath.Join(t.TempDir(), "missing.env")); err == nil || !strings.Contains(err.Error(), "missing.env") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if os.Geteuid() != 0 {
		p := writeFile(t, "PW="+value+"\n", 0o000)
		if _, err := secrets.Load(p); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("unreadable file: %v", err)
		}
	}
	if _, err := secrets.Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
}

func TestExpand(t *testing.T) {
	s, err := secrets.New(map[string]string{"PW": pw, "USER": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"plain":                          "plain",
		"{{secret:PW}}":                  pw,
		"a{{secret:USER}}b{{secret:PW}}": "aaliceb" + pw,
		"{{secret:PW":                    "{{secret:PW",
		"{secret:PW}":                    "{secret:PW}",
	} {
		got, err := s.Expand(in)
		if err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err = s.Expand("x {{secret:NOPE}}")
	if errcode.Of(err) != errcode.BadRequest || err.Error() != "unknown secret NOPE" {
		t.Fatalf("unknown: %v (%s)", err, errcode.Of(err))
	}
	var h errcode.Hinter
	if !errors.As(err, &h) || h.ErrorHint() != "The secrets file defines: PW, USER." {
		t.Fatalf("hint: %v", h)
	}
	var none *secrets.Store
	if got, err := none.Expand("no placeholder"); err != nil || got != "no placeholder" {
		t.Fatalf("nil store: %q %v", got, err)
	}
	if _, err := none.Expand("{{secret:PW}}"); errcode.Of(err) != errcode.BadRequest || err.Error() != "no secrets file given (--secrets)" {
		t.Fatalf("nil store: %v", err)
	}
	if err := s.Check("PW"); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.New(map[string]string{"PW": "abc"}); errcode.Of(err) != errcode.BadRequest {
		t.Fatalf("short value: %v", err)
	}
}

func TestRedact(t *testing.T) {
	s, err := secrets.New(map[string]string{"PW": pw, "LONG": pw + "-and-more", "U": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	jsonOf := func(v string) string {
		b, _ := json.Marshal(v)
		return string(b[1 : len(b)-1])
	}
	jsonRaw := func(v string) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		_ = e.Encode(v)
		o := strings.TrimSpace(b.String())
		return o[1 : len(o)-1]
	}
	forms := map[string]string{
		"raw":        pw,
		"query":      url.QueryEscape(pw),
		"path":       url.PathEscape(pw),
		"json":       jsonOf(pw),
		"json-plain": jsonRaw(pw),
		"json-twice": jsonOf(jsonOf(pw)),
		"base64":     base64.StdEncoding.EncodeToString([]byte(pw)),
		"base64url":  base64.RawURLEncoding.EncodeToString([]byte(pw)),
		"html":       `p@ss w0rd&amp;&#34;&lt;x&gt;/ü`,
	}
	for kind, f := range forms {
		in := "before " + f + " after"
		if got := s.Redact(in); got != "before •••• after" {
			t.Errorf("%s form %q: Redact = %q", kind, f, got)
		}
	}
	if got := s.Redact("user=alice&password=" + url.QueryEscape(pw) + "&x=" + pw + "-and-more"); got != "user=••••&password=••••&x=••••" {
		t.Errorf("form body: %q", got)
	}
	if got := s.Redact("nothing here"); got != "nothing here" {
		t.Errorf("clean text changed: %q", got)
	}
	if !s.Contains("x"+forms["query"]) || s.Contains("alic") {
		t.Error("Contains")
	}
	if got := string(s.RedactBytes([]byte("[" + pw + "]"))); got != "[••••]" {
		t.Errorf("RedactBytes = %q", got)
	}
	var none *secrets.Store
	if none.Redact(pw) != pw || none.Contains(pw) || none.Len() != 0 {
		t.Error("nil store is not a no-op")
	}
}

func TestHandler(t *testing.T) {
	s, _ := secrets.New(map[string]string{"PW": pw})
	var buf bytes.Buffer
	log := s.Logger(slog.New(slog.NewJSONHandler(&buf, nil)))
	log.With("pre", "x"+pw).WithGroup("g").Info("typed "+pw, "text", pw, "err", errors.New("failed: "+url.QueryEscape(pw)),
		slog.Group("inner", "v", pw), "n", 3, "list", []string{pw})
	out := buf.String()
	for _, f := range []string{pw, jsonOf(pw), url.QueryEscape(pw)} {
		if strings.Contains(out, f) {
			t.Fatalf("log holds the secret: %s", out)
		}
	}
	if strings.Count(out, "••••") != 6 || !strings.Contains(out, `"n":3`) {
		t.Fatalf("log: %s", out)
	}
	if s.Handler(log.Handler()) != log.Handler() {
		t.Error("wrapped twice")
	}
}

func jsonOf(v string) string {
	b, _ := json.Marshal(v)
	return string(b[1 : len(b)-1])
}
