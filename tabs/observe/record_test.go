package observe

// The recorder: `go test ./tabs/observe -run TestRecord -record` launches a
// headless Chromium, serves the pages below from httptest on 127.0.0.1,
// and writes each page's accessibility trees (Accessibility.getFullAXTree
// per frame, out-of-process iframes included), its layout metrics and the
// content quads of the candidate nodes to testdata/NAME.json. The other
// tests read those files and need no browser.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

var record = flag.Bool("record", false, "record the AX trees of testdata pages with a headless Chromium (rewrites testdata/*.json)")

// recordedPort replaces the test server's port in recordings.
const recordedPort = "8000"

// readabilityPages is where the saved real-world pages live.
const readabilityPages = "/work/shared/pages/readability"

// recordedPages maps a recording name to the path served to the browser.
// Paths under /real/ are readability pages, under /pages/ our own.
var recordedPages = []struct{ name, path string }{
	{"wikipedia", "/real/wikipedia/source.html"},
	{"nytimes-1", "/real/nytimes-1/source.html"},
	{"yahoo-1", "/real/yahoo-1/source.html"},
	{"rtl-1", "/real/rtl-1/source.html"},
	{"rtl", "/pages/rtl.html"},
	{"login", "/pages/login.html"},
	{"shop", "/pages/shop.html"},
	{"landmarks", "/pages/landmarks.html"},
	{"widgets", "/pages/widgets.html"},
	{"frames", "/pages/frames.html"},
}

// recording is the file format of testdata/NAME.json.
type recording struct {
	URL      string          `json:"url"`
	Title    string          `json:"title"`
	Viewport Size            `json:"viewport"`
	Scroll   Scroll          `json:"scroll"`
	Frames   []recordedFrame `json:"frames"`
	Boxes    []recordedBox   `json:"boxes,omitempty"`
	Nodes    int             `json:"nodeCount"`
}

type recordedFrame struct {
	FrameID cdp.FrameID           `json:"frameId"`
	Session string                `json:"session,omitempty"`
	URL     string                `json:"url,omitempty"`
	Name    string                `json:"name,omitempty"`
	Parent  cdp.FrameID           `json:"parent,omitempty"`
	Owner   cdp.BackendNodeID     `json:"owner,omitempty"`
	Nodes   []*accessibility.Node `json:"nodes"`
}

type recordedBox struct {
	Ref  Ref     `json:"ref"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	W    float64 `json:"w"`
	H    float64 `json:"h"`
	Note string  `json:"note,omitempty"`
}

// input turns a recording into the Input of Build.
func (r *recording) input() *Input {
	in := &Input{URL: r.URL, Title: r.Title, Viewport: r.Viewport, Scroll: r.Scroll}
	for _, f := range r.Frames {
		in.Frames = append(in.Frames, Frame(f))
	}
	if r.Boxes != nil {
		in.Boxes = make(map[Ref]Rect, len(r.Boxes))
		for _, b := range r.Boxes {
			in.Boxes[b.Ref] = Rect{X: b.X, Y: b.Y, Width: b.W, Height: b.H}
		}
	}
	return in
}

func loadRecording(tb testing.TB, name string) *recording {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		tb.Fatalf("reading recording (run `go test -run TestRecord -record` to make it): %v", err)
	}
	var r recording
	if err := jsonv2.Unmarshal(b, &r); err != nil {
		tb.Fatalf("decoding %s.json: %v", name, err)
	}
	return &r
}

func TestRecord(t *testing.T) {
	if !*record {
		t.Skip("run with -record to rewrite testdata/*.json from a live Chromium")
	}
	mux := http.NewServeMux()
	mux.Handle("/real/", http.StripPrefix("/real/", http.FileServer(http.Dir(readabilityPages))))
	mux.Handle("/pages/", http.StripPrefix("/pages/", http.FileServer(http.Dir("testdata/pages"))))
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	defer srv.Close()

	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath("/usr/bin/chromium"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 800),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("starting browser: %v", err)
	}

	for _, p := range recordedPages {
		t.Run(p.name, func(t *testing.T) {
			rec, err := recordPage(browserCtx, srv.URL+p.path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := jsonv2.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			// A fixed port, so that recordings and goldens do not change
			// with the port httptest picked.
			port := srv.Listener.Addr().(*net.TCPAddr).Port
			for _, host := range []string{"127.0.0.1", "localhost"} {
				b = bytes.ReplaceAll(b, []byte(host+":"+strconv.Itoa(port)), []byte(host+":"+recordedPort))
			}
			if err := os.WriteFile(filepath.Join("testdata", p.name+".json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d frames, %d nodes, %d boxes, %d bytes", p.name, len(rec.Frames), rec.Nodes, len(rec.Boxes), len(b))
		})
	}
}

// recordPage opens url in a fresh tab and records it.
func recordPage(browserCtx context.Context, url string) (*recording, error) {
	ctx, cancel := chromedp.NewContext(browserCtx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.Sleep(700*time.Millisecond)); err != nil {
		return nil, fmt.Errorf("navigating to %s: %w", url, err)
	}
	rec := &recording{}
	var err error
	if rec.Title, err = chromedp.Run(ctx, chromedp.Title()); err != nil {
		return nil, err
	}
	if rec.URL, err = chromedp.Run(ctx, chromedp.Location()); err != nil {
		return nil, err
	}
	lm, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("layout metrics: %w", err)
	}
	rec.Viewport = Size{Width: int(lm.CSSLayoutViewport.ClientWidth), Height: int(lm.CSSLayoutViewport.ClientHeight)}
	rec.Scroll = Scroll{X: int(lm.CSSVisualViewport.PageX), Y: int(lm.CSSVisualViewport.PageY),
		Width: int(lm.CSSContentSize.Width), Height: int(lm.CSSContentSize.Height)}

	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("frame tree: %w", err)
	}
	targets, err := chromedp.Targets(ctx)
	if err != nil {
		return nil, err
	}
	type frameSession struct {
		ctx     context.Context
		session string
	}
	sessions := map[cdp.FrameID]frameSession{}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	// addFrame records the AX tree of frame f, asked on the session of
	// fctx (with the frame id unless oopif).
	addFrame := func(fctx context.Context, f *cdp.Frame, session string, top, oopif bool) error {
		rf := recordedFrame{FrameID: f.ID, Parent: f.ParentID, Session: session}
		if !top {
			rf.URL, rf.Name = f.URL, f.Name
			if ps, ok := sessions[f.ParentID]; ok {
				if o, err := chromedp.Call(ps.ctx, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: f.ID}); err == nil {
					rf.Owner = o.BackendNodeID
				}
			}
		}
		params := accessibility.GetFullAXTreeParams{FrameID: f.ID}
		if oopif {
			params.FrameID = ""
		}
		res, err := chromedp.Call(fctx, accessibility.GetFullAXTree, params)
		if err != nil {
			return fmt.Errorf("AX tree of frame %s (%s): %w", f.ID, f.URL, err)
		}
		sessions[f.ID] = frameSession{fctx, session}
		rf.Nodes = stripNodes(res.Nodes)
		rec.Nodes += len(rf.Nodes)
		rec.Frames = append(rec.Frames, rf)
		return nil
	}
	// addTree records a frame tree of one target, then the out-of-process
	// iframes whose parent frame is in it.
	var addTree func(fctx context.Context, ft *page.FrameTree, session string, top bool) error
	addTree = func(fctx context.Context, ft *page.FrameTree, session string, top bool) error {
		var walk func(ft *page.FrameTree, top, oopif bool) error
		walk = func(ft *page.FrameTree, top, oopif bool) error {
			if err := addFrame(fctx, ft.Frame, session, top, oopif); err != nil {
				return err
			}
			for _, c := range ft.ChildFrames {
				if err := walk(c, false, false); err != nil {
					return err
				}
			}
			return nil
		}
		if err := walk(ft, top, session != ""); err != nil {
			return err
		}
		for _, ti := range targets {
			if ti.Type != "iframe" {
				continue
			}
			if _, ok := sessions[ti.ParentFrameID]; !ok {
				continue
			}
			if _, done := sessions[cdp.FrameID(ti.TargetID)]; done {
				continue
			}
			// Detach on cancel: closing an iframe target would drop
			// the page's session too.
			c, cancelFrame := chromedp.NewContext(ctx, chromedp.WithTargetID(ti.TargetID), chromedp.WithDetachOnCancel())
			cancels = append(cancels, cancelFrame)
			if err := chromedp.Do(c); err != nil {
				return fmt.Errorf("attaching to iframe %s: %w", ti.URL, err)
			}
			sub, err := chromedp.Call(c, page.GetFrameTree, cdp.Empty{})
			if err != nil {
				return fmt.Errorf("frame tree of iframe %s: %w", ti.URL, err)
			}
			sub.FrameTree.Frame.ParentID = ti.ParentFrameID
			if err := addTree(c, sub.FrameTree, string(chromedp.FromContext(c).Target.SessionID), false); err != nil {
				return err
			}
		}
		return nil
	}
	if err := addTree(ctx, tree.FrameTree, "", true); err != nil {
		return nil, err
	}

	// Boxes: the content quads of candidate nodes, in top-viewport CSS
	// pixels. Quads of an out-of-process frame are relative to that frame,
	// so they are shifted by the owner iframe's content box.
	offsets := map[cdp.FrameID][2]float64{}
	for _, rf := range rec.Frames {
		fs := sessions[rf.FrameID]
		off := offsets[rf.Parent]
		if ps, ok := sessions[rf.Parent]; ok && ps.session != rf.Session && rf.Owner != 0 {
			if bm, err := chromedp.Call(ps.ctx, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: rf.Owner}); err == nil {
				off[0] += bm.Model.Content[0]
				off[1] += bm.Model.Content[1]
			}
		}
		offsets[rf.FrameID] = off
		for _, n := range rf.Nodes {
			if n.Ignored || n.BackendDOMNodeID == 0 || !boxCandidate(n) {
				continue
			}
			q, err := chromedp.Call(fs.ctx, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: n.BackendDOMNodeID})
			ref := Ref{FrameID: rf.FrameID, BackendNodeID: n.BackendDOMNodeID, Session: rf.Session}
			if err != nil || len(q.Quads) == 0 {
				if err != nil && os.Getenv("REC_DEBUG") != "" {
					fmt.Fprintln(os.Stderr, "quads:", err)
				}
				continue // not rendered
			}
			x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
			for _, quad := range q.Quads {
				for i := 0; i+1 < len(quad); i += 2 {
					x0, x1 = math.Min(x0, quad[i]), math.Max(x1, quad[i])
					y0, y1 = math.Min(y0, quad[i+1]), math.Max(y1, quad[i+1])
				}
			}
			rec.Boxes = append(rec.Boxes, recordedBox{Ref: ref, X: round2(x0 + off[0]), Y: round2(y0 + off[1]), W: round2(x1 - x0), H: round2(y1 - y0)})
		}
	}
	return rec, nil
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// boxCandidate reports whether a node's box is worth recording.
func boxCandidate(n *accessibility.Node) bool {
	if n.Role == nil {
		return false
	}
	r := strings.Trim(string(n.Role.Value), `"`)
	switch r {
	case "generic", "none", "InlineTextBox", "LineBreak", "RootWebArea", "paragraph", "list", "LabelText", "Section", "SectionFooter", "SectionHeader":
		for _, p := range n.Properties {
			if p.Name == accessibility.PropertyNameFocusable {
				return true
			}
		}
		return false
	}
	return true
}

// stripNodes drops the parts of the nodes Build never reads (name sources,
// related nodes, Chrome's raw roles), which are most of the bytes.
func stripNodes(nodes []*accessibility.Node) []*accessibility.Node {
	strip := func(v *accessibility.Value) {
		if v != nil {
			v.Sources = nil
			v.RelatedNodes = nil
		}
	}
	for _, n := range nodes {
		n.ChromeRole = nil
		strip(n.Role)
		strip(n.Name)
		strip(n.Description)
		strip(n.Value)
		for _, p := range n.Properties {
			strip(p.Value)
		}
		for _, p := range n.IgnoredReasons {
			strip(p.Value)
		}
	}
	return nodes
}
