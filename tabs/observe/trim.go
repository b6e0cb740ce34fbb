package observe

import (
	"slices"
	"strings"
)

// regionTier orders regions for Trim: dialogs, then main, then the rest,
// then navigation, footers and sidebars.
func regionTier(region string) int {
	switch region {
	case RegionDialog:
		return 0
	case RegionMain:
		return 1
	case RegionNavigation, RegionContentInfo, RegionComplementary:
		return 3
	}
	return 2
}

// TrimOptions are the options of TrimWith.
type TrimOptions struct {
	// MaxTokens is the budget (counted by Tokens on Text()); 0 or less
	// means DefaultMaxTokens.
	MaxTokens int
	// Anchor is the element last acted on: it and the elements around it
	// come first with the dialogs. When it is zero or not in the
	// observation, the element marked by the walker as the anchor, else
	// the focused element, is the anchor.
	Anchor Ref
}

// Trim cuts o to a budget of maxTokens; see TrimWith.
func Trim(o *Observation, maxTokens int) (*Observation, int) {
	return TrimWith(o, TrimOptions{MaxTokens: maxTokens})
}

// TrimWith cuts o to a budget of opts.MaxTokens (counted by Tokens on
// Text(); 0 or less means DefaultMaxTokens). It keeps elements in order
// of priority: dialogs, then the anchor's neighbourhood (the element last
// acted on, else the focused one, and the anchorWindow elements before and
// after it, nearest first), then the main landmark, then the rest, then
// navigation, footer and sidebar elements; in document order within a
// tier, stopping at the first that does not fit. The kept ones stay in document order. Elements that
// need a number and have none (ID 0: their backend node id was not
// fetched) are never kept. It keeps room for the last line and a FullPath
// of about 100 bytes. It returns a copy of o with the kept elements (o is
// not changed) and the number left out, which it adds to the copy's
// Omitted.
func TrimWith(o *Observation, opts TrimOptions) (*Observation, int) {
	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	budget := maxTokens * 4
	cp := *o
	unnumbered := 0
	for i := range o.Elements {
		if o.Elements[i].ID == 0 && needsNumber(o.Elements[i].Role) {
			unnumbered++
		}
	}
	cost := make([]int, len(o.Elements))
	full := o.render(nil, cost)
	if len(full) <= budget && unnumbered == 0 {
		// Never nil: elements is a list on every door, an empty one on a
		// page with nothing to act on (a run's obs.elements.find works).
		cp.Elements = append(make([]Element, 0, len(o.Elements)), o.Elements...)
		return &cp, 0
	}
	// The cut observation ends with a line counting what was left out and
	// the path of the full one (written after).
	var foot strings.Builder
	writeFooter(&foot, o.Omitted+len(o.Elements), "")
	reserve := foot.Len() + len("; full observation: ") + fullPathReserve
	empty := make([]bool, len(o.Elements))
	used := len(o.render(empty, nil)) - len("(no elements)\n") + reserve

	anchor := -1
	for i := range o.Elements {
		if o.Elements[i].anchor || (opts.Anchor != (Ref{}) && o.Elements[i].Ref == opts.Anchor) {
			anchor = i
			break
		}
	}
	if anchor < 0 {
		for i := range o.Elements {
			if slices.Contains(o.Elements[i].States, "focused") {
				anchor = i
				break
			}
		}
	}
	// Priority: dialogs, then the anchor's neighbourhood (nearest first),
	// then main, the rest, and navigation, footers and sidebars.
	type rank struct{ tier, key int }
	rankOf := func(i int) rank {
		t := regionTier(o.Elements[i].Region)
		if t == 0 {
			return rank{0, i}
		}
		if anchor >= 0 && i >= anchor-anchorWindow && i <= anchor+anchorWindow {
			d := i - anchor
			if d < 0 {
				d = -d*2 - 1 // after the one as far below it
			} else {
				d *= 2
			}
			return rank{1, d}
		}
		return rank{t + 1, i}
	}
	order := make([]int, len(o.Elements))
	ranks := make([]rank, len(o.Elements))
	for i := range order {
		order[i] = i
		ranks[i] = rankOf(i)
	}
	slices.SortStableFunc(order, func(x, y int) int {
		if ranks[x].tier != ranks[y].tier {
			return ranks[x].tier - ranks[y].tier
		}
		return ranks[x].key - ranks[y].key
	})
	keep := make([]bool, len(o.Elements))
	var kept []int // in priority order
	for _, i := range order {
		if o.Elements[i].ID == 0 && needsNumber(o.Elements[i].Role) {
			continue
		}
		c := cost[i]
		if c == 0 {
			c = 8 // a merged link's ",NNN", and a margin
		}
		if used+c > budget {
			break
		}
		used += c
		keep[i] = true
		kept = append(kept, i)
	}
	// The costs came from the full rendering; lines cut apart can take a
	// little more: drop the last kept until the rendering fits.
	for len(kept) > 0 && len(o.render(keep, nil))+reserve > budget {
		n := max(1, len(kept)/50)
		for _, i := range kept[len(kept)-n:] {
			keep[i] = false
		}
		kept = kept[:len(kept)-n]
	}
	cp.Elements = make([]Element, 0, len(kept))
	for i, k := range keep {
		if k {
			cp.Elements = append(cp.Elements, o.Elements[i])
		}
	}
	// A landmark or list with nothing kept after it says nothing.
	out := cp.Elements[:0]
	for i, el := range cp.Elements {
		if isMarker(el.Role) && (i+1 == len(cp.Elements) || isMarker(cp.Elements[i+1].Role)) {
			continue
		}
		out = append(out, el)
	}
	cp.Elements = out
	omitted := len(o.Elements) - len(out)
	cp.Omitted = o.Omitted + omitted
	cp.FullPath = ""
	return &cp, omitted
}
