package script

import (
	"container/heap"
	"math"
	"time"

	"github.com/dop251/goja"
)

// timers is a run's setTimeout and setInterval, and the timer of wait: one
// queue ordered by due time (then by the order they were set), driven by a
// single Go timer, whose callbacks run on the script's loop as tasks of the
// run (Script.task). So, as in Node and in a browser, a timer due earlier
// runs first: `setTimeout(f, 5); await wait(30)` has run f. (goja_nodejs
// gives every timer a time.AfterFunc of its own, whose goroutines a loaded
// machine can run in any order.) Everything but the Go timer's callback
// runs on the loop, so the queue needs no lock.
type timers struct {
	s      *Script
	q      timerHeap
	byID   map[int64]*jsTimer
	seq    uint64
	lastID int64
	wake   *time.Timer
	wakeAt time.Time
}

// jsTimer is one pending timer; every is 0 for a timeout, at least 1 ms
// for an interval.
type jsTimer struct {
	id    int64
	due   time.Time
	seq   uint64
	every time.Duration
	fn    func(vm *goja.Runtime)
	index int
}

type timerHeap []*jsTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*jsTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// add queues fn to run delay from now (at least 1 ms, as Node clamps it),
// and, for an interval, again every delay after that, and returns its id.
func (ts *timers) add(delay time.Duration, interval bool, fn func(vm *goja.Runtime)) int64 {
	delay = max(delay, time.Millisecond)
	every := time.Duration(0)
	if interval {
		every = delay
	}
	ts.lastID++
	ts.seq++
	t := &jsTimer{id: ts.lastID, due: time.Now().Add(delay), seq: ts.seq, every: every, fn: fn}
	if ts.byID == nil {
		ts.byID = map[int64]*jsTimer{}
	}
	ts.byID[t.id] = t
	heap.Push(&ts.q, t)
	ts.arm()
	return t.id
}

// clear removes the timer id, if it is still pending.
func (ts *timers) clear(id int64) {
	t, ok := ts.byID[id]
	if !ok {
		return
	}
	delete(ts.byID, id)
	if t.index >= 0 {
		heap.Remove(&ts.q, t.index)
	}
	ts.arm()
}

// arm sets the Go timer for the earliest timer due.
func (ts *timers) arm() {
	if len(ts.q) == 0 {
		if ts.wake != nil {
			ts.wake.Stop()
		}
		ts.wakeAt = time.Time{}
		return
	}
	due := ts.q[0].due
	if ts.wake != nil && ts.wakeAt.Equal(due) {
		return
	}
	if ts.wake != nil {
		ts.wake.Stop()
	}
	ts.wakeAt = due
	loop := ts.s.loop
	ts.wake = time.AfterFunc(time.Until(due), func() { loop.RunOnLoop(ts.fire) })
}

// fire runs, in order, the timers due now that were set before it began
// (a timer a callback sets with no delay waits for the next turn, so a
// callback that keeps setting one does not hold the loop), each as a task
// of the run; an interval is queued again every `every` from now.
func (ts *timers) fire(vm *goja.Runtime) {
	now, last := time.Now(), ts.seq
	for len(ts.q) > 0 && !ts.q[0].due.After(now) && ts.q[0].seq <= last {
		t := heap.Pop(&ts.q).(*jsTimer)
		if t.every > 0 {
			ts.seq++
			t.due, t.seq = now.Add(t.every), ts.seq
			heap.Push(&ts.q, t)
		} else {
			delete(ts.byID, t.id)
		}
		if !ts.s.task(vm, func() { t.fn(vm) }) {
			ts.stop()
			return
		}
	}
	ts.wakeAt = time.Time{} // the Go timer fired
	ts.arm()
}

// stop ends the Go timer at the end of the run.
func (ts *timers) stop() {
	if ts.wake != nil {
		ts.wake.Stop()
	}
	ts.q, ts.byID = nil, nil
}

// installTimers sets setTimeout, setInterval, clearTimeout and
// clearInterval on the queue; a callback's exception fails the run, as in
// Node, and once the run's result is decided callbacks no longer run.
// setImmediate stays the event loop's (wrapTimers).
func (s *Script) installTimers(vm *goja.Runtime) {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	ms := func(v goja.Value) time.Duration {
		f := v.ToFloat()
		if math.IsNaN(f) || f < 0 {
			f = 0
		}
		return time.Duration(min(f, float64(math.MaxInt32)) * float64(time.Millisecond))
	}
	for _, kind := range []string{"setTimeout", "setInterval"} {
		must(vm.Set(kind, func(c goja.FunctionCall) goja.Value {
			cb, ok := goja.AssertFunction(c.Argument(0))
			if !ok {
				panic(vm.NewTypeError("%s: the callback must be a function, not %s", kind, c.Argument(0).String()))
			}
			var args []goja.Value
			if len(c.Arguments) > 2 {
				args = append(args, c.Arguments[2:]...)
			}
			id := s.timers.add(ms(c.Argument(1)), kind == "setInterval", func(vm *goja.Runtime) {
				if _, err := cb(goja.Undefined(), args...); err != nil {
					s.fail(s.uncaught(vm, kind, err))
				}
			})
			return vm.ToValue(id)
		}))
	}
	clearFn := func(c goja.FunctionCall) goja.Value {
		if v := c.Argument(0); !goja.IsUndefined(v) && !goja.IsNull(v) {
			s.timers.clear(v.ToInteger())
		}
		return goja.Undefined()
	}
	must(vm.Set("clearTimeout", clearFn))
	must(vm.Set("clearInterval", clearFn))
}
