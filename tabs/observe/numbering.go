package observe

// Numbering assigns the element numbers of observations. A Ref keeps its
// number for as long as the Numbering lives (until Reset); a Ref never seen
// before gets the next unused number. Numbers are never reused, not even
// after Reset, so a number from an old observation can only fail to resolve,
// never name a different node.
//
// A stale number (its node gone from the page) still resolves here: callers
// detect that when they resolve the Ref over CDP (DOM.resolveNode fails).
//
// A Numbering is not safe for concurrent use; the tab holds a lock around
// it. The zero value is ready to use.
type Numbering struct {
	ids map[Ref]int
	// refs[i] is the Ref of number base+1+i.
	refs []Ref
	base int
	// shown is what each number showed last (Show).
	shown map[int]shownAs
}

type shownAs struct{ name, key string }

// NewNumbering returns an empty Numbering whose first number is 1.
func NewNumbering() *Numbering {
	return &Numbering{ids: make(map[Ref]int)}
}

// ID returns r's number, assigning the next unused one when r is new.
func (n *Numbering) ID(r Ref) int {
	if id, ok := n.ids[r]; ok {
		return id
	}
	if n.ids == nil {
		n.ids = make(map[Ref]int)
	}
	n.refs = append(n.refs, r)
	id := n.base + len(n.refs)
	n.ids[r] = id
	return id
}

// Lookup returns the Ref numbered id, and false when id was never assigned
// or was assigned before the last Reset.
func (n *Numbering) Lookup(id int) (Ref, bool) {
	i := id - n.base - 1
	if i < 0 || i >= len(n.refs) {
		return Ref{}, false
	}
	return n.refs[i], true
}

// Show records what element id shows in the observation being built: its
// accessible name, and its label key (tabs/js/rowkey.js).
func (n *Numbering) Show(id int, name, key string) {
	if n.shown == nil {
		n.shown = make(map[int]shownAs)
	}
	n.shown[id] = shownAs{name, key}
}

// Shown returns the name and label key element id showed in the last
// observation that numbered it ("" when none did).
func (n *Numbering) Shown(id int) (name, key string) {
	s := n.shown[id]
	return s.name, s.key
}

// Reset forgets every number, as after a top-level navigation: Lookup of an
// old number fails from now on, and new numbers continue after the highest
// one ever assigned.
func (n *Numbering) Reset() {
	n.base += len(n.refs)
	n.refs = nil
	clear(n.ids)
	clear(n.shown)
}

// Len returns how many numbers resolve (those assigned since the last Reset).
func (n *Numbering) Len() int { return len(n.refs) }
