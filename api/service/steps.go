package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/urlpattern"
)

// The shortcuts for the steps an agent takes most after click, fill and
// press: select, scroll, wait, back, forward, reload, dialog and upload
// (hover is in Act). Each is one tabs method on the tab's action slot, and
// its result's details has action and name, as every shortcut's.

// quoteList quotes each string and joins them with commas.
func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// Select is the select shortcut (tabs.Tab.Select). details: target,
// selected (the labels), values (native selects), dialog.
func (s *Service) Select(ctx context.Context, r *api.SelectRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	if len(r.Values) == 0 {
		return fail("select", name, tabs.Errorf(errcode.BadRequest, "select needs at least one value: an option's label, value or text"))
	}
	var res *tabs.SelectResult
	err := s.audited(ctx, name, "select", string(r.Target), strings.Join(r.Values, "\n"), true, func() error {
		return s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
			tg, err := tabs.ParseTarget(string(r.Target))
			if err != nil {
				return err
			}
			res, err = t.Select(ctx, tg, r.Values)
			return err
		})
	})
	if err != nil {
		return fail("select", name, err)
	}
	text := fmt.Sprintf("Selected %s in %s", quoteList(res.Selected), res.Target)
	details := map[string]any{"action": "select", "name": name, "target": res.Target, "selected": res.Selected}
	if len(res.Values) > 0 {
		details["values"] = res.Values
	}
	if res.Dialog != nil {
		text += fmt.Sprintf("; %s dialog is open: %q", res.Dialog.Article(), res.Dialog.Message)
		details["dialog"] = res.Dialog
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)}, Details: details}
}

// Scroll is the scroll shortcut (tabs.Tab.Scroll, or ScrollAt with a
// target). details: x and y, the scroll offsets after it in CSS pixels of
// the container that moved, container ("page", tag#id.class, or "" when
// nothing moved), position ("40%/1200px below"), note, and target.
func (s *Service) Scroll(ctx context.Context, r *api.ScrollRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	if r.DX == 0 && r.DY == 0 {
		return fail("scroll", name, tabs.Errorf(errcode.BadRequest, "scroll needs dx or dy, in CSS pixels (positive scrolls right and down)"))
	}
	var res *tabs.ScrollResult
	err := s.audited(ctx, name, "scroll", string(r.Target), "", true, func() error {
		return s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
			var err error
			if r.Target == "" {
				res, err = t.Scroll(ctx, r.DX, r.DY)
				return err
			}
			tg, err := tabs.ParseTarget(string(r.Target))
			if err != nil {
				return err
			}
			res, err = t.ScrollAt(ctx, tg, r.DX, r.DY)
			return err
		})
	})
	if err != nil {
		return fail("scroll", name, err)
	}
	over := ""
	if res.Target != "" {
		over = " over " + res.Target
	}
	text := fmt.Sprintf("Scrolled by (%g, %g)%s: the %s moved to x=%g, y=%g (%s)", r.DX, r.DY, over, res.Container, res.X, res.Y, res.Position)
	if res.Container == "" {
		text = fmt.Sprintf("Scrolled by (%g, %g)%s: %s", r.DX, r.DY, over, res.Note)
	}
	details := map[string]any{"action": "scroll", "name": name, "x": res.X, "y": res.Y, "container": res.Container, "position": res.Position}
	if res.Note != "" {
		details["note"] = res.Note
	}
	if res.Target != "" {
		details["target"] = res.Target
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)}, Details: details}
}

// loadStates are the load states wait knows (tabs.Tab.WaitForLoadState).
var loadStates = []string{"load", "domcontentloaded", "networkidle"}

// Wait is the wait shortcut: for text, an element's state
// (tabs.Tab.WaitForState), the URL (WaitForURL) or a load state. details:
// target and state, or url, or loadState.
func (s *Service) Wait(ctx context.Context, r *api.WaitRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	given := 0
	for _, v := range []string{r.Text, string(r.Target), r.URL, r.LoadState} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return fail("wait", name, tabs.Errorf(errcode.BadRequest, "wait takes one of text, target, url or load_state (got %d)", given))
	}
	if r.State != "" && r.Text == "" && r.Target == "" {
		return fail("wait", name, tabs.Errorf(errcode.BadRequest, "state applies to a wait for text or a target only"))
	}
	if r.LoadState != "" && !contains(loadStates, r.LoadState) {
		return fail("wait", name, &tabs.Error{Code: errcode.BadRequest,
			Msg:  fmt.Sprintf("wait: unknown load state %q: use load, domcontentloaded or networkidle", r.LoadState),
			Hint: "To wait for content, wait for its text or selector."})
	}
	details := map[string]any{"action": "wait", "name": name}
	var text string
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		switch {
		case r.URL != "":
			p, err := urlpattern.ParseGlob(r.URL, t.KnownURL())
			if err != nil {
				return err
			}
			u, err := t.WaitForURL(ctx, p, "load")
			if err != nil {
				return err
			}
			text = "The URL is " + u
			details["url"] = u
			return nil
		case r.LoadState != "":
			if err := t.WaitForLoadState(ctx, r.LoadState, 0); err != nil {
				return err
			}
			u := t.URL(ctx)
			text = fmt.Sprintf("The page reached %s: %s", r.LoadState, u)
			details["loadState"] = r.LoadState
			details["url"] = u
			return nil
		}
		tg := tabs.Target{Selector: "text/" + r.Text}
		if r.Target != "" {
			var err error
			if tg, err = tabs.ParseTarget(string(r.Target)); err != nil {
				return err
			}
		}
		state := r.State
		if state == "" {
			state = "visible"
		}
		res, err := t.WaitForState(ctx, tg, state)
		if err != nil {
			return err
		}
		what := res.Target
		if r.Text != "" {
			what = fmt.Sprintf("The text %q", r.Text)
		}
		text = fmt.Sprintf("%s is %s", what, state)
		details["target"] = res.Target
		details["state"] = state
		return nil
	})
	if err != nil {
		return fail("wait", name, err)
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)}, Details: details}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Nav is the back, forward and reload shortcuts (tabs.Tab.Back, Forward,
// Reload). details: url, title, status (when the page had an HTTP
// response), navigated, dialog.
func (s *Service) Nav(ctx context.Context, method string, r *api.NavRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	var res *tabs.NavResult
	title := ""
	err := s.audited(ctx, name, method, "", "", true, func() error {
		return s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
			var err error
			switch method {
			case "back":
				res, err = t.Back(ctx)
			case "forward":
				res, err = t.Forward(ctx)
			default:
				res, err = t.Reload(ctx)
			}
			if err == nil && res.Dialog == nil {
				title = t.Title(ctx)
			}
			return err
		})
	})
	if err != nil {
		return fail(method, name, err)
	}
	verb := map[string]string{"back": "Went back to", "forward": "Went forward to", "reload": "Reloaded"}[method]
	text := verb + " " + res.URL
	if title != "" {
		text += fmt.Sprintf(" — %q", title)
	}
	details := map[string]any{"action": method, "name": name, "url": res.URL, "title": title, "navigated": true}
	if res.Status != 0 {
		details["status"] = res.Status
	}
	if res.Dialog != nil {
		text += fmt.Sprintf("; %s dialog is open: %q (answer it with dialog accept or dialog dismiss)", res.Dialog.Article(), res.Dialog.Message)
		details["dialog"] = res.Dialog
	}
	text += " (observe again)"
	// What the wait saw (the page had not fired load, or had not settled),
	// as open says it.
	for _, n := range res.Notes {
		text += "\nNote: " + n
	}
	if len(res.Notes) > 0 {
		details["notes"] = res.Notes
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)}, Details: details}
}

// Dialog is the dialog shortcut (tabs.Tab.HandleDialog). details: dialog
// (the one answered: type, message), response, text.
func (s *Service) Dialog(ctx context.Context, r *api.DialogRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	accept := false
	switch r.Response {
	case "accept":
		accept = true
	case "dismiss":
		if r.Text != nil {
			return fail("dialog", name, tabs.Errorf(errcode.BadRequest, "dialog dismiss takes no text; a prompt's answer goes with accept"))
		}
	default:
		return fail("dialog", name, tabs.Errorf(errcode.BadRequest, "dialog response %q: want accept or dismiss", r.Response))
	}
	var d *tabs.Dialog
	text := ""
	if r.Text != nil {
		text = *r.Text
	}
	err := s.audited(ctx, name, "dialog", r.Response, text, true, func() error {
		return s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
			d = t.PendingDialog()
			return t.HandleDialog(ctx, accept, r.Text)
		})
	})
	if err != nil {
		return fail("dialog", name, err)
	}
	if d == nil {
		d = &tabs.Dialog{}
	}
	verb := "Accepted"
	if !accept {
		verb = "Dismissed"
	}
	out := fmt.Sprintf("%s %s dialog %q", verb, d.Article(), d.Message)
	details := map[string]any{"action": "dialog", "name": name, "response": r.Response, "dialog": d}
	if r.Text != nil {
		out += fmt.Sprintf(" with the text %q", *r.Text)
		details["text"] = *r.Text
	}
	return &api.Result{Content: []api.Content{api.TextContent(out)}, Details: details}
}

// Upload is the upload shortcut (tabs.Tab.UploadFile). The files are
// checked to exist before the page is touched. details: target, files (the
// absolute paths), via (input or chooser).
func (s *Service) Upload(ctx context.Context, r *api.UploadRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	if err := checkFiles(r.Files); err != nil {
		return fail("upload", name, err)
	}
	var res *tabs.UploadResult
	err := s.audited(ctx, name, "upload", strings.TrimSpace(string(r.Target)+" "+strings.Join(r.Files, " ")), "", true, func() error {
		return s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
			tg, err := tabs.ParseTarget(string(r.Target))
			if err != nil {
				return err
			}
			res, err = t.UploadFile(ctx, tg, r.Files)
			return err
		})
	})
	if err != nil {
		return fail("upload", name, err)
	}
	n := "1 file"
	if len(res.Files) != 1 {
		n = fmt.Sprintf("%d files", len(res.Files))
	}
	text := fmt.Sprintf("Uploaded %s to %s: %s", n, res.Target, strings.Join(res.Files, ", "))
	if res.Via == "chooser" {
		text += " (through the file chooser its click opened)"
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)},
		Details: map[string]any{"action": "upload", "name": name, "target": res.Target, "files": res.Files, "via": res.Via}}
}

// checkFiles refuses, before any page is touched, an empty list, a relative
// path (the daemon's working directory is not the caller's), a missing
// file and a directory. Errors: bad_request naming the path.
func checkFiles(files []string) error {
	if len(files) == 0 {
		return tabs.Errorf(errcode.BadRequest, "upload needs at least one file")
	}
	for _, f := range files {
		if !filepath.IsAbs(f) {
			return tabs.Errorf(errcode.BadRequest, "upload: %q is a relative path; give absolute paths (the daemon does not share your working directory)", f)
		}
		st, err := os.Stat(f)
		if err != nil {
			return tabs.Errorf(errcode.BadRequest, "upload: no such file %s", f)
		}
		if st.IsDir() {
			return tabs.Errorf(errcode.BadRequest, "upload: %s is a directory, not a file", f)
		}
	}
	return nil
}
