package observe

import (
	"slices"
	"strings"
)

// Diff returns what changed from prev to cur, two observations of one tab
// (taken with the same options; neither trimmed): an observation with cur's
// header whose Elements are cur's new elements (Change "added") and those
// whose name, value, states or context differ (Change "changed", Was their
// old name, value and states), whose Removed are prev's elements that are
// gone, and whose Unchanged counts the rest. Elements are matched by number;
// text and markers (which have none) by role, name and frame. Since is
// "last". Neither input is changed.
func Diff(prev, cur *Observation) *Observation {
	out := *cur
	out.Elements = []Element{}
	out.Removed = nil
	out.Unchanged = 0
	out.Since = "last"
	out.Omitted = 0
	out.FullPath = ""
	type textKey struct{ role, name, frame string }
	byID := make(map[int]*Element, len(prev.Elements))
	texts := map[textKey]int{}
	for i := range prev.Elements {
		el := &prev.Elements[i]
		if el.ID > 0 {
			byID[el.ID] = el
		} else {
			texts[textKey{el.Role, el.Name, el.Frame}]++
		}
	}
	seen := make(map[int]bool, len(cur.Elements))
	for i := range cur.Elements {
		el := cur.Elements[i]
		if el.ID <= 0 {
			k := textKey{el.Role, el.Name, el.Frame}
			if texts[k] > 0 {
				texts[k]--
				out.Unchanged++
				continue
			}
			el.Change = "added"
			out.Elements = append(out.Elements, el)
			continue
		}
		seen[el.ID] = true
		old, ok := byID[el.ID]
		switch {
		case !ok:
			el.Change = "added"
			out.Elements = append(out.Elements, el)
		case old.Name != el.Name || old.Value != el.Value || old.Context != el.Context || !sameStates(old.States, el.States):
			el.Change = "changed"
			el.Was = was(old, &el)
			out.Elements = append(out.Elements, el)
		default:
			out.Unchanged++
		}
	}
	for i := range prev.Elements {
		el := prev.Elements[i]
		if el.ID > 0 {
			if !seen[el.ID] {
				el.Change = ""
				out.Removed = append(out.Removed, el)
			}
			continue
		}
		k := textKey{el.Role, el.Name, el.Frame}
		if texts[k] > 0 {
			texts[k]--
			el.Change = ""
			out.Removed = append(out.Removed, el)
		}
	}
	return &out
}

// sameStates compares states, ignoring focus (which every click moves).
func sameStates(a, b []string) bool {
	return slices.Equal(slices.DeleteFunc(slices.Clone(a), isFocus), slices.DeleteFunc(slices.Clone(b), isFocus))
}

func isFocus(s string) bool { return s == "focused" }

// was renders what differs in an element's old rendering: its quoted name,
// ": " and its value, its states in brackets ([] for none).
func was(old, cur *Element) string {
	var b strings.Builder
	if old.Name != cur.Name {
		writeQuoted(&b, old.Name)
	}
	if old.Value != cur.Value {
		b.WriteString(": ")
		writeQuoted(&b, old.Value)
	}
	if !sameStates(old.States, cur.States) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('[')
		b.WriteString(strings.Join(slices.DeleteFunc(slices.Clone(old.States), isFocus), " "))
		b.WriteByte(']')
	}
	if b.Len() == 0 && old.Context != cur.Context {
		b.WriteString("(" + old.Context + ")")
	}
	return b.String()
}
