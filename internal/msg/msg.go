// Package msg holds the helpers the packages share to build messages for
// people and agents: it owns no state and imports only the standard
// library.
package msg

// Trim returns s cut to at most n runes, with "…" in place of the cut.
func Trim(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
