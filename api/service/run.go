package service

import (
	"context"
	"encoding/base64"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/script"
)

// Run runs a script on a tab (the README's "The `run` action").
func (s *Service) Run(ctx context.Context, r *api.RunRequest) (result *api.Result) {
	defer s.redactResult(&result)
	return s.run(ctx, r, nil)
}

// run is Run, with the job wrapped by wrap when it is not nil (Replay's
// strict mode), without the redaction its callers do.
func (s *Service) run(ctx context.Context, r *api.RunRequest, wrap func(tabs.Job) tabs.Job) *api.Result {
	name := tabName(r.Name)
	if strings.TrimSpace(r.Code) == "" {
		return fail("run", name, tabs.Errorf(errcode.BadRequest, "run needs code: the body of an async function"))
	}
	so := &script.Options{Logger: s.log, BrowserTabs: s.sup.Tabs, MaxScreenshots: s.limits.MaxScreenshotsPerRun, MaxDisplayBytes: s.limits.MaxResultBytes,
		Secrets: s.opts.Secrets}
	if a := s.opts.Audit; a != nil {
		so.Audit = func(ctx context.Context, action, target, text string) (func(error), error) {
			origin := ""
			if t, err := s.sup.Tab(name); err == nil {
				origin = OriginOf(t.URL(ctx))
			}
			id, err := a.Intent(name, origin, action, target, text)
			if err != nil {
				return nil, tabs.Errorf(errcode.Internal, "audit log: %v", err)
			}
			return func(err error) {
				if oerr := a.Outcome(id, err); oerr != nil {
					s.log.Error("audit outcome", "err", oerr)
				}
			}, nil
		}
	}
	sc := script.New(r.Code, so)
	var tab *tabs.Tab
	timeout := s.sup.Timeout(seconds(r.Timeout))
	left, done, err := s.budget.Start()
	if err != nil {
		return fail("run", name, err)
	}
	defer done()
	if left > 0 && left < timeout {
		timeout = left
	}
	var mark uint64
	if s.opts.Egress != nil {
		mark = guard{s.opts.Egress}.Mark()
	}
	err = s.audited(ctx, name, "run", "", r.Code, true, func() error {
		var job tabs.Job = &capture{Job: sc, tab: &tab}
		if wrap != nil {
			job = wrap(job)
		}
		return s.sup.Run(ctx, name, timeout, job)
	})
	out := sc.Output()
	details := map[string]any{"action": "run", "name": name}
	if tab != nil {
		kind, _ := tab.Browser()
		details["browser"] = kind
		u, _ := tabURL(tab)
		details["url"] = u
	}
	shots := make([]map[string]any, 0, len(out.Screenshots))
	for _, sh := range out.Screenshots {
		shots = append(shots, map[string]any{"id": sh.ID, "dest": sh.Dest, "mimeType": sh.MimeType, "bytes": sh.Bytes, "width": sh.Width, "height": sh.Height, "scale": sh.Scale})
	}
	details["screenshots"] = shots
	if len(out.Dialogs) > 0 {
		details["dialogs"] = out.Dialogs
	}
	if out.PendingDialog != nil {
		details["pendingDialog"] = out.PendingDialog
	}
	if len(out.Popups) > 0 {
		details["popups"] = out.Popups
	}
	if len(out.Downloads) > 0 {
		details["downloads"] = out.Downloads
	}
	if out.PageErrors > 0 {
		details["pageErrors"] = out.PageErrors
	}
	if s.opts.Egress != nil {
		if refused := s.opts.Egress.RefusalsSince(mark); len(refused) > 0 {
			details["blocked"] = refused
			details["blockedCount"] = len(refused)
		}
	}
	content, text := s.convert(out.Content)
	details["result"] = text
	if err != nil {
		res := fail("run", name, err)
		for k, v := range details {
			if _, ok := res.Details[k]; !ok {
				res.Details[k] = v
			}
		}
		// Keep what the script displayed before it failed.
		res.Content = append(res.Content, content...)
		return res
	}
	return &api.Result{Content: content, Details: details}
}

// capture remembers the tab a job ran on.
type capture struct {
	tabs.Job
	tab **tabs.Tab
}

func (c *capture) Run(ctx context.Context, t *tabs.Tab) error {
	*c.tab = t
	return c.Job.Run(ctx, t)
}

func tabURL(t *tabs.Tab) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if !t.Alive() {
		return "", ""
	}
	return t.URL(ctx), ""
}

// convert turns a run's output into content, capping each text at the
// result limit (the full text spills to a 0600 file named in the marker).
func (s *Service) convert(cs []script.Content) ([]api.Content, string) {
	out := make([]api.Content, 0, len(cs))
	var texts []string
	for _, c := range cs {
		if c.Type == "image" {
			out = append(out, api.Content{Type: "image", MimeType: c.MimeType, Data: base64.StdEncoding.EncodeToString(c.Data)})
			continue
		}
		text := s.capText(c.Text)
		out = append(out, api.TextContent(text))
		texts = append(texts, text)
	}
	return out, strings.Join(texts, "\n")
}

// capText cuts a text over the result limit (Limits.Cap).
func (s *Service) capText(t string) string {
	t = s.opts.Secrets.Redact(t) // before it may spill to a file
	capped, _, err := s.limits.Cap(t)
	if err != nil {
		s.log.Warn("spill result", "err", err)
		return t
	}
	return capped
}
