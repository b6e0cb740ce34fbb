package service

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/internal/msg"
	"github.com/tabpilot/tabpilot/tabs"
)

// Act runs the click, type, fill, press and hover shortcuts.
func (s *Service) Act(ctx context.Context, method string, r *api.ActRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	var res *tabs.ActionResult
	var before []tabs.Popup // opened between calls, not by this action
	var verb string
	text := ""
	if method == "type" || method == "fill" {
		text = r.Text
	}
	target := string(r.Target)
	if method == "press" {
		target = r.Text + " " + string(r.Target)
	}
	err := s.audited(ctx, name, method, strings.TrimSpace(target), text, true, func() error {
		return s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
			before = t.PopupsBefore(time.Second)
			var err error
			switch method {
			case "press":
				verb = "Pressed " + r.Text
				var tg *tabs.Target
				if r.Target != "" {
					p, err := tabs.ParseTarget(string(r.Target))
					if err != nil {
						return err
					}
					tg = &p
				}
				res, err = t.Press(ctx, r.Text, tg)
				return err
			}
			tg, err := tabs.ParseTarget(string(r.Target))
			if err != nil {
				return err
			}
			switch method {
			case "click":
				verb = "Clicked " + tg.String()
				res, err = t.Click(ctx, tg)
			case "type":
				n := len([]rune(r.Text))
				verb = fmt.Sprintf("Typed %d characters into %s", n, tg)
				res, err = t.Type(ctx, tg, r.Text)
				if res != nil && res.Skipped > 0 {
					verb = fmt.Sprintf("Typed %d of %d characters into %s", n-res.Skipped, n, tg)
				}
			case "fill":
				verb = "Filled " + tg.String()
				res, err = t.Fill(ctx, tg, r.Text)
			case "hover":
				verb = "Hovered over " + tg.String()
				res, err = t.Hover(ctx, tg)
			}
			return err
		})
	})
	if err != nil {
		return fail(method, name, err)
	}
	// A tab the action opened (a target=_blank link, window.open) is
	// adopted under a name of its own: say which.
	// So is a download it started, in the page or through a new tab.
	var pops []tabs.Popup
	var dls []tabs.Download
	if t, terr := s.sup.Tab(name); terr == nil {
		pops = append(before, t.DrainPopups(time.Second)...)
		dls = t.DrainDownloads()
	}
	details := map[string]any{"action": method, "name": name}
	text = verb
	if res != nil {
		if res.Target != "" {
			details["target"] = res.Target
			if strings.Contains(res.Target, " (was ") {
				// The element's own label changed since it was numbered.
				text += "; " + res.Target
			}
		}
		if res.Navigated {
			if res.URL != "" {
				text += "; the page navigated to " + msg.Trim(res.URL, 200) + " (observe again)"
				details["url"] = res.URL
			} else {
				text += "; the page navigated (observe again)"
			}
			details["navigated"] = true
		} else if res.URL != "" {
			text += "; the URL changed to " + msg.Trim(res.URL, 200) + " (the same document: its element numbers stand)"
			details["url"] = res.URL
		}
		if res.Dialog != nil {
			text += fmt.Sprintf("; %s dialog is open: %q", res.Dialog.Article(), res.Dialog.Message)
			details["dialog"] = res.Dialog
		}
		if res.Value != nil {
			details["value"] = *res.Value
		}
		if res.Note != "" {
			text += "; " + res.Note
			details["note"] = res.Note
		}
		if len(res.Blocked) > 0 {
			details["blocked"] = res.Blocked
		}
		if res.Skipped > 0 {
			details["skipped"] = res.Skipped
		}
	}
	for _, n := range popupNotes(pops) {
		text += "; " + n
	}
	if len(pops) > 0 {
		details["popups"] = pops
	}
	for _, d := range dls {
		switch d.State {
		case "completed":
			text += fmt.Sprintf("; it downloaded %q to %s", d.SuggestedName, d.Path)
		case "canceled":
			text += fmt.Sprintf("; it started a download of %q, which was canceled", d.SuggestedName)
		default:
			text += fmt.Sprintf("; it started a download of %q (in progress, into %s: tab.waitForDownload() waits for it, tab.downloads() lists it)", d.SuggestedName, filepath.Dir(d.Path))
		}
	}
	if len(dls) > 0 {
		details["downloads"] = dls
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)}, Details: details}
}

// capFirst upper-cases the first letter of an ASCII phrase.
func capFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// popupNotes says, one phrase each, which tabs the page opened: by the
// call ("it opened …"), or before it, between calls (Popup.Before).
func popupNotes(pops []tabs.Popup) []string {
	var out []string
	for _, p := range pops {
		who := "it"
		if p.Before {
			who = "before this call, the page"
		}
		switch {
		case p.Blocked != "" && p.Before:
			out = append(out, fmt.Sprintf("before this call, the page opened a popup to %s, which was blocked (%s) and closed", p.URL, p.Blocked))
		case p.Blocked != "":
			out = append(out, fmt.Sprintf("the popup it opened, to %s, was blocked (%s) and closed", p.URL, p.Blocked))
		case p.Error != "":
			out = append(out, fmt.Sprintf("%s opened a new tab that could not be attached (%s)", who, p.Error))
		default:
			out = append(out, fmt.Sprintf("%s opened a new tab %q at %s (act on it with the tab name %q)", who, p.Name, p.URL, p.Name))
		}
	}
	return out
}
