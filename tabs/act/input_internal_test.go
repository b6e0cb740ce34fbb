package act

import (
	"context"
	"testing"
	"time"
)

// TestInputLine: the page's input goes to the places in the order they
// were taken; a place released unused, or whose wait ended, is skipped,
// so the line never stalls on an action that never came.
func TestInputLine(t *testing.T) {
	a := &Actor{}
	p0, p1, p2, p3 := a.InputPlace(), a.InputPlace(), a.InputPlace(), a.InputPlace()
	got := make(chan int, 4)
	turn := func(n int, p *InputPlace) {
		_, done, err := a.inputTurn(p.Context(context.Background()))
		if err != nil {
			t.Errorf("place %d: %v", n, err)
			return
		}
		got <- n
		done()
		p.Release()
	}
	go turn(3, p3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := a.inputTurn(p2.Context(ctx)); err == nil {
		t.Fatal("place 2 got the input before places 0 and 1 gave it up")
	}
	p1.Release() // never used
	go turn(0, p0)
	for _, want := range []int{0, 3} {
		select {
		case n := <-got:
			if n != want {
				t.Fatalf("place %d got the input, want %d", n, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("place %d never got the input", want)
		}
	}
}
