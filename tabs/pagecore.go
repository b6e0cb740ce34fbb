package tabs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
)

// Page is the CDP side of one page target.
type Page struct {
	env     pageEnv
	name    string
	dialogs string // policy

	ctx      context.Context // chromedp tab context
	target   *chromedp.Target
	targetID target.ID

	// evMu guards the state updated by the CDP listener.
	evMu       sync.Mutex
	handle     *browser.Handle
	dead       string
	url, title string
	navSeq     int    // top-level navigations seen
	loading    bool   // a top-level document committed and has not fired load
	navReq     int    // top-level navigations requested (Page.frameRequestedNavigation)
	routeSeq   int    // top-level navigations within the document (Page.navigatedWithinDocument: pushState, a fragment)
	navPending bool   // one was requested and has neither committed nor stopped
	navURL     string // where the last requested top-level navigation goes
	dialog     *Dialog
	dialogSig  chan struct{} // closed when a dialog opens
	handled    []Dialog      // dialogs the policy handled, drained by runs
	inflight   map[network.RequestID]inflightReq
	docStatus  map[cdp.LoaderID]int64 // HTTP status of recent top-level documents
	navFail    string                 // the last top-level document request that failed: "URL: net::ERR_…"
	st         settleState            // what the settled wait needs (settle.go)
	deadSig    chan struct{}

	// unloadAsk (evMu) is set while a beforeunload dialog of the top
	// frame is open: dismissing it cancels the navigation that asked.
	unloadAsk bool
	// dclPending (evMu) is set when a top-level document commits and
	// cleared at its DOMContentLoaded (Page.domContentEventFired) or load.
	dclPending bool

	dialogQ chan struct{}

	// x is the state of popups, downloads and frames (hooks.go).
	x extras
	// ob is the frame state: frame sessions, worlds, navigations (oopif.go).
	ob obsState
}

// pageEnv is what a Page needs from its owner.
type pageEnv struct {
	log *slog.Logger
	// goFn runs f on a goroutine the owner waits for at shutdown.
	goFn func(f func())
	// crashed counts a renderer crash.
	crashed func()
	// downloadDir returns the session's download directory.
	downloadDir func() (string, error)
	// guard checks navigations, or nil.
	guard Guard
	// networkIdleMax caps the networkidle waits.
	networkIdleMax time.Duration
	// headless says the browser is one tabpilot launched headless.
	headless bool
	// worldScript is compiled in each isolated world the page makes.
	worldScript string
	// topNavigated is called, from the event loop, when the top frame
	// commits a document (restored: from the back/forward cache).
	topNavigated func(restored bool)
	// popup is called, from the event loop, when the page opens a page
	// target.
	popup func(info *target.Info)
}

func newPage(name, dialogs string, env pageEnv) *Page {
	return &Page{env: env, name: name, dialogs: dialogs,
		dialogSig: make(chan struct{}), deadSig: make(chan struct{}),
		inflight: map[network.RequestID]inflightReq{}, dialogQ: make(chan struct{}, 1)}
}
