package pagecore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
)

// Download is a file the tab's page downloaded (Browser.downloadWillBegin
// and Browser.downloadProgress), in one of its frames or in a tab it
// opened for it (a target=_blank link to an attachment).
type Download struct {
	// URL is the resource downloaded.
	URL string `json:"url"`
	// SuggestedName is the file name the page or server suggested.
	SuggestedName string `json:"suggestedName"`
	// Path is where the file is: in the session's download directory, named
	// after SuggestedName (made unique) once finished; while in progress,
	// the browser's temporary name there.
	Path string `json:"path"`
	// Bytes received so far, and TotalBytes expected (0 when unknown).
	Bytes      int64 `json:"bytes"`
	TotalBytes int64 `json:"totalBytes,omitempty"`
	// State is inProgress, completed or canceled.
	State string `json:"state"`
	// Finished is true once the download completed (State completed).
	Finished bool `json:"finished"`
}

type download struct {
	Download
	guid     string
	reported bool // reported in its final state
}

var (
	// renameMu serialises picking unique final names.
	renameMu sync.Mutex
)

// enableDownloads routes the downloads of the page's browser context to the session's
// directory, named by GUID while in progress (Browser.setDownloadBehavior
// allowAndName, with events), and listens to the download events on the
// browser session.
func (t *Page) enableDownloads(ctx context.Context) error {
	dir, err := t.env.DownloadDir()
	if err != nil {
		return err
	}
	c := chromedp.FromContext(t.ctx)
	if c == nil || c.Browser == nil {
		return fmt.Errorf("no browser session")
	}
	// The behaviour is per browser context: a page of a named context
	// (Target.createBrowserContext) would cancel its downloads under the
	// default context's.
	bctx, err := t.BrowserContextID(ctx)
	if err != nil {
		return err
	}
	_, err = cdp.Call(ctx, c.Browser, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, BrowserContextID: bctx, DownloadPath: dir, EventsEnabled: new(true),
	})
	if err != nil {
		return fmt.Errorf("set download behavior: %w", err)
	}
	return chromedp.ListenBrowser(t.ctx, func(ev any) { t.onDownloadEvent(dir, ev) })
}

// BrowserContextID returns the id to give the Browser domain's commands that
// take the page's browser context (Browser.setDownloadBehavior,
// Browser.setPermission): the id of a context made by
// Target.createBrowserContext (one of Target.getBrowserContexts), or ""
// for the browser's default context, which those commands take when the
// id is left out (Chromium 148 refuses the default context's own id:
// "Failed to find browser context for id"). The page's context comes from
// Target.getTargetInfo. Errors: the CDP failures of either call, wrapped.
func (t *Page) BrowserContextID(ctx context.Context) (cdp.BrowserContextID, error) {
	c := chromedp.FromContext(t.ctx)
	if c == nil || c.Browser == nil {
		return "", fmt.Errorf("no browser session")
	}
	var contexts target.GetBrowserContextsResult
	var lerr error
	var wg sync.WaitGroup
	wg.Go(func() {
		contexts, lerr = cdp.Call(ctx, c.Browser, target.GetBrowserContexts, cdp.Empty{})
	})
	info, err := cdp.Call(ctx, c.Browser, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.targetID})
	wg.Wait()
	if err != nil {
		return "", fmt.Errorf("get the page's browser context (Target.getTargetInfo): %w", err)
	}
	if lerr != nil {
		return "", fmt.Errorf("list the browser contexts (Target.getBrowserContexts): %w", lerr)
	}
	if info.TargetInfo == nil {
		return "", nil
	}
	id := info.TargetInfo.BrowserContextID
	if id == contexts.DefaultBrowserContextID || !slices.Contains(contexts.BrowserContextIDs, id) {
		return "", nil
	}
	return id, nil
}

// onDownloadEvent runs in the browser's read loop: it must return fast and
// never call CDP.
func (t *Page) onDownloadEvent(dir string, ev any) {
	switch ev := ev.(type) {
	case *cdpbrowser.EventDownloadWillBegin:
		owned := t.ownsFrame(ev.FrameID)
		t.x.mu.Lock()
		// A download in a tab the page opened (its main frame's id is
		// the target's) is the page's: the tab closes.
		via := !owned && t.x.opened[target.ID(ev.FrameID)]
		if !owned && !via {
			t.x.mu.Unlock()
			return
		}
		if via {
			if t.x.dlTargets == nil {
				t.x.dlTargets = map[target.ID]bool{}
			}
			t.x.dlTargets[target.ID(ev.FrameID)] = true
		}
		if t.x.downloads == nil {
			t.x.downloads = map[string]*download{}
		}
		if _, dup := t.x.downloads[ev.GUID]; !dup {
			t.x.downloads[ev.GUID] = &download{guid: ev.GUID, Download: Download{
				URL: ev.URL, SuggestedName: ev.SuggestedFilename, Path: filepath.Join(dir, ev.GUID), State: "inProgress"}}
			t.x.dlOrder = append(t.x.dlOrder, ev.GUID)
		}
		t.x.signalLocked()
		t.x.mu.Unlock()
	case *cdpbrowser.EventDownloadProgress:
		t.x.mu.Lock()
		d := t.x.downloads[ev.GUID]
		if d == nil || d.State != "inProgress" {
			t.x.mu.Unlock()
			return
		}
		d.Bytes, d.TotalBytes = int64(ev.ReceivedBytes), int64(ev.TotalBytes)
		switch ev.State {
		case cdpbrowser.DownloadProgressStateCompleted:
			if !t.Alive() {
				d.State, d.Finished = "completed", true
				t.x.signalLocked()
				break
			}
			d.State = "finishing" // renamed below, off the read loop
			tmp := d.Path
			if ev.FilePath != "" {
				tmp = ev.FilePath
			}
			t.x.mu.Unlock()
			t.env.Go(func() { t.finishDownload(ev.GUID, dir, tmp) })
			return
		case cdpbrowser.DownloadProgressStateCanceled:
			d.State = "canceled"
			t.x.signalLocked()
		}
		t.x.mu.Unlock()
	}
}

// finishDownload gives a completed download its suggested name (made
// unique in dir) and marks it finished.
func (t *Page) finishDownload(guid, dir, tmp string) {
	t.x.mu.Lock()
	d := t.x.downloads[guid]
	name := safeFileName(d.SuggestedName)
	t.x.mu.Unlock()
	final := tmp
	renameMu.Lock()
	if dest, err := uniquePath(dir, name); err == nil {
		if err := os.Rename(tmp, dest); err == nil {
			final = dest
		} else {
			t.env.Log.Warn("rename download", "tab", t.name, "err", err)
		}
	}
	renameMu.Unlock()
	var size int64
	if st, err := os.Stat(final); err == nil {
		size = st.Size()
	}
	t.x.mu.Lock()
	d.Path, d.State, d.Finished = final, "completed", true
	if size > 0 {
		d.Bytes = size
	}
	t.x.signalLocked()
	t.x.mu.Unlock()
}

// safeFileName keeps the last path element of a suggested name, without
// separators or leading dots; "download" when nothing is left.
func safeFileName(s string) string {
	s = strings.ReplaceAll(s, "\\", "/")
	s = filepath.Base(s)
	s = strings.TrimLeft(strings.Map(func(r rune) rune {
		if r < 0x20 || r == '/' || r == 0x7f {
			return -1
		}
		return r
	}, s), ".")
	if s == "" || s == "/" {
		return "download"
	}
	return s
}

// uniquePath returns dir/name, or dir/"name (n).ext" for the first n that
// is free.
func uniquePath(dir, name string) (string, error) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 0; i < 1000; i++ {
		p := filepath.Join(dir, name)
		if i > 0 {
			p = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", stem, i, ext))
		}
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no free name for %s in %s", name, dir)
}

func (d *download) public() Download {
	out := d.Download
	if out.State == "finishing" {
		out.State = "inProgress"
	}
	return out
}

// Downloads returns every download of the tab's page, oldest first.
func (t *Page) Downloads() []Download {
	t.x.mu.Lock()
	defer t.x.mu.Unlock()
	out := make([]Download, 0, len(t.x.dlOrder))
	for _, g := range t.x.dlOrder {
		out = append(out, t.x.downloads[g].public())
	}
	return out
}

// DrainDownloads returns the downloads not yet reported in their final
// state: new ones, ones still in progress, and ones that finished or were
// canceled since the last drain. A finished or canceled download is
// returned once in that state.
func (t *Page) DrainDownloads() []Download {
	t.x.mu.Lock()
	defer t.x.mu.Unlock()
	var out []Download
	for _, g := range t.x.dlOrder {
		d := t.x.downloads[g]
		if d.reported {
			continue
		}
		out = append(out, d.public())
		if d.State == "completed" || d.State == "canceled" {
			d.reported = true
		}
	}
	return out
}

// DownloadWaiter waits for a download that starts after it was made (see
// Tab.WatchDownloads).
type DownloadWaiter struct {
	t    *Page
	seen int
}

// WatchDownloads starts watching for the next download of the tab's page,
// so a script can wait for it and trigger it at once
// (Promise.all([tab.waitForDownload(), tab.click(…)])).
func (t *Page) WatchDownloads() *DownloadWaiter {
	t.x.mu.Lock()
	defer t.x.mu.Unlock()
	return &DownloadWaiter{t: t, seen: len(t.x.dlOrder)}
}

// Wait returns the first download begun after WatchDownloads once it has
// finished or was canceled. Errors: timeout when ctx ends first (the
// message says whether one began).
func (w *DownloadWaiter) Wait(ctx context.Context) (*Download, error) {
	x := &w.t.x
	for {
		x.mu.Lock()
		began := len(x.dlOrder) > w.seen
		if began {
			d := x.downloads[x.dlOrder[w.seen]]
			if d.State == "completed" || d.State == "canceled" {
				out := d.public()
				x.mu.Unlock()
				return &out, nil
			}
		}
		ch := x.waitLocked()
		x.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			msg := "waitForDownload: no download began within the timeout"
			if began {
				msg = "waitForDownload: the download did not finish within the timeout"
			}
			return nil, &Error{Code: errcode.Timeout, Msg: msg, Err: ctx.Err()}
		}
	}
}
