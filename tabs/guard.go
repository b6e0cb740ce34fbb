package tabs

import "context"

// Guard vets top-level navigations for an egress policy (package
// browser/egress implements the policy; api/service adapts it). Errors it
// returns should carry the code blocked_destination (an ErrorCode method).
type Guard interface {
	// CheckURL refuses a URL before the browser is asked to load it.
	CheckURL(ctx context.Context, url string) error
	// Mark returns a position in the guard's log of refused requests.
	Mark() uint64
	// Refused returns the refusal of url (or of a redirect it led to)
	// logged since mark, as an error, or nil.
	Refused(url string, since uint64) error
}
