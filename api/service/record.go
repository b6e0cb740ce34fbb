package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/record"
)

// callRecord dispatches the record and replay methods (issue 21).
func (s *Service) callRecord(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
	if method == "record" {
		var r api.RecordRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Record(ctx, &r), nil
	}
	var r api.ReplayRequest
	if err := decode(params, &r); err != nil {
		return nil, err
	}
	return s.Replay(ctx, &r), nil
}

// Record starts or stops recording the session's actions
// (tabs.Supervisor.StartRecording, StopRecording). Stop writes the script
// (record.Script) to r.Save and returns it as the text. details: action,
// op, name (start: the one tab recorded, "" for all), steps and skipped
// (stop), save.
func (s *Service) Record(ctx context.Context, r *api.RecordRequest) (result *api.Result) {
	defer s.redactResult(&result)
	switch r.Op {
	case "start":
		if err := s.sup.StartRecording(r.Name); err != nil {
			return fail("record", r.Name, err)
		}
		what := "every tab"
		if r.Name != "" {
			what = fmt.Sprintf("tab %q", r.Name)
		}
		return &api.Result{Content: []api.Content{api.TextContent("Recording the actions of " + what + "; stop with record stop FILE.js")},
			Details: map[string]any{"action": "record", "op": "start", "name": r.Name}}
	case "stop":
	default:
		return fail("record", r.Name, tabs.Errorf(errcode.BadRequest, "record op %q: want start or stop", r.Op))
	}
	if r.Save != "" && !filepath.IsAbs(r.Save) {
		return fail("record", r.Name, tabs.Errorf(errcode.BadRequest, "record stop: save %q must be an absolute path", r.Save))
	}
	rec, err := s.sup.StopRecording()
	if err != nil {
		return fail("record", r.Name, err)
	}
	steps := rec.Steps()
	// A value typed as such, not as its {{secret:NAME}}, is masked in the
	// script too.
	code := s.opts.Secrets.Redact(record.Script(steps, rec.Tab()))
	details := map[string]any{"action": "record", "op": "stop", "name": rec.Tab(), "steps": len(steps), "skipped": rec.Skipped()}
	head := fmt.Sprintf("Recorded %d steps", len(steps))
	if r.Save != "" {
		if err := os.WriteFile(r.Save, []byte(code), 0o600); err != nil {
			return fail("record", r.Name, tabs.Errorf(errcode.BadRequest, "record stop: write %s: %v", r.Save, err))
		}
		details["save"] = r.Save
		head += " to " + r.Save
	}
	if n := rec.Skipped(); n > 0 {
		head += fmt.Sprintf(" (%d failed actions left out)", n)
	}
	return &api.Result{Content: []api.Content{api.TextContent(head + ":\n" + code)}, Details: details}
}

// candidatesWait bounds the observation a failed replay takes for the
// nearest candidates.
const candidatesWait = 10 * time.Second

// Replay runs a recorded script as a run (Run) under tabs.WithStrict, on
// the tab r.Name (opened on about:blank when there is none), each
// element step waiting at most ReplayStepWait for its element, and
// reports its steps (the `// step N` comments, record.Steps): on success
// how many ran; on failure the step that failed (from the line its error
// names), its statement and locator, and the nearest elements of the
// page's observation then (record.Nearest). details: action, name, file,
// steps, ran, failed {step, line, statement, locator, code, error,
// candidates [{id, role, name}]}.
func (s *Service) Replay(ctx context.Context, r *api.ReplayRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	code := r.Code
	if code == "" && r.File != "" {
		if !filepath.IsAbs(r.File) {
			return fail("replay", name, tabs.Errorf(errcode.BadRequest, "replay: file %q must be an absolute path", r.File))
		}
		b, err := os.ReadFile(r.File)
		if err != nil {
			return fail("replay", name, tabs.Errorf(errcode.BadRequest, "replay: %v", err))
		}
		code = string(b)
	}
	if strings.TrimSpace(code) == "" {
		return fail("replay", name, tabs.Errorf(errcode.BadRequest, "replay needs a script: file or code"))
	}
	steps := record.Steps(code)
	if !s.hasTab(name) {
		// A recorded script starts with its goto: a tab of a new name is
		// opened blank for it, as a run could not be on a tab that does
		// not exist.
		if o := s.Open(ctx, &api.OpenRequest{Common: r.Common}); o.IsError {
			o.Details["action"] = "replay"
			return o
		}
	}
	res := s.run(ctx, &api.RunRequest{Common: r.Common, Code: code}, func(j tabs.Job) tabs.Job { return strictJob{j} })
	res.Details["action"] = "replay"
	res.Details["steps"] = len(steps)
	if r.File != "" {
		res.Details["file"] = r.File
	}
	if !res.IsError {
		res.Details["ran"] = len(steps)
		res.Content = append([]api.Content{api.TextContent(fmt.Sprintf("Replayed %d steps on tab %q", len(steps), name))}, res.Content...)
		return res
	}
	info, _ := res.Details["error"].(api.ErrorInfo)
	st := record.StepAt(steps, record.LineOf(info.Message))
	if st == nil {
		res.Details["ran"] = 0
		return res
	}
	line := st.Line
	if l := record.LineOf(info.Message); l > 0 {
		line = l // the statement's, as the message says, not its comment's
	}
	failed := map[string]any{"step": st.N, "line": line, "statement": st.Statement, "code": info.Code, "error": info.Message}
	msg := fmt.Sprintf("step %d failed: %s\n  %s", st.N, info.Message, st.Statement)
	if st.Locator != "" {
		failed["locator"] = st.Locator
		msg += "\n  locator: " + st.Locator
	}
	if info.Code == errcode.ElementNotFound || info.Code == errcode.Timeout || info.Code == errcode.NotActionable {
		if cands := s.nearest(ctx, name, st.Locator); len(cands) > 0 {
			failed["candidates"] = cands
			parts := make([]string, len(cands))
			for i, c := range cands {
				parts[i] = c.String()
			}
			msg += "\n  nearest: " + strings.Join(parts, "; ")
		}
	}
	res.Details["ran"] = st.N - 1
	res.Details["failed"] = failed
	info.Message = msg
	res.Details["error"] = info
	res.Content[0] = api.TextContent(string(info.Code) + ": " + msg)
	return res
}

// nearest observes the tab and returns the 3 elements closest to loc.
func (s *Service) nearest(ctx context.Context, name, loc string) []record.Candidate {
	if loc == "" {
		return nil
	}
	var out []record.Candidate
	err := s.sup.Run(ctx, name, candidatesWait, tabs.JobFunc(func(ctx context.Context, t *tabs.Tab) error {
		obs, err := t.Observe(ctx, tabs.ObserveOptions{})
		if err != nil {
			return err
		}
		out = record.Nearest(loc, obs.Elements, 3)
		return nil
	}))
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("replay candidates", "tab", name, "err", err)
	}
	return out
}

// ReplayStepWait is how long a replayed step waits for its element to
// appear and become actionable, unless the script gives the call a
// {timeout}: a missing target fails its step after it, not after the
// whole run's timeout.
const ReplayStepWait = 5 * time.Second

// strictJob runs a job under tabs.WithStrict, with ReplayStepWait.
type strictJob struct{ tabs.Job }

func (j strictJob) Run(ctx context.Context, t *tabs.Tab) error {
	return j.Job.Run(tabs.WithActionTimeout(tabs.WithStrict(ctx), ReplayStepWait), t)
}
