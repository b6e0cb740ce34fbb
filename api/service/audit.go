package service

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/secrets"
)

// AuditedActions are the actions that write an intent and an outcome: the
// ones that can change a page.
var AuditedActions = []string{"goto", "click", "type", "fill", "press", "select", "upload", "drag", "evaluate", "run"}

// The outcomes of an audit record.
const (
	OutcomeOK      = "ok"
	OutcomeError   = "error"
	OutcomeUnknown = "unknown"
)

// AuditRecord is one line of the audit log.
type AuditRecord struct {
	// Type is "intent" or "outcome".
	Type string    `json:"type"`
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// PID is the daemon's process id.
	PID    int    `json:"pid"`
	Tab    string `json:"tab,omitempty"`
	Origin string `json:"origin,omitempty"`
	Action string `json:"action,omitempty"`
	// Target is the element target, URL or file names, at most 512 bytes.
	Target string `json:"target,omitempty"`
	// TextSHA256 is the hex SHA-256 of the typed text (or script code),
	// when there is one.
	TextSHA256 string `json:"textSha256,omitempty"`
	// Secrets names the secrets the text sends ({{secret:NAME}}
	// placeholders, package secrets); their values are never written.
	Secrets []string `json:"secrets,omitempty"`
	// Outcome, Code and Error are set on outcome lines.
	Outcome string `json:"outcome,omitempty"`
	Code    string `json:"code,omitempty"`
	Error   string `json:"error,omitempty"`
	// Recovered marks an outcome written at start-up for an intent that a
	// previous daemon left open.
	Recovered bool `json:"recovered,omitempty"`
}

// Errors of the audit log.
var (
	// ErrAuditLocked: another live process holds the audit log.
	ErrAuditLocked = errors.New("the audit log is in use by another process")
	// ErrAuditClosed: the Audit was closed.
	ErrAuditClosed = errors.New("the audit log is closed")
	// ErrOutcomeUnknown, wrapped in the error given to Outcome, records
	// the outcome as unknown whatever the error's code.
	ErrOutcomeUnknown = errors.New("outcome unknown")
)

const (
	maxTargetBytes = 512
	maxErrorBytes  = 1000
)

// Audit appends to the audit log (--audit FILE / TABPILOT_AUDIT): a JSON
// Lines file, append-only and mode 0600, with two kinds of line. Before an
// action that can change a page is sent, an intent:
//
//	{"type":"intent","id":"5f0c9e2a7b1d3c48-7","time":"2026-11-29T20:01:02.123456789Z","pid":4242,
//	 "tab":"main","origin":"https://example.com","action":"type","target":"#q",
//	 "textSha256":"e3b0c442…"}
//
// and after it, the outcome with the same id:
//
//	{"type":"outcome","id":"5f0c9e2a7b1d3c48-7","time":"…","pid":4242,"tab":"main","action":"type",
//	 "outcome":"error","code":"element_not_found","error":"…"}
//
// outcome is "ok", "error" (the action failed; code is its errcode.Code)
// or "unknown" (it may or may not have reached the page: a timeout, a tab
// or browser that died, a daemon that ended first). Typed text is never
// written: textSha256 is the hex SHA-256 of it, and the text is replaced
// by "[text]" in error messages. A text that sends secrets holds only
// their placeholders ({{secret:NAME}}: the value is put in at the page),
// so the hash is the placeholder's, "secrets" lists their names, and
// with Options.Secrets every line has the values masked ("••••"). An intent is written with one write(2)
// and fsync'ed before Intent returns, so it is on disk before the action
// runs; an outcome is written without fsync (a lost outcome reads as
// unknown, which is the safe side). When the log is opened, intents with
// no outcome, left by a daemon that died, get an outcome "unknown" with
// "recovered":true. An exclusive flock(2) keeps a second daemon out.
//
// Its methods are safe for concurrent use, and do nothing on a nil *Audit
// (no log configured).
type Audit struct {
	mu      sync.Mutex
	f       *os.File
	path    string
	pid     int
	prefix  string
	seq     uint64
	pending map[string]pendingIntent
	closed  bool
	// redact masks the session's secrets in each line (Service sets it
	// from Options.Secrets); nil writes lines as they are.
	redact func(string) string
}

// setRedact makes the log mask secrets with redact in every line it
// writes. It does nothing on a nil *Audit.
func (a *Audit) setRedact(redact func(string) string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.redact = redact
	a.mu.Unlock()
}

type pendingIntent struct {
	tab, action, text string
}

// OpenAudit opens (creating it, mode 0600) the audit log at path for
// appending, takes an exclusive lock on it, sets its mode to 0600 if it
// was wider, and closes the intents a previous daemon left without an
// outcome by appending an "unknown" outcome for each (a torn last line is
// ended first). Errors: ErrAuditLocked (wrapped) when another process
// holds it; the open, read or write error otherwise.
func OpenAudit(path string) (*Audit, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("open audit log %s: %w", path, ErrAuditLocked)
		}
		return nil, fmt.Errorf("lock audit log %s: %w", path, err)
	}
	if st, err := f.Stat(); err == nil && st.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("chmod audit log %s: %w", path, err)
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	a := &Audit{f: f, path: path, pid: os.Getpid(), prefix: hex.EncodeToString(rnd[:]), pending: map[string]pendingIntent{}}
	if err := a.recoverDangling(); err != nil {
		f.Close()
		return nil, fmt.Errorf("recover audit log %s: %w", path, err)
	}
	return a, nil
}

// recoverDangling appends an unknown outcome for every intent without one.
func (a *Audit) recoverDangling() error {
	if _, err := a.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReader(a.f)
	open := map[string]AuditRecord{}
	var order []string
	var size int64
	var last byte
	for {
		line, err := r.ReadBytes('\n')
		if n := len(line); n > 0 {
			size += int64(n)
			last = line[n-1]
			var rec AuditRecord
			if json.Unmarshal(line, &rec) == nil && rec.ID != "" {
				switch rec.Type {
				case "intent":
					if _, seen := open[rec.ID]; !seen {
						order = append(order, rec.ID)
					}
					open[rec.ID] = rec
				case "outcome":
					delete(open, rec.ID)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if size > 0 && last != '\n' {
		if _, err := a.f.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
	wrote := false
	for _, id := range order {
		in, ok := open[id]
		if !ok {
			continue
		}
		err := a.write(AuditRecord{Type: "outcome", ID: id, Time: time.Now().UTC(), PID: a.pid, Tab: in.Tab, Action: in.Action,
			Outcome: OutcomeUnknown, Error: "the daemon (pid " + strconv.Itoa(in.PID) + ") ended before the outcome was recorded", Recovered: true})
		if err != nil {
			return err
		}
		wrote = true
	}
	if wrote {
		return a.f.Sync()
	}
	return nil
}

// write appends rec as one line with a single write.
func (a *Audit) write(rec AuditRecord) error {
	if a.redact != nil {
		// An origin, a target or an error may quote a secret; typed text
		// is only ever a hash (of its placeholder, when it names one).
		rec.Origin, rec.Target, rec.Error = a.redact(rec.Origin), a.redact(rec.Target), a.redact(rec.Error)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = a.f.Write(append(b, '\n'))
	return err
}

// Intent records that action is about to be sent to tab, whose page is at
// origin (OriginOf), aimed at target, with text (typed text, a filled
// value or script code; "" for none) recorded only as its SHA-256. The
// line is on disk (fsync) when Intent returns. It returns the id to give
// to Outcome; on a nil *Audit it returns "" and nil. Errors:
// ErrAuditClosed, or the write error; the caller should then not run the
// action.
func (a *Audit) Intent(tab, origin, action, target, text string) (id string, err error) {
	if a == nil {
		return "", nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return "", ErrAuditClosed
	}
	a.seq++
	id = a.prefix + "-" + strconv.FormatUint(a.seq, 10)
	rec := AuditRecord{Type: "intent", ID: id, Time: time.Now().UTC(), PID: a.pid, Tab: tab, Origin: origin, Action: action,
		Target: truncateUTF8(target, maxTargetBytes)}
	if text != "" {
		sum := sha256.Sum256([]byte(text))
		rec.TextSHA256 = hex.EncodeToString(sum[:])
		rec.Secrets = secrets.PlaceholderNames(text)
	}
	if err := a.write(rec); err != nil {
		return "", fmt.Errorf("audit intent: %w", err)
	}
	if err := a.f.Sync(); err != nil {
		return "", fmt.Errorf("audit intent: sync: %w", err)
	}
	a.pending[id] = pendingIntent{tab: tab, action: action, text: text}
	return id, nil
}

// Outcome records how the action of intent id ended: nil is "ok"; an
// error whose code (errcode.Of) is timeout or not_alive, or that wraps
// ErrOutcomeUnknown, is "unknown"; any other error is "error". The error
// message is kept (at most 1000 bytes) with the intent's text replaced by
// "[text]". It does nothing for id "" or on a nil *Audit. Errors:
// ErrAuditClosed, or the write error.
func (a *Audit) Outcome(id string, err error) error {
	if a == nil || id == "" {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return ErrAuditClosed
	}
	p := a.pending[id]
	delete(a.pending, id)
	rec := AuditRecord{Type: "outcome", ID: id, Time: time.Now().UTC(), PID: a.pid, Tab: p.tab, Action: p.action, Outcome: OutcomeOK}
	if err != nil {
		code := errcode.Of(err)
		rec.Code = string(code)
		rec.Outcome = OutcomeError
		if code == errcode.Timeout || code == errcode.NotAlive || errors.Is(err, ErrOutcomeUnknown) {
			rec.Outcome = OutcomeUnknown
		}
		msg := err.Error()
		if p.text != "" {
			msg = strings.ReplaceAll(msg, p.text, "[text]")
		}
		rec.Error = truncateUTF8(msg, maxErrorBytes)
	}
	if werr := a.write(rec); werr != nil {
		return fmt.Errorf("audit outcome: %w", werr)
	}
	return nil
}

// Close records an "unknown" outcome for any intent still open, syncs and
// closes the log (releasing its lock). It is idempotent and does nothing on
// a nil *Audit.
func (a *Audit) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var errs []error
	for id, p := range a.pending {
		errs = append(errs, a.write(AuditRecord{Type: "outcome", ID: id, Time: time.Now().UTC(), PID: a.pid, Tab: p.tab, Action: p.action,
			Outcome: OutcomeUnknown, Error: "the audit log was closed before the outcome was recorded"}))
	}
	a.pending = nil
	errs = append(errs, a.f.Sync(), a.f.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close audit log %s: %w", a.path, err)
	}
	return nil
}

// OriginOf returns the origin of a page URL for an intent: scheme://host
// with a port only when it is not the scheme's default, for http(s), ws(s)
// and ftp; "about:blank" for about:blank; the scheme and a colon for any
// other URL (data:, file:, …), whose rest may be large or private; "" for
// an empty or unparsable URL.
func OriginOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https", "ws", "wss", "ftp":
		host := strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		port := u.Port()
		if port != "" && port != map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}[scheme] {
			host += ":" + port
		}
		return scheme + "://" + host
	case "about":
		if strings.EqualFold(u.Opaque, "blank") {
			return "about:blank"
		}
	}
	return scheme + ":"
}

// truncateUTF8 cuts s to at most n bytes at a rune boundary, marking a cut
// with "…".
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	k := n - len("…")
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k] + "…"
}
