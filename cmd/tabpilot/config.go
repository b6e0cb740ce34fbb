package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/browser/egress"
	"github.com/tabpilot/tabpilot/secrets"
)

// Environment variables (the README's "Configuration"; tabpilot --help
// lists them all). Each config flag has one;
// a flag given on the command line wins over its variable.
const (
	envSession       = "TABPILOT_SESSION"
	envChrome        = "TABPILOT_CHROME"
	envHeaded        = "TABPILOT_HEADED"
	envNoStealth     = "TABPILOT_NO_STEALTH"
	envBrowserArgs   = "TABPILOT_BROWSER_ARGS"
	envScreenshotDir = "TABPILOT_SCREENSHOT_DIR"
	envMaxTimeout    = "TABPILOT_MAX_TIMEOUT"
	envIdleTimeout   = "TABPILOT_IDLE_TIMEOUT"
	envLogLevel      = "TABPILOT_LOG_LEVEL"
	envEgress        = "TABPILOT_EGRESS"
	envAllowOrigins  = "TABPILOT_ALLOW_ORIGINS"
	envAllowSub      = "TABPILOT_ALLOW_SUBRESOURCE_ORIGINS"
	envBlockOrigins  = "TABPILOT_BLOCK_ORIGINS"
	envAudit         = "TABPILOT_AUDIT"
	envSecrets       = "TABPILOT_SECRETS"
	envRuntimeDir    = "XDG_RUNTIME_DIR"
)

const (
	defaultIdleTimeout = 15 * time.Minute
	defaultTimeout     = 30 * time.Second // the service's default per request
)

// config is the daemon's configuration: what service.Options and the idle
// timer need.
type config struct {
	chrome        string
	headed        bool
	noStealth     bool
	browserArgs   []string
	screenshotDir string
	maxTimeout    time.Duration
	idleTimeout   time.Duration
	logLevel      slog.Level
	egress        string // any (default) or public-only
	allowOrigins  []string
	allowSub      []string // subresource origins
	blockOrigins  []string
	audit         string // the audit log file, or ""
	secretsFile   string // the --secrets dotenv file, or ""
	// secrets is the store read from secretsFile by finish; nil without
	// one.
	secrets *secrets.Store
}

// usageError is bad usage: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// configFromEnv reads the config variables.
func configFromEnv(getenv func(string) string) (config, error) {
	c := config{idleTimeout: defaultIdleTimeout, logLevel: slog.LevelInfo}
	var err error
	c.chrome = getenv(envChrome)
	if c.headed, err = envBool(getenv, envHeaded); err != nil {
		return c, err
	}
	if c.noStealth, err = envBool(getenv, envNoStealth); err != nil {
		return c, err
	}
	if v := getenv(envBrowserArgs); v != "" {
		if c.browserArgs, err = splitArgs(v); err != nil {
			return c, usagef("%s: %v", envBrowserArgs, err)
		}
		for _, a := range c.browserArgs {
			if err := checkBrowserArg(a); err != nil {
				return c, usagef("%s: %v", envBrowserArgs, err)
			}
		}
	}
	c.screenshotDir = getenv(envScreenshotDir)
	if v := getenv(envMaxTimeout); v != "" {
		if c.maxTimeout, err = parseDuration(v); err != nil {
			return c, usagef("%s: %v", envMaxTimeout, err)
		}
	}
	if v := getenv(envIdleTimeout); v != "" {
		if c.idleTimeout, err = parseDuration(v); err != nil {
			return c, usagef("%s: %v", envIdleTimeout, err)
		}
	}
	c.egress = getenv(envEgress)
	if _, err := egress.ParsePolicy(c.egress); err != nil {
		return c, usagef("%s: %v", envEgress, err)
	}
	c.allowOrigins = splitList(getenv(envAllowOrigins))
	c.allowSub = splitList(getenv(envAllowSub))
	c.blockOrigins = splitList(getenv(envBlockOrigins))
	if _, err := c.rules(); err != nil {
		return c, usagef("%s, %s or %s: %v", envAllowOrigins, envAllowSub, envBlockOrigins, err)
	}
	c.audit = getenv(envAudit)
	c.secretsFile = getenv(envSecrets)
	if v := getenv(envLogLevel); v != "" {
		if err := c.logLevel.UnmarshalText([]byte(v)); err != nil {
			return c, usagef("%s: %v", envLogLevel, err)
		}
	}
	return c, nil
}

// splitList splits a comma- or space-separated list.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// rules parses the origin patterns.
func (c *config) rules() (egress.Rules, error) {
	return egress.ParseRules(c.allowOrigins, c.allowSub, c.blockOrigins)
}

func envBool(getenv func(string) string, name string) (bool, error) {
	v := getenv(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, usagef("%s=%q: want true or false", name, v)
	}
	return b, nil
}

// parseDuration reads seconds ("90", "1.5") or a Go duration ("2m").
func parseDuration(s string) (time.Duration, error) {
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		d = time.Duration(f * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q is neither seconds nor a duration such as 90s or 15m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// durationValue is a flag.Value for parseDuration.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// listValue is a repeatable string flag; the first use replaces the value
// from the environment.
type listValue struct {
	list *[]string
	set  bool
	// check, when set, refuses a value (a usage error).
	check func(string) error
}

func (v *listValue) String() string {
	if v.list == nil {
		return ""
	}
	return strings.Join(*v.list, " ")
}

func (v *listValue) Set(s string) error {
	if v.check != nil {
		if err := v.check(s); err != nil {
			return err
		}
	}
	if !v.set {
		*v.list = nil
		v.set = true
	}
	*v.list = append(*v.list, s)
	return nil
}

// checkBrowserArg refuses an extra browser argument that is not a
// Chromium switch (-name, --name or --name=value), before a daemon starts
// with it; the daemon's launch refuses one too (browser.CheckArgs, which
// this light command does not link).
func checkBrowserArg(a string) error {
	name, _, _ := strings.Cut(strings.TrimLeft(strings.TrimSpace(a), "-"), "=")
	if !strings.HasPrefix(strings.TrimSpace(a), "-") || name == "" {
		return fmt.Errorf("browser argument %q is not a Chromium switch (give it as --name or --name=value)", a)
	}
	return nil
}

type levelValue struct{ l *slog.Level }

func (v levelValue) String() string {
	if v.l == nil {
		return ""
	}
	return strings.ToLower(v.l.String())
}

func (v levelValue) Set(s string) error { return v.l.UnmarshalText([]byte(s)) }

// addFlags registers the config flags, with the environment's values as
// defaults.
func (c *config) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.chrome, "chrome", c.chrome, "the Chromium `executable` (else chromium, google-chrome… on PATH) ["+envChrome+"]")
	fs.BoolVar(&c.headed, "headed", c.headed, "show the browser window instead of running headless ["+envHeaded+"]")
	fs.BoolVar(&c.noStealth, "no-stealth", c.noStealth, "turn the stealth patches off ["+envNoStealth+"]")
	fs.Var(&listValue{list: &c.browserArgs, check: checkBrowserArg}, "browser-arg", "an extra Chromium `flag`; repeat it for more (replaces "+envBrowserArgs+", a space-separated list with shell quoting); a --disable-features or --enable-features is merged with tabpilot's own")
	fs.StringVar(&c.screenshotDir, "screenshot-dir", c.screenshotDir, "save a full-resolution PNG of every screenshot in `dir` ["+envScreenshotDir+"]")
	fs.Var(durationValue{&c.maxTimeout}, "max-timeout", "the largest timeout a request may ask for, seconds or a `duration` (default 30s) ["+envMaxTimeout+"]")
	fs.Var(durationValue{&c.idleTimeout}, "idle-timeout", "the daemon exits after this idle `duration`; 0 never (default 15m) ["+envIdleTimeout+"]")
	fs.StringVar(&c.egress, "egress", c.egress, "the egress `policy`: any (default) or public-only, which sends the browser's traffic through a guard that refuses loopback, private and link-local destinations ["+envEgress+"]")
	fs.Var(&listValue{list: &c.allowOrigins}, "allow-origin", "an origin `pattern` ([scheme://]host[:port], *.host, port * for any) the browser may load pages, frames, popups and subresources from; repeat it for more. With any given, every other origin is refused; a loopback or private origin given here is allowed (replaces "+envAllowOrigins+", comma-separated)")
	fs.Var(&listValue{list: &c.allowSub}, "allow-subresource-origin", "an origin `pattern` allowed for subresources only (scripts, styles, fonts, images, fetches, WebSockets), not as a page or frame; repeatable (replaces "+envAllowSub+")")
	fs.Var(&listValue{list: &c.blockOrigins}, "block-origin", "an origin `pattern` the browser may never load from, whatever else allows it; repeatable (replaces "+envBlockOrigins+")")
	fs.StringVar(&c.audit, "audit", c.audit, "append a JSON line before and after every action that can change a page to `file` (0600) ["+envAudit+"]")
	fs.StringVar(&c.secretsFile, "secrets", c.secretsFile, "a dotenv `file` (mode 0600) of NAME=value secrets that type and fill send for {{secret:NAME}} (secret(\"NAME\") in a run) and that no output shows ["+envSecrets+"]")
	fs.Var(levelValue{&c.logLevel}, "log-level", "the log `level`: debug, info, warn or error ["+envLogLevel+"]")
}

// daemonArgs are the flags that hand this configuration to a daemon.
func (c *config) daemonArgs() []string {
	a := []string{
		"--headed=" + strconv.FormatBool(c.headed),
		"--no-stealth=" + strconv.FormatBool(c.noStealth),
		"--idle-timeout=" + c.idleTimeout.String(),
		"--log-level=" + strings.ToLower(c.logLevel.String()),
	}
	if c.chrome != "" {
		a = append(a, "--chrome="+c.chrome)
	}
	if c.screenshotDir != "" {
		a = append(a, "--screenshot-dir="+c.screenshotDir)
	}
	if c.maxTimeout > 0 {
		a = append(a, "--max-timeout="+c.maxTimeout.String())
	}
	for _, b := range c.browserArgs {
		a = append(a, "--browser-arg="+b)
	}
	if c.egress != "" {
		a = append(a, "--egress="+c.egress)
	}
	for _, l := range []struct {
		flag string
		list []string
	}{{"--allow-origin=", c.allowOrigins}, {"--allow-subresource-origin=", c.allowSub}, {"--block-origin=", c.blockOrigins}} {
		for _, v := range l.list {
			a = append(a, l.flag+v)
		}
	}
	if c.audit != "" {
		a = append(a, "--audit="+c.audit)
	}
	if c.secretsFile != "" {
		a = append(a, "--secrets="+c.secretsFile)
	}
	return a
}

// finish checks the values and makes paths absolute (the daemon may run
// elsewhere).
func (c *config) finish() error {
	if _, err := egress.ParsePolicy(c.egress); err != nil {
		return usagef("--egress: %v", err)
	}
	if _, err := c.rules(); err != nil {
		return usagef("%v", err)
	}
	if c.audit != "" {
		abs, err := filepath.Abs(c.audit)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		c.audit = abs
	}
	if c.secretsFile != "" {
		abs, err := filepath.Abs(c.secretsFile)
		if err != nil {
			return fmt.Errorf("secrets: %w", err)
		}
		c.secretsFile = abs
		// Read (and refused) at start-up, on the CLI's side too, so a
		// bad file is reported where the user gave it.
		if c.secrets, err = secrets.Load(abs); err != nil {
			return usagef("--secrets: %v", err)
		}
	}
	if c.screenshotDir != "" {
		abs, err := filepath.Abs(c.screenshotDir)
		if err != nil {
			return fmt.Errorf("screenshot dir: %w", err)
		}
		c.screenshotDir = abs
	}
	if c.chrome != "" && strings.ContainsRune(c.chrome, '/') {
		abs, err := filepath.Abs(c.chrome)
		if err != nil {
			return fmt.Errorf("chrome: %w", err)
		}
		c.chrome = abs
	}
	return nil
}

// splitArgs splits a command line the way a POSIX shell does, without
// expansions: blanks separate words, single quotes keep everything, double
// quotes keep everything but \" and \\, a backslash escapes the next
// character.
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case ch == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
		case ch == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		default:
			inWord = true
			cur.WriteByte(ch)
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
