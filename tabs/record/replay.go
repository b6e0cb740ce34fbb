package record

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tabpilot/tabpilot/tabs/act"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// ScriptStep is a step of a script as read back: the lines from its
// `// step N` comment to the line before the next one.
type ScriptStep struct {
	N int `json:"step"`
	// Line and End are the step's first and last lines (1-based).
	Line int `json:"line"`
	End  int `json:"-"`
	// Statement is the step's first line that is not a comment.
	Statement string `json:"statement"`
	// Locator is the first string argument of the statement, when it
	// has one (the target of an element action).
	Locator string `json:"locator,omitempty"`
}

var stepRE = regexp.MustCompile(`^\s*//\s*step\s+(\d+)\b`)

// Steps reads the steps of a script: every `// step N` comment starts
// one. A script without such comments has none.
func Steps(code string) []ScriptStep {
	var out []ScriptStep
	lines := strings.Split(code, "\n")
	for i, l := range lines {
		if m := stepRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			if len(out) > 0 {
				out[len(out)-1].End = i
			}
			out = append(out, ScriptStep{N: n, Line: i + 1, End: len(lines)})
			continue
		}
		if len(out) == 0 {
			continue
		}
		s := &out[len(out)-1]
		if t := strings.TrimSpace(l); s.Statement == "" && t != "" && !strings.HasPrefix(t, "//") {
			s.Statement = t
			s.Locator = firstString(t)
		}
	}
	return out
}

// StepAt returns the step whose lines hold line, or nil.
func StepAt(steps []ScriptStep, line int) *ScriptStep {
	for i := range steps {
		if line >= steps[i].Line && line <= steps[i].End {
			return &steps[i]
		}
	}
	return nil
}

var lineRE = regexp.MustCompile(`\(line (\d+):\d+\)`)

// LineOf returns the script line a run's error message names ("(line
// 12:7)", the call site of a failed tab call), or 0.
func LineOf(msg string) int {
	m := lineRE.FindAllStringSubmatch(msg, -1)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// firstString returns the first JavaScript string literal in s, unquoted,
// or "".
func firstString(s string) string {
	i := strings.IndexAny(s, `"'`)
	if i < 0 {
		return ""
	}
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == q:
			return b.String()
		case c == '\\' && j+1 < len(s):
			j++
			switch s[j] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if j+4 < len(s) {
					if r, err := strconv.ParseUint(s[j+1:j+5], 16, 32); err == nil {
						b.WriteRune(rune(r))
						j += 4
						continue
					}
				}
				b.WriteByte('u')
			default:
				b.WriteByte(s[j])
			}
		default:
			b.WriteByte(c)
		}
	}
	return ""
}

// Candidate is an element of the current observation close to a locator
// that matched nothing or too much.
type Candidate struct {
	ID   int    `json:"id"`
	Role string `json:"role"`
	Name string `json:"name"`
}

func (c Candidate) String() string {
	return strconv.Itoa(c.ID) + " " + c.Role + " " + JSString(c.Name)
}

// Want returns the accessible name (or text) and role a locator asks
// for: its last part's, for aria/Name[role="r"], text/T, or a CSS
// selector's quoted attribute value.
func Want(loc string) (name, role string) {
	parts := strings.Split(loc, act.ScopeSep)
	last := strings.TrimSpace(parts[len(parts)-1])
	switch {
	case strings.HasPrefix(last, "aria/"):
		m := ariaPartRE.FindStringSubmatch(strings.TrimPrefix(last, "aria/"))
		return strings.TrimSpace(m[1]), m[2]
	case strings.HasPrefix(last, "text/"):
		return strings.TrimPrefix(last, "text/"), ""
	}
	if m := attrRE.FindStringSubmatch(last); m != nil {
		return m[1], ""
	}
	return strings.TrimLeft(last, "#."), ""
}

var (
	ariaPartRE = regexp.MustCompile(`(?s)^(.*?)(?:\[role=["']?([a-zA-Z]+)["']?\])?$`)
	attrRE     = regexp.MustCompile(`=\s*"([^"]*)"`)
)

// Nearest returns the k elements of elems closest to what loc asks for:
// by the edit distance of their names to the name it wants (case and
// spacing ignored), a name that contains it or is contained in it
// counted as closer, the role it wants breaking ties; unnamed elements
// last.
func Nearest(loc string, elems []observe.Element, k int) []Candidate {
	name, role := Want(loc)
	want := strings.ToLower(strings.Join(strings.Fields(name), " "))
	type scored struct {
		c Candidate
		d float64
	}
	var all []scored
	for _, e := range elems {
		got := strings.ToLower(strings.Join(strings.Fields(e.Name), " "))
		if got == "" {
			continue
		}
		d := float64(distance(want, got)) / float64(max(1, utf8.RuneCountInString(want), utf8.RuneCountInString(got)))
		if want != "" && (strings.Contains(got, want) || strings.Contains(want, got)) {
			d /= 2
		}
		if role != "" && e.Role != role {
			d += 0.25
		}
		all = append(all, scored{Candidate{ID: e.ID, Role: e.Role, Name: e.Name}, d})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].d < all[j].d })
	out := make([]Candidate, 0, k)
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.c)
	}
	return out
}

// distance is the Levenshtein distance of a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
