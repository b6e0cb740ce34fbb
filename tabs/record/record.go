// Package record turns a session's actions into a `run` script a person
// can read, edit and replay, and helps the replay report a broken step.
//
// A Recorder collects Steps: each action a tab took while recording
// (open and goto, click, type, fill, press, select, hover, scroll, drag,
// upload, dialog answers, waits, back, forward, reload), from whichever
// door it came. An action on an element number is given a locator at
// record time, while the node is still there (Locate): its role and
// accessible name as aria/Name[role="role"], scoped by the nearest named
// row, list item, dialog, form or region when that is ambiguous
// (aria/Row[role="row"] >> aria/Delete[role="button"]); else text/…;
// else a CSS selector of stable attributes (#id, [name], [data-testid],
// [aria-label]). Each is verified through the resolver a replay uses (it
// must match the one node acted on, by backend node id); a step with none
// is written with a FIXME comment and the best candidate. Script writes
// the steps as statements, one per step, each under a `// step N`
// comment; Steps parses them back for a replay, StepAt maps a script line
// to its step, and Nearest ranks an observation's elements by how close
// they are to a locator that matched nothing.
//
// It imports the actor (for the resolver and the node hook) and the page
// core's types; it must not own a tab's life or hold a tab: package tabs
// feeds it, and the service writes and replays the files.
package record

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tabpilot/tabpilot/tabs/act"
)

// Step is one recorded action.
type Step struct {
	// Tab is the name of the tab it ran on.
	Tab string
	// Action is the tab method: open, goto, click, hover, type, fill,
	// press, select, scroll, drag, uploadFile, scrollIntoView, waitFor,
	// waitForUrl, acceptDialog, dismissDialog, back, forward, reload.
	Action string
	// Target is the element target as given (a number or a selector); To
	// is a drag's other end. Empty for page actions.
	Target, To string
	// Loc and ToLoc are the locators chosen for element-number targets
	// (nil for selectors, which are written as given).
	Loc, ToLoc *Locator
	// Args are the action's other arguments, written as JavaScript values
	// (strings, numbers, string slices, act.Point, maps of options).
	Args []any
	// Notes are written as comments after the statement (a popup the
	// action opened).
	Notes []string
}

// Recorder collects the steps of one recording. Safe for concurrent use.
type Recorder struct {
	tab     string
	started time.Time

	mu    sync.Mutex
	steps []*Step
	// skipped counts the actions that failed and were left out.
	skipped int
}

// New returns a recorder of every tab's actions, or only of the tab
// named tab when it is not "".
func New(tab string) *Recorder { return &Recorder{tab: tab, started: time.Now()} }

// Tab returns the one tab recorded, "" for all.
func (r *Recorder) Tab() string { return r.tab }

// Wants reports whether the actions of the tab named name are recorded.
func (r *Recorder) Wants(name string) bool { return r.tab == "" || r.tab == name }

// Steps returns a copy of the steps recorded so far.
func (r *Recorder) Steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Step, len(r.steps))
	for i, s := range r.steps {
		out[i] = *s
		out[i].Args = slices.Clone(s.Args)
		out[i].Notes = slices.Clone(s.Notes)
	}
	return out
}

// Skipped returns how many failed actions were left out.
func (r *Recorder) Skipped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}

// Pending is an action being recorded: Begin it before the action, pass
// Hook's NodeHook in the action's context, End it with the outcome.
type Pending struct {
	r    *Recorder
	step *Step
	m    Matcher
	mu   sync.Mutex
	locs map[int]*Locator
}

// Begin starts recording an action of tab. m is the resolver locators are
// verified with (the tab's actor); nil for page actions.
func (r *Recorder) Begin(tab, action, target, to string, m Matcher, args ...any) *Pending {
	return &Pending{r: r, m: m, step: &Step{Tab: tab, Action: action, Target: target, To: to, Args: args}, locs: map[int]*Locator{}}
}

// Hook returns the node hook that computes the locator of each element
// number the action resolves, once per number.
func (p *Pending) Hook() act.NodeHook {
	return func(ctx context.Context, n act.Node) {
		p.mu.Lock()
		_, done := p.locs[n.Number]
		p.mu.Unlock()
		if done || p.m == nil || n.Number == 0 {
			return
		}
		l := Locate(ctx, p.m, n)
		p.mu.Lock()
		p.locs[n.Number] = &l
		p.mu.Unlock()
	}
}

// Note adds a comment to the step.
func (p *Pending) Note(format string, args ...any) {
	p.step.Notes = append(p.step.Notes, fmt.Sprintf(format, args...))
}

// End records the step when err is nil; a failed action is counted and
// left out.
func (p *Pending) End(err error) {
	r := p.r
	if err != nil {
		r.mu.Lock()
		r.skipped++
		r.mu.Unlock()
		return
	}
	s := p.step
	p.mu.Lock()
	s.Loc, s.ToLoc = p.locFor(s.Target), p.locFor(s.To)
	p.mu.Unlock()
	r.mu.Lock()
	r.steps = append(r.steps, s)
	r.mu.Unlock()
}

// locFor returns the locator computed for a target that is an element
// number, else nil. A number whose node was never resolved gets a FIXME.
func (p *Pending) locFor(target string) *Locator {
	n, ok := number(target)
	if !ok {
		return nil
	}
	if l := p.locs[n]; l != nil {
		return l
	}
	return &Locator{Selector: target, Why: "the element was not resolved while recording"}
}
