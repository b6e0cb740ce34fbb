package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
)

// pageInfo is what the page itself says: its title and its true count of
// interactive elements.
type pageInfo struct {
	title     string
	trueCount int
}

// censusJS counts the interactive elements of the document as a person
// sees them: links with a target, buttons, form fields but hidden inputs,
// selects (not their options), text areas, summaries, editable roots and
// elements with an interactive ARIA role, that are rendered
// (checkVisibility, visibility included) and not inside aria-hidden; in
// open shadow roots and same-origin frames too. It returns the count, the
// title and the URLs of the frames it could not enter (cross-origin),
// which the census loads and counts on their own.
const censusJS = `(() => {
  const roles = new Set(['link','button','textbox','searchbox','combobox','listbox','checkbox','radio','switch','slider',
    'spinbutton','menuitem','menuitemcheckbox','menuitemradio','tab','treeitem']);
  const interactive = el => {
    const r = el.getAttribute('role');
    if (r) return roles.has(r.trim().split(/\s+/)[0]);
    switch (el.localName) {
      case 'a': case 'area': return el.hasAttribute('href');
      case 'button': case 'select': case 'textarea': case 'summary': return true;
      case 'input': return el.type !== 'hidden';
    }
    return el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
  };
  const shown = el => el.checkVisibility({visibilityProperty: true}) && !el.closest('[aria-hidden="true"]');
  let count = 0;
  const cross = [];
  const walk = root => {
    for (const el of root.querySelectorAll('*')) {
      if (interactive(el) && shown(el)) count++;
      if (el.shadowRoot) walk(el.shadowRoot);
      if ((el.localName === 'iframe' || el.localName === 'frame') && shown(el)) {
        let doc = null;
        try { doc = el.contentDocument; } catch (e) {}
        if (doc) walk(doc); else if (el.src) cross.push(el.src);
      }
    }
  };
  walk(document);
  return {count, title: document.title, cross};
})()`

// census loads each page in a browser of its own and runs censusJS.
func census(ctx context.Context, chrome string, srv *server, pages []page) (map[string]pageInfo, error) {
	actx, acancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chrome), chromedp.NoFirstRun,
		chromedp.Headless, chromedp.WindowSize(1280, 720))
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx); err != nil {
		return nil, fmt.Errorf("census: launch: %w", err)
	}
	count := func(url string) (int, string, []string, error) {
		cctx, cancel := context.WithTimeout(bctx, 90*time.Second)
		defer cancel()
		if err := chromedp.Do(cctx, chromedp.Navigate(url)); err != nil {
			return 0, "", nil, err
		}
		var raw jsonv2.Value
		if err := chromedp.FromContext(bctx).Target.Call(cctx, "Runtime.evaluate", map[string]any{"expression": censusJS, "returnByValue": true}, &raw); err != nil {
			return 0, "", nil, err
		}
		var r struct {
			Result struct {
				Value struct {
					Count int      `json:"count"`
					Title string   `json:"title"`
					Cross []string `json:"cross"`
				} `json:"value"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return 0, "", nil, err
		}
		v := r.Result.Value
		return v.Count, v.Title, v.Cross, nil
	}
	out := map[string]pageInfo{}
	for _, p := range pages {
		n, title, cross, err := count(srv.url(p))
		if err != nil {
			return nil, fmt.Errorf("census of %s: %w", p.name, err)
		}
		for _, u := range cross {
			if !strings.HasPrefix(u, srv.base+"/") && !strings.HasPrefix(u, srv.xorigin+"/") {
				continue // another host: unreachable, an error page with nothing to act on
			}
			m, _, _, err := count(u)
			if err != nil {
				return nil, fmt.Errorf("census of %s, frame %s: %w", p.name, u, err)
			}
			n += m
		}
		out[p.name] = pageInfo{title: title, trueCount: n}
	}
	return out, nil
}
