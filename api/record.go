package api

// RecordRequest starts (Op "start") or stops (Op "stop") recording the
// session's actions as a `run` script. On start, Name is the one tab to
// record; empty records every tab. On stop, Save is the file to write the
// script to (absolute on the daemon's machine; 0600); empty returns the
// script in the result only.
type RecordRequest struct {
	Common
	Op   string `json:"op"`
	Save string `json:"save,omitempty"`
}

// ReplayRequest runs a recorded script (Code, or the file File, absolute on
// the daemon's machine) on the tab Name as a `run`, strictly (a locator
// that matches several elements fails), reporting the step that failed
// with its locator and the nearest elements of the page.
type ReplayRequest struct {
	Common
	Code string `json:"code,omitempty"`
	File string `json:"file,omitempty"`
}
