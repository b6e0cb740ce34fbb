package service

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tabpilot/tabpilot/errcode"
)

// Limits bound what one result, one run and one session may use (issue
// 9), so that an agent reading untrusted pages cannot flood its context or
// hold the browser forever. In every field 0 means the default and a
// negative value means no bound.
type Limits struct {
	// MaxResultBytes bounds the text of one result, in bytes of UTF-8;
	// longer text is cut by Cap with a visible marker and spilled whole to
	// a temporary file. Default 100 000 (about 25 000 tokens).
	MaxResultBytes int
	// MaxScreenshotsPerRun bounds the screenshots one run may take.
	// Default 20.
	MaxScreenshotsPerRun int
	// MaxTabs bounds the tabs open at once in a session. Default 16.
	MaxTabs int
	// MaxRunTime bounds the total time a session's runs may take,
	// summed over its runs. Default 1 hour.
	MaxRunTime time.Duration
	// SpillDir receives the full text of cut results; "" means
	// os.TempDir().
	SpillDir string
}

// The defaults of Limits.
const (
	DefaultMaxResultBytes       = 100_000
	DefaultMaxScreenshotsPerRun = 20
	DefaultMaxTabs              = 16
	DefaultMaxRunTime           = time.Hour
)

// SpillPattern is the name pattern (os.CreateTemp) of the files that hold
// the full text of cut results.
const SpillPattern = "tabpilot-result-*.txt"

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{MaxResultBytes: DefaultMaxResultBytes, MaxScreenshotsPerRun: DefaultMaxScreenshotsPerRun,
		MaxTabs: DefaultMaxTabs, MaxRunTime: DefaultMaxRunTime}
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxResultBytes == 0 {
		l.MaxResultBytes = d.MaxResultBytes
	}
	if l.MaxScreenshotsPerRun == 0 {
		l.MaxScreenshotsPerRun = d.MaxScreenshotsPerRun
	}
	if l.MaxTabs == 0 {
		l.MaxTabs = d.MaxTabs
	}
	if l.MaxRunTime == 0 {
		l.MaxRunTime = d.MaxRunTime
	}
	return l
}

// ErrLimit is matched by errors.Is for every *LimitError.
var ErrLimit = errors.New("limit reached")

// LimitError is a request refused by a limit. Its code is bad_request.
type LimitError struct {
	// Limit names the limit: "max_screenshots_per_run", "max_tabs" or
	// "max_run_time".
	Limit string
	Msg   string
	Hint  string
}

func (e *LimitError) Error() string { return e.Msg }

// Is reports whether target is ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// ErrorCode returns errcode.BadRequest.
func (e *LimitError) ErrorCode() errcode.Code { return errcode.BadRequest }

// ErrorHint returns what an agent can do about it.
func (e *LimitError) ErrorHint() string { return e.Hint }

// CheckScreenshot returns a *LimitError when a run that has taken taken
// screenshots may not take another one, else nil.
func (l Limits) CheckScreenshot(taken int) error {
	l = l.WithDefaults()
	if l.MaxScreenshotsPerRun < 0 || taken < l.MaxScreenshotsPerRun {
		return nil
	}
	return &LimitError{Limit: "max_screenshots_per_run",
		Msg:  fmt.Sprintf("this run already took %d screenshots, the most a run may take", taken),
		Hint: "Take fewer screenshots per run (observe or extract instead), or split the work over several runs."}
}

// CheckTabs returns a *LimitError when a session with open tabs open may
// not open another one, else nil.
func (l Limits) CheckTabs(open int) error {
	l = l.WithDefaults()
	if l.MaxTabs < 0 || open < l.MaxTabs {
		return nil
	}
	return &LimitError{Limit: "max_tabs",
		Msg:  fmt.Sprintf("%d tabs are open, the most a session may have", open),
		Hint: "Close a tab you no longer need (close with its name), or reuse one."}
}

// Cap applies CapTextIn with l.SpillDir and l.MaxResultBytes.
func (l Limits) Cap(s string) (text, spillPath string, err error) {
	l = l.WithDefaults()
	return CapTextIn(l.SpillDir, s, l.MaxResultBytes)
}

// CapText is CapTextIn in os.TempDir().
func CapText(s string, limit int) (text, spillPath string, err error) {
	return CapTextIn("", s, limit)
}

// CapTextIn returns s when it is at most limit bytes (or limit <= 0).
// Otherwise it writes s whole to a new 0600 file in dir (SpillPattern; ""
// means os.TempDir()) and returns its path and a prefix of s cut at a rune
// boundary and followed by the line
//
//	[… N bytes cut; full text in PATH]
//
// where N counts the bytes of s left out. The result is at most limit
// bytes when limit is larger than the marker (about 80 bytes plus the path), else
// it is the marker alone. When the file cannot be written the marker says
// so instead of naming a path, and the error is returned with the cut text.
func CapTextIn(dir, s string, limit int) (text, spillPath string, err error) {
	if limit <= 0 || len(s) <= limit {
		return s, "", nil
	}
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, SpillPattern) // mode 0600
	if err == nil {
		spillPath = f.Name()
		_, err = f.WriteString(s)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(spillPath)
			spillPath = ""
		}
	}
	marker := func(cut int) string {
		if spillPath == "" {
			return fmt.Sprintf("\n[… %d bytes cut; the full text could not be saved]", cut)
		}
		return fmt.Sprintf("\n[… %d bytes cut; full text in %s]", cut, spillPath)
	}
	// The marker with N = len(s) is at least as long as the final one.
	keep := max(0, limit-len(marker(len(s))))
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	text = s[:keep] + marker(len(s)-keep)
	if err != nil {
		err = fmt.Errorf("spill the full result text: %w", err)
	}
	return text, spillPath, err
}

// RunBudget is a session's total run time (Limits.MaxRunTime): each run
// takes what is left, and gives back what it did not use. It is safe for
// concurrent use.
type RunBudget struct {
	mu   sync.Mutex
	max  time.Duration
	used time.Duration
}

// NewRunBudget returns a budget of total (0 means DefaultMaxRunTime,
// negative means none).
func NewRunBudget(total time.Duration) *RunBudget {
	if total == 0 {
		total = DefaultMaxRunTime
	}
	return &RunBudget{max: total}
}

// Start begins a run. It returns the time left, to clamp the run's
// timeout to (a negative budget returns a very long duration), and done,
// to call when the run ends; done adds the time since Start to the used
// total and may be called more than once. When nothing is left it returns
// a *LimitError.
func (b *RunBudget) Start() (left time.Duration, done func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max < 0 {
		return 1<<63 - 1, func() {}, nil
	}
	left = b.max - b.used
	if left <= 0 {
		return 0, func() {}, &LimitError{Limit: "max_run_time",
			Msg:  fmt.Sprintf("this session's runs have used their total run time of %v", b.max),
			Hint: "Start a new session, or ask the operator to raise the total run time."}
	}
	start := time.Now()
	var once sync.Once
	return left, func() {
		once.Do(func() {
			d := time.Since(start)
			b.mu.Lock()
			b.used += d
			b.mu.Unlock()
		})
	}, nil
}

// Used returns the run time used so far.
func (b *RunBudget) Used() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
