package act

import (
	"context"
	"testing"
	"time"
)

func TestActionWait(t *testing.T) {
	near := func(got, want time.Duration) bool { return got <= want && got > want-200*time.Millisecond }
	if got := actionWait(context.Background()); got != autoWait {
		t.Errorf("no deadline: %v, want %v", got, autoWait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := actionWait(ctx); !near(got, 9*time.Second) {
		t.Errorf("10s deadline: %v, want about 9s", got)
	}
	if got := actionWait(WithActionTimeout(ctx, 2*time.Second)); got != 2*time.Second {
		t.Errorf("2s action timeout: %v", got)
	}
	short, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if got := actionWait(WithActionTimeout(short, 5*time.Second)); !near(got, 800*time.Millisecond) {
		t.Errorf("1s deadline, 5s action timeout: %v, want about 800ms", got)
	}
}
