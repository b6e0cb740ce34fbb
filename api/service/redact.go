package service

import (
	"bytes"
	"encoding/json"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/secrets"
)

// redactResult masks the session's secrets (Options.Secrets) in a result:
// the result path every door goes through, so no value reaches a caller
// in a text, an observation, an evaluate's or a run's value, a network or
// console listing, or an error. Text content is masked in place; details
// are replaced only when a string of theirs holds a secret, and then
// become their decoded JSON (maps, slices, json.Numbers) with every string
// and key masked.
// Image data is left alone (a picture is what the page draws). Every
// exported method that returns a result defers it.
func (s *Service) redactResult(res **api.Result) {
	sec := s.opts.Secrets
	if sec.Len() == 0 || res == nil || *res == nil {
		return
	}
	r := *res
	for i, c := range r.Content {
		if c.Type != "image" {
			r.Content[i].Text = sec.Redact(c.Text)
		}
	}
	if len(r.Details) == 0 {
		return
	}
	b, err := json.Marshal(r.Details)
	if err != nil {
		s.log.Warn("redact: details are not JSON", "err", err)
		return
	}
	// String by string of the decoded details, so that a value is found in
	// the form the page gave it (HTML-escaped, form-encoded, …) before
	// JSON escaped it again.
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		s.log.Warn("redact: details", "err", err)
		return
	}
	changed := false
	red := secrets.MapStrings(m, func(v string) string {
		out := sec.Redact(v)
		if out != v {
			changed = true
		}
		return out
	})
	if changed {
		r.Details = red.(map[string]any)
	}
}
