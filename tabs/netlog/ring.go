package netlog

// ring is a bounded FIFO: pushing onto a full ring evicts the oldest item
// and counts it as dropped.
type ring[T any] struct {
	items   []T
	start   int // index of the oldest item
	n       int
	dropped int
}

func newRing[T any](capacity int) *ring[T] { return &ring[T]{items: make([]T, capacity)} }

// push appends v and returns the item it evicted, if any.
func (r *ring[T]) push(v T) (evicted T, ok bool) {
	if r.n < len(r.items) {
		r.items[(r.start+r.n)%len(r.items)] = v
		r.n++
		return evicted, false
	}
	evicted = r.items[r.start]
	r.items[r.start] = v
	r.start = (r.start + 1) % len(r.items)
	r.dropped++
	return evicted, true
}

// each calls f for each item, oldest first, until f returns false.
func (r *ring[T]) each(f func(T) bool) {
	for i := 0; i < r.n; i++ {
		if !f(r.items[(r.start+i)%len(r.items)]) {
			return
		}
	}
}
