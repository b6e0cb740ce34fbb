package act

import "testing"

// TestCut: what a length limit or a mask left of a value is told from a
// reformatting of it.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		after, value string
		want         bool
	}{
		{"ABCDE", "ABCDEFGH", true},
		{"12345", "12345-6789", true},
		{"(555) 123", "5551234567", true},
		{"(555) 123-4567", "5551234567", false},
		{"ABC", "abc", false},
		{"", "abc", false},
		{"abc", "abc", false},
		{"01/15/2024", "2024-01-15", false},
	} {
		if got := cut(c.after, c.value); got != c.want {
			t.Errorf("cut(%q, %q) = %v, want %v", c.after, c.value, got, c.want)
		}
	}
}
