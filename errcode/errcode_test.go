package errcode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestWireValues pins the strings of the README's "Errors" section, in
// its order:
// they are the public contract and never change.
func TestWireValues(t *testing.T) {
	want := "bad_request timeout busy not_alive no_such_tab browser_mismatch browser_unavailable attach_failed " +
		"target_not_found navigation_failed blocked_destination element_not_found not_actionable stale_element " +
		"script_error assertion_failed internal"
	var got []string
	for _, c := range All() {
		got = append(got, string(c))
	}
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("codes\n got %s\nwant %s", g, want)
	}
}

func TestCodesHaveHints(t *testing.T) {
	for _, c := range All() {
		if !c.Valid() || c.Hint() == "" {
			t.Errorf("code %q has no hint", c)
		}
	}
	if Code("nope").Valid() || Code("nope").Hint() != "" || Code("").Valid() {
		t.Error("an unknown code is valid")
	}
	a := All()
	a[0] = "changed"
	if All()[0] != BadRequest {
		t.Error("All returns the package's own slice")
	}
}

type coded struct{ c Code }

func (e coded) Error() string   { return "coded " + string(e.c) }
func (e coded) ErrorCode() Code { return e.c }

func TestOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Code
	}{
		{nil, ""},
		{errors.New("plain"), Internal},
		{coded{StaleElement}, StaleElement},
		{fmt.Errorf("click 4: %w", coded{NotActionable}), NotActionable},
		{fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", coded{Busy})), Busy},
		{context.DeadlineExceeded, Timeout},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), Timeout},
		// A code in the chain wins over the deadline it wraps.
		{fmt.Errorf("%w: %w", coded{NotAlive}, context.DeadlineExceeded), NotAlive},
		{context.Canceled, Internal},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
