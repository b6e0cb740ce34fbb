package tabs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// gif1x1 is a 1×1 GIF.
var gif1x1 = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// settlePages serves the pages of the settled-wait tests:
//
//	/static   a page without scripts
//	/spa      a shell whose content comes from a fetch started at load and
//	          answered 150 ms later (/spa/data)
//	/never    a page that, at load, starts a long poll and an image that
//	          never end (/never/poll, /never/img)
//	/slowdoc  a document served after 400 ms that adds a line after load,
//	          from a timer of no delay set by a load listener
//	/ticks    a page that changes its heading every 20 ms for 120 ms after
//	          load, without a request (less than the 50 ms quiet window)
//	/stall    /ticks, with the page's main thread busy for 150 ms after
//	          the third tick
//	/busyload /ticks, with the main thread busy for 150 ms right after load
//	/raf      a page whose load listener renders on the second animation
//	          frame after load (requestAnimationFrame twice)
//	/late     a page whose load listener adds a script served after 150 ms,
//	          which renders its content
//	/framed   /raf with an image served after 300 ms, so that load comes
//	          long after DOMContentLoaded
//	/start    a link and a form to /target, served after 300 ms, an SPA shell too
//	/xframe   a page with a cross-site iframe (localhost)
func settlePages(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	const shell = `<!doctype html><title>%s</title><main><h1 id=app>Loading</h1></main>
<script>addEventListener('load', () => fetch('%s').then(r => r.text()).then(t => { document.getElementById('app').textContent = t; }));</script>`
	mux.HandleFunc("/static", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Static</title><main><h1>Static page</h1><p>Some text.</p><a href="/spa">A link</a><button>A button</button></main>`)
	})
	mux.HandleFunc("/spa", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, shell, "Shell", "/spa/data")
	})
	mux.HandleFunc("/spa/data", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		fmt.Fprint(w, "Inventory: 42 widgets")
	})
	mux.HandleFunc("/never", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Never idle</title><main><h1>Live feed</h1></main>
<script>addEventListener('load', () => {
  fetch('/never/poll'); fetch('/never/poll?2');
  const img = new Image(); img.src = '/never/img'; document.body.append(img);
});</script>`)
	})
	hang := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}
	mux.HandleFunc("/never/poll", hang)
	mux.HandleFunc("/never/img", hang)
	mux.HandleFunc("/slowdoc", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(400 * time.Millisecond)
		fmt.Fprint(w, `<!doctype html><title>Slow doc</title><main><h1>Slow content</h1></main>
<script>addEventListener('load', () => setTimeout(() => { const h = document.createElement('h2'); h.textContent = 'Ready now'; document.querySelector('main').append(h); }, 0));</script>`)
	})
	mux.HandleFunc("/ticks", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Ticks</title><main><h1 id=n>0</h1></main>
<script>addEventListener('load', () => { let n = 0; const id = setInterval(() => {
  n++; document.getElementById('n').textContent = n < 6 ? 'tick ' + n : 'Counted to six';
  if (n == 6) clearInterval(id);
}, 20); });</script>`)
	})
	// As /ticks, but after the third tick the page's main thread is busy
	// for 150 ms (a long task of its own; a renderer starved by a loaded
	// machine looks the same): no mutation comes in that time, and the
	// ticks due meanwhile run after it.
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Stall</title><main><h1 id=n>0</h1></main>
<script>addEventListener('load', () => { let n = 0; const id = setInterval(() => {
  n++; document.getElementById('n').textContent = n < 6 ? 'tick ' + n : 'Counted to six';
  if (n == 3) setTimeout(() => { const end = performance.now() + 150; while (performance.now() < end); }, 1);
  if (n == 6) clearInterval(id);
}, 20); });</script>`)
	})
	// As /ticks, but the page's main thread is busy for 150 ms right
	// after load, before it renders a frame.
	mux.HandleFunc("/busyload", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Busy at load</title><main><h1 id=n>0</h1></main>
<script>addEventListener('load', () => { let n = 0; const id = setInterval(() => {
  n++; document.getElementById('n').textContent = n < 6 ? 'tick ' + n : 'Counted to six';
  if (n == 6) clearInterval(id);
}, 20); setTimeout(() => { const end = performance.now() + 150; while (performance.now() < end); }, 0); });</script>`)
	})
	// A page that works for 200 ms after load in slices of 5 ms, each a
	// MessageChannel task (as React's scheduler yields), with no timer and
	// no DOM change until the end.
	mux.HandleFunc("/slices", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Slices</title><main><h1 id=app>Working</h1></main>
<script>addEventListener('load', () => { const t0 = performance.now(); const c = new MessageChannel();
  c.port1.onmessage = () => { const t = performance.now(); while (performance.now() - t < 5);
    if (performance.now() - t0 > 200) document.getElementById('app').textContent = 'Done in slices'; else c.port2.postMessage(0); };
  c.port2.postMessage(0); });</script>`)
	})
	// As /slices, each slice of 8 ms a setTimeout(0) task (Chromium
	// clamps nested ones to 4 ms, so there is idle time between them,
	// up to the next slice's timer).
	mux.HandleFunc("/timeslices", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Time slices</title><main><h1 id=app>Working</h1></main>
<script>addEventListener('load', () => { const t0 = performance.now();
  const slice = () => { const t = performance.now(); while (performance.now() - t < 8);
    if (performance.now() - t0 > 200) document.getElementById('app').textContent = 'Done in timer slices'; else setTimeout(slice, 0); };
  setTimeout(slice, 0); });</script>`)
	})
	// A page that fetches after load and acts on the response without
	// reading its body, from a server that closes the connection after
	// it: Chromium then sends no Network.loadingFinished for it.
	mux.HandleFunc("/unread", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Unread</title><main><h1 id=app>Asking</h1></main>
<script>addEventListener('load', async () => {
    const r = await fetch('/unread/data'); document.getElementById('app').textContent = 'Answered ' + r.status; });</script>`)
	})
	mux.HandleFunc("/unread/data", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"msg": "from the api"}`)
	})
	// As /slices, for 3 s.
	mux.HandleFunc("/spinning", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Spinning</title><main><h1>Working</h1></main>
<script>addEventListener('load', () => { const t0 = performance.now(); const c = new MessageChannel();
  c.port1.onmessage = () => { const t = performance.now(); while (performance.now() - t < 5); if (performance.now() - t0 < 3000) c.port2.postMessage(0); };
  c.port2.postMessage(0); });</script>`)
	})
	mux.HandleFunc("/raf", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Frames</title><main><h1 id=app>Loading</h1></main>
<script>addEventListener('load', () => requestAnimationFrame(() => requestAnimationFrame(() => {
  document.getElementById('app').textContent = 'Drawn on the second frame';
})));</script>`)
	})
	mux.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Late script</title><main><h1 id=app>Loading</h1></main>
<script>addEventListener('load', () => { const s = document.createElement('script'); s.src = '/late.js'; document.head.append(s); });</script>`)
	})
	mux.HandleFunc("/late.js", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `document.getElementById('app').textContent = 'Rendered by the late script';`)
	})
	mux.HandleFunc("/framed", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Slow image</title><main><h1 id=app>Loading</h1><img src="/framed.png" alt=""></main>
<script>addEventListener('load', () => requestAnimationFrame(() => requestAnimationFrame(() => {
  document.getElementById('app').textContent = 'Ready after the image';
})));</script>`)
	})
	mux.HandleFunc("/framed.png", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		w.Header().Set("Content-Type", "image/gif")
		w.Write(gif1x1)
	})
	// A cross-site iframe (localhost in a page of 127.0.0.1): a renderer
	// process of its own, held for its stealth patches.
	mux.HandleFunc("/xframe", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Cross-site frame</title><main><h1>Outer</h1><iframe src="//%s/xframe/inner"></iframe></main>`,
			strings.Replace(r.Host, "127.0.0.1", "localhost", 1))
	})
	mux.HandleFunc("/xframe/inner", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p>Inner</p><button>Inside the frame</button>`)
	})
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Start</title><a id=go href="/target">Go to the target</a>
<form action="/target"><input id=q name=q value=x></form>`)
	})
	mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		fmt.Fprintf(w, shell, "Target", "/spa/data")
	})
	// A single-page app: its links and its search box change the route
	// with history.pushState, then fetch the new view (150 ms). Its
	// iframe then moves itself with pushState too.
	mux.HandleFunc("/app", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>App</title><nav><a id=inbox href="/app/inbox">Inbox</a></nav>
<input id=search aria-label=Search><main><h1 id=view>Home</h1></main><iframe src="/app/frame"></iframe>
<script>
function show(route) {
  history.pushState({}, '', route);
  frames[0].postMessage(route, '*');
  document.getElementById('view').textContent = 'Loading';
  fetch('/spa/data').then(r => r.text()).then(t => { document.getElementById('view').textContent = route + ': ' + t; });
}
document.getElementById('inbox').onclick = (e) => { e.preventDefault(); show('/app/inbox'); };
document.getElementById('search').onkeydown = (e) => { if (e.key === 'Enter') show('/app/search'); };
</script>`)
	})
	mux.HandleFunc("/router", func(w http.ResponseWriter, r *http.Request) {
		// A router that renders each history entry from a fetch, on a
		// link's click and on popstate (back and forward).
		fmt.Fprint(w, `<!doctype html><title>Router</title><nav><a id=ra href="/router/a">Route A</a> <a id=rb href="/router/b">Route B</a></nav><main><h1 id=view>Home</h1></main>
<script>
function render() {
  const route = location.pathname;
  document.getElementById('view').textContent = 'Loading';
  fetch('/spa/data').then(r => r.text()).then(t => { document.getElementById('view').textContent = 'View ' + route + ': ' + t; });
}
for (const a of document.querySelectorAll('nav a')) a.onclick = (e) => { e.preventDefault(); history.pushState({}, '', a.href); render(); };
addEventListener('popstate', render);
</script>`)
	})
	mux.HandleFunc("/cached", func(w http.ResponseWriter, r *http.Request) {
		// A page that refreshes what it shows when the back/forward
		// cache restores it.
		fmt.Fprint(w, `<!doctype html><title>Cached</title><main><h1 id=view>First visit</h1><a id=away href="/static">Away</a></main>
<script>
addEventListener('pageshow', (e) => {
  if (!e.persisted) return;
  document.getElementById('view').textContent = 'Refreshing';
  fetch('/spa/data').then(r => r.text()).then(t => { document.getElementById('view').textContent = 'Restored: ' + t; });
});
</script>`)
	})
	mux.HandleFunc("/app/frame", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p>frame</p><script>onmessage = (e) => history.pushState({}, '', '/app/frame' + e.data);</script>`)
	})
	// Pages with no script element in their light DOM that still run
	// something of their own after load: from a body onload handler, an
	// image's onerror handler, a same-origin iframe's script, a script in
	// a declarative shadow root, and a handler attribute in one nested in
	// another. Each adds a line from a timer of no delay set at load,
	// which the settle waits for (the frames after load).
	const later = `setTimeout(() => { const p = document.createElement('p'); p.textContent = '%s'; document.body.append(p); }, 0)`
	atLoad := func(text string) string {
		return "window.addEventListener('load', () => " + fmt.Sprintf(later, text) + ")"
	}
	mux.HandleFunc("/onload", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Onload</title><body onload="%s"><h1>Handler page</h1></body>`, fmt.Sprintf(later, "Added by onload"))
	})
	mux.HandleFunc("/onerror", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Onerror</title><h1>Broken image</h1><img alt="" src="/missing.png" onerror="%s">`, atLoad("Added by onerror"))
	})
	mux.HandleFunc("/framewriter", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Frame writer</title><h1>Parent</h1><iframe src="/framewriter/inner"></iframe>`)
	})
	mux.HandleFunc("/framewriter/inner", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><p>inner</p><script>%s</script>`,
			strings.NewReplacer("window.", "parent.", "document.", "parent.document.").Replace(atLoad("Added by the frame")))
	})
	// A page without scripts that a Refresh header sends on at once (to
	// a page with scripts).
	mux.HandleFunc("/refreshed", func(w http.ResponseWriter, r *http.Request) {
		// On to a page that settles fast: what is checked is that this
		// one is not settled at its load (/spa's fetch of 150 ms made the
		// chain run past the settle's bound on a loaded CI machine).
		w.Header().Set("Refresh", "0; url=/inline")
		fmt.Fprint(w, `<!doctype html><title>Refreshed</title><h1>Moving on</h1>`)
	})
	// Pages with scripts. /inline renders in a script as it is parsed
	// and schedules nothing; the others add a line after load, each by
	// something it schedules or waits for: a timer of no delay, an
	// animation frame, an idle callback, an image answered after 150 ms,
	// the end of a CSS animation of 2 s (in the document, and in an open
	// shadow root: long enough not to have ended when a loaded machine
	// runs the check late), a style sheet or a preload answered after
	// 300 ms.
	// (The image, the sheet, the preload and the animations' ends come
	// after the usual settle too: of those, only that they keep the page
	// off the fast path is checked.)
	mux.HandleFunc("/inline", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Inline</title><main id=m></main><script>document.getElementById('m').textContent = 'Rendered inline';</script>`)
	})
	const addLine = `const p = document.createElement('p'); p.textContent = '%s'; document.body.append(p);`
	scripted := func(path, title, body, script string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><title>%s</title>%s<script>%s</script>`, title, body, script)
		})
	}
	scripted("/viatimer", "Timer", "<h1>Timer</h1>", `addEventListener('load', () => setTimeout(() => { `+fmt.Sprintf(addLine, "Added by a timer")+` }, 0));`)
	scripted("/viaframe", "Frame", "<h1>Frame</h1>", `addEventListener('load', () => requestAnimationFrame(() => { `+fmt.Sprintf(addLine, "Added in a frame")+` }));`)
	scripted("/viaidle", "Idle", "<h1>Idle</h1>", `addEventListener('load', () => requestIdleCallback(() => { `+fmt.Sprintf(addLine, "Added when idle")+` }));`)
	scripted("/viaimage", "Image", "<h1>Image</h1>", `addEventListener('load', () => { const i = new Image(); i.onload = () => { `+fmt.Sprintf(addLine, "Added when the image came")+` }; i.src = '/framed.png'; document.body.append(i); });`)
	scripted("/viaanimation", "Animation", `<style>@keyframes k { from { opacity: 0 } to { opacity: 1 } } #a { animation: k 2s }</style><h1 id=a>Animation</h1>`,
		`document.getElementById('a').addEventListener('animationend', () => { `+fmt.Sprintf(addLine, "Added when it ended")+` });`)
	scripted("/viasheet", "Sheet", "<h1>Sheet</h1>", `addEventListener('load', () => { const l = document.createElement('link'); l.rel = 'stylesheet'; l.href = '/slowsheet'; l.onload = () => { `+fmt.Sprintf(addLine, "Added when the sheet came")+` }; document.head.append(l); });`)
	mux.HandleFunc("/slowsheet", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "h1 { color: teal }")
	})
	scripted("/viapreload", "Preload", `<link rel=preload as=fetch crossorigin href="/slowsheet" onload="document.body.append('Preloaded')"><h1>Preload</h1>`, `document.title = 'Preload';`)
	scripted("/viashadowanimation", "Shadow animation", `<div id=host></div>`,
		`const sr = document.getElementById('host').attachShadow({mode: 'open'}); sr.innerHTML = '<style>@keyframes k { from { opacity: 0 } to { opacity: 1 } } p { animation: k 2s }</style><p>in the shadow</p>'; sr.querySelector('p').addEventListener('animationend', () => { `+fmt.Sprintf(addLine, "Added when it ended")+` });`)
	// A page that starts dedicated workers (from a URL, as a module, from
	// data:) that answer it with a message, which it shows.
	scripted("/viaworker", "Workers", "<h1>Workers</h1><p id=said></p>",
		`for (const w of [new Worker('/worker.js'), new Worker('/worker.js', {type: 'module'}), new Worker('data:text/javascript,postMessage(3)')]) w.onmessage = (e) => { document.getElementById('said').textContent += ' said ' + e.data; };`)
	mux.HandleFunc("/worker.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `postMessage(1);`)
	})
	// Pages that schedule without a timer: an SVG animation element whose
	// begin event runs code, a view transition (whose update waits on
	// something no count sees, here a promise that never settles, as an
	// IndexedDB read would: no animation runs yet, and Chromium ends the
	// transition after 4 s), and a cross-origin isolated page (whose
	// Atomics.waitAsync can time out).
	scripted("/viasmil", "SMIL", `<svg width=50 height=50><rect width=10 height=10><set attributeName=x to=10 begin=0.15s onbegin="document.body.append('Began')"/></rect></svg><h1>SMIL</h1>`, `document.title = 'SMIL';`)
	scripted("/viatransition", "Transition", "<h1>Transition</h1>", `addEventListener('load', () => { const add = () => { `+fmt.Sprintf(addLine, "Added after the transition")+` }; document.startViewTransition(() => new Promise(() => {})).finished.then(add, add); });`)
	mux.HandleFunc("/viaisolated", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
		w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
		fmt.Fprint(w, `<!doctype html><title>Isolated</title><h1>Isolated</h1><script>addEventListener('load', () => { const a = new Int32Array(new SharedArrayBuffer(4)); Atomics.waitAsync(a, 0, 0, 150).value.then(() => { `+fmt.Sprintf(addLine, "Added after the wait")+` }); });</script>`)
	})
	// A page that sends itself on at load to a page served after 1.5 s.
	mux.HandleFunc("/bounce", func(w http.ResponseWriter, r *http.Request) {
		// A client-side redirect before load, as login and locale
		// pages make: the first document never loads.
		js := map[string]string{
			"inline":  `location.href = '/spa?from=inline'`,
			"replace": `location.replace('/spa?from=replace')`,
			"dcl":     `addEventListener('DOMContentLoaded', () => { location.href = '/spa?from=dcl'; })`,
			"timer":   `setTimeout(() => { location.href = '/spa?from=timer'; }, 0)`,
			"twice":   `location.href = '/bounce?when=inline'`,
			"stuck":   `location.href = '/stuck'`,
			"refused": `location.href = '` + r.URL.Query().Get("to") + `'`,
			"never":   `location.href = '/never/poll?doc'`,
		}[r.URL.Query().Get("when")]
		fmt.Fprintf(w, `<!doctype html><title>Bouncing</title><h1>Bouncing on</h1><script>%s</script><img src="/slowimg">`, js)
	})
	var posts atomic.Int32
	mux.HandleFunc("/order", func(w http.ResponseWriter, r *http.Request) {
		// A form, and its answer: to a POST, at once (mode=direct) or
		// by a redirect to a GET (mode=see), as a careful site does.
		switch {
		case r.Method == http.MethodPost && r.FormValue("mode") == "see":
			posts.Add(1)
			http.Redirect(w, r, "/order?done=1", http.StatusSeeOther)
		case r.Method == http.MethodPost:
			fmt.Fprintf(w, `<!doctype html><title>Ordered</title><h1>Order %d placed</h1>`, posts.Add(1))
		case r.URL.Query().Get("done") != "":
			fmt.Fprint(w, `<!doctype html><title>Ordered</title><h1>Order placed</h1>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Order</title><form method=post action="/order"><input type=hidden name=mode value="`+r.URL.Query().Get("mode")+`"><button id=buy>Buy</button></form>`)
		}
	})
	mux.HandleFunc("/idlelater", func(w http.ResponseWriter, r *http.Request) {
		// Quiet for 300 ms after load, then a fetch of 150 ms whose
		// answer it shows.
		fmt.Fprint(w, `<!doctype html><title>Idle, then busy</title><h1 id=app>Quiet a while</h1>
<script>addEventListener('load', () => setTimeout(() => fetch('/spa/data').then(r => r.text()).then(t => { document.getElementById('app').textContent = t; }), 300));</script>`)
	})
	mux.HandleFunc("/later", func(w http.ResponseWriter, r *http.Request) {
		// A redirect after load, from a timer of no delay its load
		// listener sets (which the settle's frames after load wait for).
		fmt.Fprintf(w, `<!doctype html><title>Later</title><h1>Going on soon</h1><script>addEventListener('load', () => setTimeout(() => { location.href = %q; }, 0))</script>`, r.URL.Query().Get("to"))
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		// A redirect loop that never ends; with slow, each hop's
		// answer takes 150 ms (an open's timeout ends it before it
		// has sent itself on 20 times).
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		slow := r.URL.Query().Get("slow")
		if slow != "" {
			time.Sleep(150 * time.Millisecond)
		}
		fmt.Fprintf(w, `<!doctype html><title>Loop %d</title><script>location.replace('/loop?slow=%s&n=%d')</script>`, n, slow, n+1)
	})
	mux.HandleFunc("/stuck", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Stuck</title><h1>Never loads</h1><img src="/never/poll?img">`)
	})
	mux.HandleFunc("/slowimg", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		w.Header().Set("Content-Type", "image/gif")
		w.Write(gif1x1)
	})
	mux.HandleFunc("/mover", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Mover</title><meta http-equiv="refresh" content="0;url=/latecomer"><h1>Moving on</h1>`)
	})
	mux.HandleFunc("/sendon", func(w http.ResponseWriter, r *http.Request) {
		// A page that sends itself on at load, to the shell that renders
		// from a fetch: by a meta refresh of 0, or by submitting a form
		// (as a single sign-on page posts its assertion).
		switch r.URL.Query().Get("how") {
		case "meta":
			fmt.Fprint(w, `<!doctype html><title>Sending on</title><meta http-equiv="refresh" content="0;url=/spa?from=meta"><h1>Sending on</h1>`)
		case "gone":
			fmt.Fprint(w, `<!doctype html><title>Sending on</title><meta http-equiv="refresh" content="0;url=/nosuch"><h1>Sending on</h1>`)
		case "loop":
			fmt.Fprint(w, `<!doctype html><title>Again</title><meta http-equiv="refresh" content="0"><h1>Again</h1>`)
		case "form":
			fmt.Fprint(w, `<!doctype html><title>Sending on</title><h1>Sending on</h1><form id=f method=post action="/spa?from=form"><input type=hidden name=token value=1></form>
<script>addEventListener('load', () => document.getElementById('f').submit())</script>`)
		}
	})
	mux.HandleFunc("/latecomer", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(1500 * time.Millisecond)
		fmt.Fprint(w, `<!doctype html><title>Latecomer</title><h1>Arrived late</h1>`)
	})
	mux.HandleFunc("/shadowscript", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Shadow script</title><h1>Host page</h1><div><template shadowrootmode="open"><p>shadow</p><script>%s</script></template></div>`,
			atLoad("Added from the shadow root"))
	})
	mux.HandleFunc("/shadowhandler", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Shadow handler</title><h1>Host page</h1><div><template shadowrootmode="open"><span><template shadowrootmode="open"><img alt="" src="/missing.png" onerror="%s"></template></span></template></div>`,
			atLoad("Added by a shadow handler"))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// observeText observes the tab with its text and headings.
func observeText(t *testing.T, s *tabs.Supervisor, name string) string {
	t.Helper()
	var text string
	err := s.Run(context.Background(), name, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		obs, err := tb.Observe(ctx, tabs.ObserveOptions{IncludeAll: true})
		if err != nil {
			return err
		}
		text = obs.Text()
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// TestOpenSettledSPA: with the default wait, the observation right after
// open has what an SPA shell renders from a fetch answered 150 ms after
// load; the slow document has its content and what it adds after load; a
// page that keeps changing its DOM for 120 ms after load is observed once
// it stopped, even when its main thread is busy for 150 ms in between or
// right after load (no mutation and no frame comes then: a renderer that
// does not run is no quiet page), or busy in slices of 5 ms for 200 ms
// (a main thread that leaves no idle time is no quiet page either), or
// of 8 ms chained through setTimeout (idle time only until the next
// slice's timer is due); what a page renders on the second
// animation frame after load, from a script it adds at load, or on the
// second frame after a load that came long after DOMContentLoaded (the
// quiet counted from there), is in the first observation. The page does not see the
// settle's binding.
func TestOpenSettledSPA(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	openOn(t, s, "warm", "/form")
	for _, c := range []struct{ wait, path, want string }{
		{"", "/spa", "Inventory: 42 widgets"},
		{"settled", "/spa", "Inventory: 42 widgets"},
		{"", "/slowdoc", "Ready now"},
		{"", "/ticks", "Counted to six"},
		{"", "/stall", "Counted to six"},
		{"", "/busyload", "Counted to six"},
		{"", "/slices", "Done in slices"},
		{"", "/timeslices", "Done in timer slices"},
		{"", "/raf", "Drawn on the second frame"},
		{"", "/late", "Rendered by the late script"},
		{"", "/framed", "Ready after the image"},
	} {
		name := strings.TrimPrefix(c.path, "/") + c.wait
		res, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: ps.URL + c.path, WaitUntil: c.wait})
		if err != nil {
			t.Fatalf("open %s (wait %q): %v", c.path, c.wait, err)
		}
		if len(res.Notes) != 0 {
			// Only on a machine so loaded that the 150 ms answer took
			// more than 500 ms.
			t.Logf("open %s: notes %q", c.path, res.Notes)
		}
		if text := observeText(t, s, name); c.want != "" && !strings.Contains(text, c.want) {
			t.Errorf("open %s (wait %q), then observe: %q does not have %q", c.path, c.wait, text, c.want)
		}
	}
	var seen string
	err := s.Run(context.Background(), "ticks", 10*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		v, err := tb.Evaluate(ctx, "typeof __tabpilotSettle + ' ' + Object.keys(window).filter(k => k.includes('tabpilot')).length", nil)
		seen = string(v)
		return err
	}))
	if err != nil || seen != `"undefined 0"` {
		t.Errorf("the page sees the settle binding: %s, %v", seen, err)
	}
	// The wait is named in the error of an unknown one.
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "bad", URL: ps.URL + "/spa", WaitUntil: "soon"}); errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "settled (the default)") {
		t.Errorf("open with wait soon: %v", err)
	}
	// Playwright's name of networkidle0 is taken.
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "pw", URL: ps.URL + "/spa", WaitUntil: "networkidle"}); err != nil {
		t.Errorf("open with wait networkidle: %v", err)
	}
}

// TestOpenSettledUnreadBody: a fetch whose body the page never reads is
// done for the settle once its whole body has come: the open returns
// without a note of a pending request (it waited for the settle's bound,
// 500 ms past load, and named the fetch as pending), and the observation
// has what the page did with the response.
func TestOpenSettledUnreadBody(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	openOn(t, s, "warm", "/form")
	for i := range 2 {
		name := fmt.Sprintf("unread%d", i)
		res, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: ps.URL + "/unread"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) != 0 {
			t.Errorf("open /unread: notes %q, want none", res.Notes)
		}
		if text := observeText(t, s, name); !strings.Contains(text, "Answered 200") {
			t.Errorf("open /unread, then observe: %q", text)
		}
	}
}

// TestOpenSettledNeverIdle: a page whose long poll and image never end
// returns with the default wait about 500 ms after load (networkidle2
// waited 5 s), with a note naming the pending requests; one whose main
// thread works in slices past the bound, with a note saying so.
func TestOpenSettledNeverIdle(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	openOn(t, s, "warm", "/form") // the browser's start is not the wait's
	start := time.Now()
	res, err := s.Open(context.Background(), tabs.OpenOptions{Name: "never", URL: ps.URL + "/never"})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// load + 500 ms + generous slack for a loaded 2-core machine.
	if took > 2500*time.Millisecond {
		t.Errorf("open of a never-idle page took %v, want about load + 500 ms", took)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "page not settled 500ms after load") ||
		!strings.Contains(res.Notes[0], ps.URL+"/never/poll") {
		t.Errorf("notes %q, want one naming /never/poll", res.Notes)
	}
	if text := observeText(t, s, "never"); !strings.Contains(text, "Live feed") {
		t.Errorf("observe: %q", text)
	}
	// A page that works in slices for 3 s: the note says its main thread
	// was not idle.
	res, err = s.Open(context.Background(), tabs.OpenOptions{Name: "spinning", URL: ps.URL + "/spinning"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "its main thread not idle") {
		t.Errorf("open /spinning: notes %q, want one saying its main thread was not idle", res.Notes)
	}
}

// TestOpenSettledRedirectPending: a page whose meta refresh sends it at
// load to a page its server answers after 1.5 s returns with a note that
// names the navigation it was still making, not "not settled (1
// pending)" of a request the page never made itself.
func TestOpenSettledRedirectPending(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	res, err := s.Open(context.Background(), tabs.OpenOptions{Name: "mover", URL: ps.URL + "/mover"})
	if err != nil {
		t.Fatal(err)
	}
	want := "500ms after load the page was still navigating to " + ps.URL + "/latecomer"
	if len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0], want) {
		t.Errorf("notes %q, want one starting %q", res.Notes, want)
	}
	// The open returns then, with the page the tab shows, not once the
	// server answered (Chromium holds every call to the page until then).
	if res.URL != ps.URL+"/mover" || res.Title != "Mover" {
		t.Errorf("open returned %s %q, want the page that was still sending itself on: /mover \"Mover\"", res.URL, res.Title)
	}
	// A reload of it waits the same way, from the page's events: asking
	// the page whether it loaded would be held until the latecomer
	// answered (it said "had not fired load within 5s").
	var rres *tabs.NavResult
	err = s.Run(context.Background(), "mover", 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		rres, err = tb.Reload(ctx)
		return err
	}))
	if err != nil || rres.URL != ps.URL+"/mover" || len(rres.Notes) != 1 || !strings.HasPrefix(rres.Notes[0], want) {
		t.Errorf("reload: %+v, %v; want /mover with one note starting %q", rres, err, want)
	}
	// A click on a link to it waits the same way, and says the same.
	var cres *tabs.ActionResult
	err = s.Run(context.Background(), "mover", 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Goto(ctx, ps.URL+"/static", "load"); err != nil {
			return err
		}
		if _, err := tb.Evaluate(ctx, `() => { const a = document.createElement('a'); a.id = 'mv'; a.href = '/mover'; a.textContent = 'Mover'; document.body.prepend(a); }`, nil); err != nil {
			return err
		}
		var err error
		cres, err = tb.Click(ctx, tabs.Target{Selector: "#mv"})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !cres.Navigated || !strings.HasPrefix(cres.Note, want) {
		t.Errorf("click on a link to the page: %+v, want navigated with a note starting %q", cres, want)
	}
}

// TestSettleWaitsForSendOn: a page that sends itself on at load (a meta
// refresh of 0, a form it submits) is followed, by open and by a click on
// a link to it, to the page it goes to, settled: the settle holds while a
// navigation the page asked for is in flight, instead of ending on the
// first page's quiet. One that never stops (a meta refresh to itself) is
// returned after 20 such pages, saying so.
func TestSettleWaitsForSendOn(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	res, err := s.Open(context.Background(), tabs.OpenOptions{Name: "loop", URL: ps.URL + "/sendon?how=loop"})
	if err != nil {
		t.Fatalf("open /sendon?how=loop: %v", err)
	}
	if want := "the page kept sending itself on at load (20 times, the last to " + ps.URL + "/sendon?how=loop)"; len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0], want) {
		t.Errorf("open /sendon?how=loop: notes %q, want one starting %q", res.Notes, want)
	}
	// Reading the looping tab fails, when it does, saying the page was
	// navigating, never as a script of the caller's or an internal error.
	for i := range 2 {
		err := s.Run(context.Background(), "loop", 3*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			if i == 0 {
				_, err := tb.Screenshot(ctx, tabs.ScreenshotOptions{})
				return err
			}
			_, err := tb.Extract(ctx, "markdown")
			return err
		}))
		var e *pagecore.Error
		switch {
		case err == nil:
		case errcode.Of(err) == errcode.Timeout:
			if !strings.Contains(err.Error(), "the page keeps sending itself on") {
				t.Errorf("read #%d of the looping tab: %v; want its timeout to say the page keeps sending itself on", i, err)
			}
		case !errors.As(err, &e) || e.Code != errcode.ScriptError || e.Hint != pagecore.NavigatedHint:
			t.Errorf("read #%d of the looping tab: %v (%s); want success, a timeout naming the loop, or script_error saying it navigated", i, err, errcode.Of(err))
		}
	}
	// The result's status is the page the settle followed to's.
	res, err = s.Open(context.Background(), tabs.OpenOptions{Name: "gone", URL: ps.URL + "/sendon?how=gone"})
	if err != nil || res.URL != ps.URL+"/nosuch" || res.Status != http.StatusNotFound {
		t.Errorf("open /sendon?how=gone: %+v, %v; want /nosuch with status 404", res, err)
	}
	// And a tab that opened many pages still knows its page's status.
	for i := range 20 {
		res, err = s.Open(context.Background(), tabs.OpenOptions{Name: "gone", URL: fmt.Sprintf("%s/static?%d", ps.URL, i)})
		if err != nil || res.Status != http.StatusOK {
			t.Fatalf("open #%d of /static in one tab: %+v, %v; want status 200", i, res, err)
		}
	}
	for _, how := range []string{"meta", "form"} {
		want := ps.URL + "/spa?from=" + how
		res, err := s.Open(context.Background(), tabs.OpenOptions{Name: how, URL: ps.URL + "/sendon?how=" + how})
		if err != nil {
			t.Fatalf("open /sendon?how=%s: %v", how, err)
		}
		if res.URL != want || len(res.Notes) != 0 {
			t.Errorf("open /sendon?how=%s: url %s, notes %q; want %s, no notes", how, res.URL, res.Notes, want)
		}
		if text := observeText(t, s, how); !strings.Contains(text, "Inventory: 42 widgets") {
			t.Errorf("open /sendon?how=%s, then observe: %q, want the settled page", how, text)
		}
		var cres *tabs.ActionResult
		err = s.Run(context.Background(), how, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			if _, err := tb.Goto(ctx, ps.URL+"/static", "load"); err != nil {
				return err
			}
			if _, err := tb.Evaluate(ctx, `(how) => { const a = document.createElement('a'); a.id = 'on'; a.href = '/sendon?how=' + how; a.textContent = 'On'; document.body.prepend(a); }`, []any{how}); err != nil {
				return err
			}
			var err error
			cres, err = tb.Click(ctx, tabs.Target{Selector: "#on"})
			return err
		}))
		if err != nil {
			t.Fatalf("click to /sendon?how=%s: %v", how, err)
		}
		if !cres.Navigated || cres.Note != "" {
			t.Errorf("click to /sendon?how=%s: %+v, want navigated, no note", how, cres)
		}
		if text := observeText(t, s, how); !strings.Contains(text, "Inventory: 42 widgets") || !strings.Contains(text, want) {
			t.Errorf("click to /sendon?how=%s, then observe: %q, want the settled page at %s", how, text, want)
		}
	}
}

// TestPopupFirstUseSettles: the first run on a popup (an observation
// right after the click that opened it) finds its page settled, as after
// an open: the shell's fetched content is there, for a popup opened by
// window.open (held until its tab is set up) and by a target=_blank link.
func TestPopupFirstUseSettles(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	for _, how := range []string{"window.open", "link"} {
		name := "op-" + strings.ReplaceAll(how, ".", "")
		if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: ps.URL + "/static", WaitUntil: "load"}); err != nil {
			t.Fatal(err)
		}
		var pop string
		err := s.Run(context.Background(), name, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			if _, err := tb.Evaluate(ctx, `(how) => {
  const el = document.createElement(how === 'link' ? 'a' : 'button');
  el.id = 'pop'; el.textContent = 'Pop';
  if (how === 'link') { el.href = '/spa?popup'; el.target = '_blank'; } else { el.onclick = () => window.open('/spa?popup', 'p', 'width=500,height=400'); }
  document.body.prepend(el);
}`, []any{how}); err != nil {
				return err
			}
			w := tb.WatchPopups()
			if _, err := tb.Click(ctx, tabs.Target{Selector: "#pop"}); err != nil {
				return err
			}
			p, err := w.Wait(ctx)
			if err == nil {
				pop = p.Name
			}
			return err
		}))
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if text := observeText(t, s, pop); !strings.Contains(text, "Inventory: 42 widgets") {
			t.Errorf("%s: the popup's first observation: %q, want its fetched content", how, text)
		}
	}
}

// TestClickIntoRedirectLoop: a click on a link to a page that sends
// itself on forever before it loads returns after 20 redirects, not after
// the 5 s the wait for the new page allows, with a note saying so, and
// the chain ends there: the tab is quiet, and the next open gets its page.
func TestClickIntoRedirectLoop(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "c", URL: ps.URL + "/static?before=loop", Timeout: 8 * time.Second}); err != nil {
		t.Fatal(err)
	}
	var res *tabs.ActionResult
	start := time.Now()
	err := s.Run(context.Background(), "c", 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Evaluate(ctx, `document.body.insertAdjacentHTML('afterbegin', '<a id=go href="/loop">Go round</a>')`, nil); err != nil {
			return err
		}
		var err error
		res, err = tb.Click(ctx, tabs.Target{Selector: "#go"})
		return err
	}))
	d := time.Since(start)
	if err != nil || res == nil || !res.Navigated || !strings.Contains(res.Note, "sent itself on more than 20 times") {
		t.Fatalf("click a link to a redirect loop: %v, %+v; want navigated with a note on more than 20 redirects", err, res)
	}
	if d > 4*time.Second {
		t.Errorf("the click returned after %v, want before the 5 s wait for the new page", d.Round(time.Millisecond))
	}
	u1 := evalOn(t, s, "c", "location.href")
	if time.Sleep(300 * time.Millisecond); evalOn(t, s, "c", "location.href") != u1 {
		t.Errorf("the redirect loop still runs after the click (it was at %s)", u1)
	}
	want := ps.URL + "/static?after=click"
	if res, err := s.Open(context.Background(), tabs.OpenOptions{Name: "c", URL: want, Timeout: 8 * time.Second}); err != nil || res.URL != want {
		t.Errorf("open %s after the loop: %v, %+v", want, err, res)
	}
}

// TestOpenFollowsClientRedirect: a page that navigates itself before its
// load event (location.href in an inline script, location.replace, at
// DOMContentLoaded, in a timer, or to another such page) is followed to
// the page it goes to, under every wait: the open returns that page,
// settled, instead of waiting out its timeout for a load the first
// document never fires. So does a click on a link to it. A page that
// never loads times out naming the redirect and the request holding it.
func TestOpenFollowsClientRedirect(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	openOn(t, s, "warm", "/form")
	for _, c := range []struct{ when, wait string }{
		{"inline", ""}, {"replace", ""}, {"dcl", ""}, {"timer", ""}, {"twice", ""},
		{"inline", "load"}, {"inline", "domcontentloaded"}, {"inline", "networkidle0"},
	} {
		name := c.when + c.wait
		res, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: ps.URL + "/bounce?when=" + c.when, WaitUntil: c.wait, Timeout: 8 * time.Second})
		if err != nil {
			t.Errorf("open /bounce?when=%s (wait %q): %v", c.when, c.wait, err)
			continue
		}
		from := c.when
		if from == "twice" {
			from = "inline"
		}
		if want := ps.URL + "/spa?from=" + from; res.URL != want {
			t.Errorf("open /bounce?when=%s (wait %q): url %s, want %s", c.when, c.wait, res.URL, want)
		}
		if c.wait == "" {
			if text := observeText(t, s, name); !strings.Contains(text, "Inventory: 42 widgets") {
				t.Errorf("open /bounce?when=%s, then observe: %q, want the settled page", c.when, text)
			}
		}
	}
	// A redirect to a server that refuses the connection fails as an
	// open of that URL does.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	_, err = s.Open(context.Background(), tabs.OpenOptions{Name: "refused", URL: ps.URL + "/bounce?when=refused&to=" + url.QueryEscape(refused), Timeout: 8 * time.Second})
	if want := "that navigation failed: " + refused + ": net::ERR_CONNECTION_REFUSED"; errcode.Of(err) != errcode.NavigationFailed || !strings.Contains(err.Error(), want) {
		t.Errorf("open of a page that redirects to a refused port: %v, want navigation_failed with %q", err, want)
	}
	// So does one from a timer after load, under the settled wait, and
	// an inline one under domcontentloaded.
	for _, c := range []struct{ name, path, wait string }{
		{"later", "/later?to=" + url.QueryEscape(refused), ""},
		{"dcl", "/bounce?when=refused&to=" + url.QueryEscape(refused), "domcontentloaded"},
	} {
		_, err = s.Open(context.Background(), tabs.OpenOptions{Name: "refused", URL: ps.URL + c.path, WaitUntil: c.wait, Timeout: 8 * time.Second})
		if errcode.Of(err) != errcode.NavigationFailed || !strings.Contains(err.Error(), "net::ERR_CONNECTION_REFUSED") {
			t.Errorf("open %s (wait %q), which sends itself to a refused port: %v, want navigation_failed", c.path, c.wait, err)
		}
	}
	// A redirect loop still running on the tab's page never passes for
	// the page an open asks for: the open returns that page, or fails.
	for i := range 4 {
		// (Or navigation_failed, when the loop the last round left
		// running took over from this open.)
		if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "loop", URL: ps.URL + "/loop?slow=1", WaitUntil: "load", Timeout: time.Second}); errcode.Of(err) != errcode.Timeout && errcode.Of(err) != errcode.NavigationFailed {
			t.Fatalf("open of a redirect loop: %v, want a timeout", err)
		}
		want := fmt.Sprintf("%s/static?after=%d", ps.URL, i)
		res, err := s.Open(context.Background(), tabs.OpenOptions{Name: "loop", URL: want, Timeout: 8 * time.Second})
		switch {
		case err == nil && res.URL != want:
			t.Errorf("open %s after a redirect loop: succeeded with %s", want, res.URL)
		case err != nil && errcode.Of(err) != errcode.NavigationFailed:
			t.Errorf("open %s after a redirect loop: %v, want the page or navigation_failed", want, err)
		case err != nil:
			t.Logf("open %s after a redirect loop: %v", want, err)
		}
	}
	// A loop that runs fast fails after 20 redirects, not at the
	// timeout, and ends there: the tab stays on the loop's last page,
	// and the next open in the tab gets its page.
	for i := range 3 {
		start := time.Now()
		_, err = s.Open(context.Background(), tabs.OpenOptions{Name: "fastloop", URL: ps.URL + "/loop", Timeout: 20 * time.Second})
		if want := "the page sent itself on more than 20 times before any page loaded"; errcode.Of(err) != errcode.NavigationFailed || !strings.Contains(err.Error(), want) {
			t.Errorf("open of a redirect loop: %v, want navigation_failed with %q", err, want)
		} else if d := time.Since(start); d > 10*time.Second {
			t.Errorf("open of a redirect loop failed after %v, want well before its 20 s timeout", d.Round(time.Millisecond))
		}
		u1 := evalOn(t, s, "fastloop", "location.href")
		if time.Sleep(300 * time.Millisecond); evalOn(t, s, "fastloop", "location.href") != u1 {
			t.Errorf("the redirect loop still runs after the open failed (it was at %s)", u1)
		}
		want := fmt.Sprintf("%s/static?after=loop%d", ps.URL, i)
		if res, err := s.Open(context.Background(), tabs.OpenOptions{Name: "fastloop", URL: want, Timeout: 8 * time.Second}); err != nil || res.URL != want {
			t.Errorf("open %s after the loop ended: %v, %+v", want, err, res)
		}
	}
	// One to a server that never answers names it.
	_, err = s.Open(context.Background(), tabs.OpenOptions{Name: "never", URL: ps.URL + "/bounce?when=never", Timeout: 2 * time.Second})
	if want := "the page sent itself on to " + ps.URL + "/never/poll?doc, which has not answered"; errcode.Of(err) != errcode.Timeout || !strings.Contains(err.Error(), want) {
		t.Errorf("open of a page that redirects to a server that never answers: %v, want a timeout with %q", err, want)
	}
	// A document that never loads: the timeout names what holds it.
	_, err = s.Open(context.Background(), tabs.OpenOptions{Name: "stuck", URL: ps.URL + "/bounce?when=stuck", Timeout: 2 * time.Second})
	if want := "(after 1 client-side redirect(s), the last to " + ps.URL + "/stuck); 1 request(s) still loading: " + ps.URL + "/never/poll?img"; errcode.Of(err) != errcode.Timeout || !strings.Contains(err.Error(), want) {
		t.Errorf("open of a page that never loads: %v, want a timeout with %q", err, want)
	}
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "click", URL: ps.URL + "/static"}); err != nil {
		t.Fatal(err)
	}
	var res *tabs.ActionResult
	err = s.Run(context.Background(), "click", 10*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Evaluate(ctx, `() => { const a = document.createElement('a'); a.id = 'bounce'; a.href = '/bounce?when=inline'; a.textContent = 'Bounce'; document.body.prepend(a); }`, nil); err != nil {
			return err
		}
		var err error
		res, err = tb.Click(ctx, tabs.Target{Selector: "#bounce"})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Navigated || res.Note != "" {
		t.Errorf("click on a link to a bouncing page: %+v, want navigated without a note", res)
	}
	if text := observeText(t, s, "click"); !strings.Contains(text, "Inventory: 42 widgets") {
		t.Errorf("click on a link to a bouncing page, then observe: %q", text)
	}
}

// TestOpenNetworkIdle: networkidle0 and networkidle2 end once at most 0
// or 2 of the page's requests have been in flight for 500 ms past load,
// counted by tabpilot (Chromium's own networkIdle lifecycle event, which
// the wait took before, came about a second after load on a page with
// nothing in flight): a fetch 300 ms after load is waited for, and a
// page that never idles ends at the 5 s cap with a note naming its
// requests.
func TestOpenNetworkIdle(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	openOn(t, s, "warm", "/form")
	for _, wait := range []string{"networkidle0", "networkidle2"} {
		res, err := s.Open(context.Background(), tabs.OpenOptions{Name: wait, URL: ps.URL + "/idlelater", WaitUntil: wait})
		if err != nil {
			t.Fatalf("open with %s: %v", wait, err)
		}
		if len(res.Notes) != 0 {
			t.Errorf("open with %s: notes %q, want none", wait, res.Notes)
		}
		// (networkidle2 lets two requests be in flight: only 0 waits
		// for the fetch's answer.)
		if text := observeText(t, s, wait); wait == "networkidle0" && !strings.Contains(text, "Inventory: 42 widgets") {
			t.Errorf("open with %s, then observe: %q, want the fetched text", wait, text)
		}
	}
	// A page that never idles still ends at the cap, naming its requests.
	res, err := s.Open(context.Background(), tabs.OpenOptions{Name: "never", URL: ps.URL + "/never", WaitUntil: "networkidle0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "network not idle after 5s past load (the cap on the wait; 3 pending: "+ps.URL+"/never/img") {
		t.Errorf("open of a never idle page with networkidle0: notes %q", res.Notes)
	}
}

// TestOpenWithWorkers: a page that starts dedicated workers settles, and
// idles, as one without: Chromium reports a worker's script to the page's
// session as it starts and only to the worker's target as it ends, and the
// waits counted it in flight until their caps (500 ms past load, with a
// note naming the script; 5 s for networkidle0).
func TestOpenWithWorkers(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	openOn(t, s, "warm", "/form")
	for _, wait := range []string{"", "networkidle0", "networkidle2"} {
		name := "workers-" + wait
		res, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: ps.URL + "/viaworker", WaitUntil: wait})
		if err != nil {
			t.Fatalf("open with %q: %v", wait, err)
		}
		if len(res.Notes) != 0 {
			t.Errorf("open with %q: notes %q, want none", wait, res.Notes)
		}
	}
	// The workers ran.
	said := evalOn(t, s, "workers-", `new Promise((r) => { const f = () => document.getElementById('said').textContent.split('said').length > 3 ? r(document.getElementById('said').textContent) : setTimeout(f, 10); f(); })`)
	if !strings.Contains(said, "said 1") || !strings.Contains(said, "said 3") {
		t.Errorf("the workers said %q", said)
	}
}

// TestNavigatingActionSettles: a click on a link, and Enter in a form,
// that navigate to a page served after 300 ms whose content comes from a
// fetch after load return with that page settled: the observation right
// after has its content.
func TestNavigatingActionSettles(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	for _, act := range []string{"click", "press", "type", "type-on"} {
		if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: act, URL: ps.URL + "/start", WaitUntil: "load"}); err != nil {
			t.Fatal(err)
		}
		var res *tabs.ActionResult
		err := s.Run(context.Background(), act, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			var err error
			switch act {
			case "click":
				res, err = tb.Click(ctx, tabs.Target{Selector: "#go"})
			case "press":
				res, err = tb.Press(ctx, "Enter", &tabs.Target{Selector: "#q"})
			case "type-on":
				// What follows the newline would go to a page on its
				// way out: it is not typed, and the result says so.
				res, err = tb.Type(ctx, tabs.Target{Selector: "#q"}, "ab\ncd")
			default:
				// A newline typed is Enter: it submits the form.
				res, err = tb.Type(ctx, tabs.Target{Selector: "#q"}, "\n")
			}
			return err
		}))
		if err != nil {
			t.Fatalf("%s: %v", act, err)
		}
		switch {
		case act == "type-on":
			if want := "the Enter of a newline started a navigation, so the 2 characters after it were not typed"; !res.Navigated || res.Skipped != 2 || res.Note != want {
				t.Errorf("%s: %+v, want navigated, 2 skipped, note %q", act, res, want)
			}
		case !res.Navigated || res.Note != "":
			t.Errorf("%s: %+v, want navigated without a note", act, res)
		}
		if text := observeText(t, s, act); !strings.Contains(text, "Inventory: 42 widgets") || !strings.Contains(text, "Target") {
			t.Errorf("%s, then observe: %q, want the target page with its fetched content", act, text)
		}
	}
}

// TestBackByClickSettles: a click that goes back (history.back(), maybe
// from the back/forward cache, which fires no load again) returns with
// the previous page, without waiting out the wait for a load.
func TestBackByClickSettles(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "back", URL: ps.URL + "/start", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	var res *tabs.ActionResult
	err := s.Run(context.Background(), "back", 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#go"}); err != nil {
			return err
		}
		if _, err := tb.Evaluate(ctx, `() => { const b = document.createElement('button'); b.id = 'back'; b.textContent = 'Back'; b.onclick = () => history.back(); document.body.append(b); }`, nil); err != nil {
			return err
		}
		var err error
		res, err = tb.Click(ctx, tabs.Target{Selector: "#back"})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Navigated || res.Note != "" {
		t.Errorf("click on back: %+v, want navigated without a note", res)
	}
	if text := observeText(t, s, "back"); !strings.Contains(text, `page "Start"`) {
		t.Errorf("observe after back: %q", text)
	}
}

// TestReloadSettles: a reload of an SPA shell returns with the content it
// fetches after load.
func TestReloadSettles(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: "reload-spa", URL: ps.URL + "/spa", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), "reload-spa", false, 0) })
	var text string
	err := sup.Run(context.Background(), "reload-spa", 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Reload(ctx); err != nil {
			return err
		}
		v, err := tb.Evaluate(ctx, `() => document.getElementById('app').textContent`, nil)
		text = string(v)
		return err
	}))
	if err != nil || text != `"Inventory: 42 widgets"` {
		t.Errorf("reload, then the heading: %s, %v", text, err)
	}
}

// TestReloadOfAPost: a reload of the answer to a form's POST sends the
// form again, as Page.reload does (a browser asks first), and says so;
// one of the page a 303 redirect gave after the POST (a GET) sends
// nothing again, and says nothing.
func TestReloadOfAPost(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	for _, mode := range []string{"direct", "see"} {
		if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: mode, URL: ps.URL + "/order?mode=" + mode}); err != nil {
			t.Fatal(err)
		}
		var res *tabs.NavResult
		err := s.Run(context.Background(), mode, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			if _, err := tb.Click(ctx, tabs.Target{Selector: "#buy"}); err != nil {
				return err
			}
			var err error
			res, err = tb.Reload(ctx)
			return err
		}))
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		want := []string(nil)
		if mode == "direct" {
			want = []string{"the page was the answer to a form sent with POST: the reload sent the form again"}
		}
		if !slices.Equal(res.Notes, want) {
			t.Errorf("%s: reload notes %q, want %q", mode, res.Notes, want)
		}
		if text := observeText(t, s, mode); mode == "direct" && !strings.Contains(text, "Order 2 placed") {
			t.Errorf("reload of the POST's answer, then observe: %q, want the second order", text)
		}
	}
}

// TestOpenSettledCrossSiteFrames: the document requests of cross-site
// iframes (in the HTML and added at load), which end in the sessions of
// their own processes, do not hold the settle to its limit.
func TestOpenSettledCrossSiteFrames(t *testing.T) {
	t.Parallel()
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p>inner</p>`)
	}))
	t.Cleanup(inner.Close)
	iu := strings.Replace(inner.URL, "127.0.0.1", "localhost", 1)
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Frames</title><iframe src="%s/a"></iframe>
<script>addEventListener('load', () => { const f = document.createElement('iframe'); f.src = '%s/b'; document.body.append(f); })</script>`, iu, iu)
	}))
	t.Cleanup(outer.Close)
	name := "settle-frames"
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	for i := range 2 {
		res, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: fmt.Sprintf("%s/?%d", outer.URL, i)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) != 0 {
			t.Errorf("open %d: notes %q, want none", i, res.Notes)
		}
	}
}

// TestOpenAttachesCrossSiteFrameEarly: the observation's session of a
// cross-site iframe is attached while the page loads, as the iframe
// starts (with stealth, once its patches let it run), not at the page's
// load or by the first observation. The iframe is added at
// DOMContentLoaded (a preparation then could not find it), and its image,
// which holds the page's load, is answered only once the tab holds the
// iframe's session, or after 10 s: a session that came only at load (or
// later) shows as the image answered by the deadline.
func TestOpenAttachesCrossSiteFrameEarly(t *testing.T) {
	t.Parallel()
	var cur struct {
		sync.Mutex
		sup       *tabs.Supervisor
		name, why string
	}
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/img" {
			fmt.Fprint(w, `<!doctype html><button>Inner</button><img src="/img">`)
			return
		}
		cur.Lock()
		s, name := cur.sup, cur.name
		cur.Unlock()
		why := "deadline"
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if tb, err := s.Tab(name); err == nil && tb.AttachedFrames() > 0 {
				why = "attached"
				break
			}
		}
		cur.Lock()
		cur.why = why
		cur.Unlock()
		w.Header().Set("Content-Type", "image/gif")
		w.Write(gif1x1)
	}))
	t.Cleanup(inner.Close)
	iu := strings.Replace(inner.URL, "127.0.0.1", "localhost", 1)
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/blank" {
			fmt.Fprint(w, `<!doctype html><title>Blank</title>`)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Late frame</title><p>outer</p>
<script>addEventListener('DOMContentLoaded', () => { const f = document.createElement('iframe'); f.src = '%s/'; document.body.append(f); })</script>`, iu)
	}))
	t.Cleanup(outer.Close)
	// Without stealth, the auto-attach reports the iframe before its
	// navigation commits, when Target.getTargets does not list it yet:
	// the session is attached at the commit (Target.targetInfoChanged);
	// attached only at the attach, it came at the page's load in about 1
	// run in 5 under load.
	for _, c := range []struct {
		name string
		sup  *tabs.Supervisor
	}{{"stealth", sup}, {"no stealth", newSupWith(t, func(o *tabs.Options) { o.NoStealth = true })}} {
		name := "early-frame-" + strings.ReplaceAll(c.name, " ", "-")
		t.Cleanup(func() { c.sup.Close(context.Background(), name, false, 0) })
		if _, err := c.sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: outer.URL + "/blank"}); err != nil {
			t.Fatal(err)
		}
		cur.Lock()
		cur.sup, cur.name, cur.why = c.sup, name, ""
		cur.Unlock()
		if _, err := c.sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: outer.URL}); err != nil {
			t.Fatal(err)
		}
		cur.Lock()
		why := cur.why
		cur.Unlock()
		var attached int
		var text string
		err := c.sup.Run(context.Background(), name, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			attached = tb.AttachedFrames()
			obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
			if err != nil {
				return err
			}
			text = obs.Text()
			return nil
		}))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if why != "attached" || attached != 1 {
			t.Errorf("%s: the iframe's image was answered by the %s, %d out-of-process iframes attached when open returned; want the session attached before the page's load", c.name, why, attached)
		}
		if !strings.Contains(text, "1 [Inner] @f1\n") {
			t.Errorf("%s: the iframe's button is not in the observation:\n%s", c.name, text)
		}
	}
}

// TestRequestsOfTheOldPageEndWithIt: requests a page had in flight when
// the tab moved to another page are not the new page's: a networkidle
// wait on the new, static page returns after its quiet window, and a
// settled open of it has no note of them.
func TestRequestsOfTheOldPageEndWithIt(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/poll":
			select { // answered only when the test ends
			case <-release:
			case <-r.Context().Done():
			}
		case "/polling":
			// The polls go to localhost, so that they do not take the
			// connections 127.0.0.1's next page needs.
			fmt.Fprintf(w, `<!doctype html><title>Polling</title><h1>Live</h1>
<script>setInterval(() => fetch('%s/poll?' + Date.now(), {mode: 'no-cors'}), 50);</script>`, strings.Replace("http://"+r.Host, "127.0.0.1", "localhost", 1))
		default:
			fmt.Fprint(w, `<!doctype html><title>Static</title><h1>Static</h1>`)
		}
	}))
	name := "old-requests"
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: base + "/polling", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	time.Sleep(300 * time.Millisecond) // a few polls in flight
	res, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: base + "/static"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 0 {
		t.Errorf("open of the static page: notes %q, want none", res.Notes)
	}
	var waited time.Duration
	err = sup.Run(context.Background(), name, 10*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		start := time.Now()
		err := tb.WaitForLoadState(ctx, "networkidle", 0)
		waited = time.Since(start)
		return err
	}))
	if err != nil || waited > 2*time.Second {
		t.Errorf("networkidle on the static page: %v after %v, want nil within the quiet window", err, waited)
	}
}

// TestRouteChangeSettles: a click or a key press that changes a
// single-page app's route (history.pushState, then a fetch that renders
// the view) returns once the view is rendered, as a navigating click
// does, so the observation after it shows the new view; an iframe's own
// pushState is not the tab's URL.
func TestRouteChangeSettles(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "app", URL: ps.URL + "/app"}); err != nil {
		t.Fatal(err)
	}
	if tb, err := s.Tab("app"); err != nil || tb.KnownURL() != ps.URL+"/app" {
		t.Fatalf("after open: the tab's URL is %q (%v), want %q", tb.KnownURL(), err, ps.URL+"/app")
	}
	for _, c := range []struct{ act, want string }{
		{"click", "/app/inbox: Inventory: 42 widgets"},
		{"press", "/app/search: Inventory: 42 widgets"},
		{"type", "/app/search: Inventory: 42 widgets"},
	} {
		var res *tabs.ActionResult
		var known string
		err := s.Run(context.Background(), "app", 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			var err error
			switch c.act {
			case "click":
				res, err = tb.Click(ctx, tabs.Target{Selector: "#inbox"})
			case "press":
				res, err = tb.Press(ctx, "Enter", &tabs.Target{Selector: "#search"})
			default:
				// Enter typed as a newline, with nothing else: the
				// field stays empty, and that is no failure.
				res, err = tb.Type(ctx, tabs.Target{Selector: "#search"}, "\n")
			}
			known = tb.KnownURL()
			return err
		}))
		if err != nil {
			t.Fatalf("%s: %v", c.act, err)
		}
		if res.Navigated || res.Note != "" {
			t.Errorf("%s: %+v, want no navigation and no note", c.act, res)
		}
		if text := observeText(t, s, "app"); !strings.Contains(text, c.want) {
			t.Errorf("%s, then observe: %q, want the view %q", c.act, text, c.want)
		}
		if want := ps.URL + strings.SplitN(c.want, ":", 2)[0]; known != want {
			t.Errorf("%s: the tab's URL is %q, want %q", c.act, known, want)
		}
	}
}

// TestHistorySettles: back and forward between a single-page app's
// history entries (popstate, which renders each from a fetch) and back to
// a page the back/forward cache restores (pageshow, which refreshes it
// from a fetch) wait as a route change does, so the observation right
// after has the view the page rendered for it.
func TestHistorySettles(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	s := newSup(t)
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "router", URL: ps.URL + "/router"}); err != nil {
		t.Fatal(err)
	}
	step := func(what string, do func(ctx context.Context, tb *tabs.Tab) error, want string) {
		t.Helper()
		if err := s.Run(context.Background(), "router", 30*time.Second, tabs.JobFunc(do)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if text := observeText(t, s, "router"); !strings.Contains(text, want) {
			t.Errorf("%s, then observe: %q, want %q", what, text, want)
		}
	}
	click := func(sel string) func(ctx context.Context, tb *tabs.Tab) error {
		return func(ctx context.Context, tb *tabs.Tab) error {
			_, err := tb.Click(ctx, tabs.Target{Selector: sel})
			return err
		}
	}
	back := func(ctx context.Context, tb *tabs.Tab) error {
		res, err := tb.Back(ctx)
		if err == nil && len(res.Notes) != 0 {
			t.Errorf("back: notes %q", res.Notes)
		}
		return err
	}
	forward := func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Forward(ctx)
		return err
	}
	step("click route A", click("#ra"), "View /router/a: Inventory: 42 widgets")
	step("click route B", click("#rb"), "View /router/b: Inventory: 42 widgets")
	step("back", back, "View /router/a: Inventory: 42 widgets")
	step("forward", forward, "View /router/b: Inventory: 42 widgets")

	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "router", URL: ps.URL + "/cached"}); err != nil {
		t.Fatal(err)
	}
	step("away", click("#away"), `page "Static"`)
	// "Restored" shows only when the cache restored the page (pageshow
	// persisted); a page loaded again would show "First visit".
	step("back to the cached page", back, "Restored: Inventory: 42 widgets")
}

// settleLog keeps the "settled" debug records of a supervisor's logger:
// their tab and whether the wait found a document without scripts
// (static) or with nothing scheduled (untimed).
type settleLog struct {
	mu              sync.Mutex
	static, untimed map[string]bool
}

func (l *settleLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *settleLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *settleLog) WithGroup(string) slog.Handler            { return l }
func (l *settleLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "settled" {
		return nil
	}
	var tab string
	static, untimed := false, false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "tab":
			tab = a.Value.String()
		case "static":
			static = a.Value.Bool()
		case "untimed":
			untimed = a.Value.Bool()
		}
		return true
	})
	l.mu.Lock()
	l.static[tab], l.untimed[tab] = static, untimed
	l.mu.Unlock()
	return nil
}

// open opens base+path in the tab named path without its slash, and
// returns the observation's text and what the settle's debug log said of
// that tab: settled as a document without scripts, as one with nothing
// scheduled, and whether it said anything.
func (l *settleLog) open(t *testing.T, s *tabs.Supervisor, base, path string) (text string, static, untimed, logged bool) {
	t.Helper()
	name := strings.TrimPrefix(path, "/")
	res, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: base + path})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if len(res.Notes) != 0 {
		t.Logf("open %s: notes %q", path, res.Notes)
	}
	text = observeText(t, s, name)
	l.mu.Lock()
	defer l.mu.Unlock()
	static, logged = l.static[name]
	return text, static, l.untimed[name], logged
}

// TestOpenSettledUntimed: a page with scripts that schedules nothing is
// settled once the renderer is idle after the first frame past load,
// without the settle's window (the debug log says so, for one of three
// opens); pages that add a
// line after load by what they schedule or wait for (a timer of no
// delay, an animation frame, an idle callback, an image, a style sheet,
// the end of a CSS animation in the document or a shadow root, an SVG
// animation element's event, a view transition's end, Atomics.waitAsync's
// timeout) are waited for as before, and
// observed with what they add when the usual settle sees it.
func TestOpenSettledUntimed(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	log := &settleLog{static: map[string]bool{}, untimed: map[string]bool{}}
	s := newSupWith(t, func(o *tabs.Options) { o.Logger = slog.New(log) })
	openOn(t, s, "warm", "/form")
	// The fast path ends the settle once the renderer goes idle after the
	// first frame past load; on a machine so loaded that no idle moment
	// comes before the usual settle's 50 ms, that one ends it first. So
	// /inline is opened up to three times, and one fast settle is enough.
	for i := range 3 {
		name := fmt.Sprintf("inline%d", i)
		if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: ps.URL + "/inline"}); err != nil {
			t.Fatal(err)
		}
		if text := observeText(t, s, name); !strings.Contains(text, "Rendered inline") {
			t.Errorf("open /inline, then observe: %q", text)
		}
		log.mu.Lock()
		untimed := log.untimed[name]
		log.mu.Unlock()
		if untimed {
			break
		}
		if i == 2 {
			t.Errorf("open /inline: settled with nothing scheduled in none of 3 opens")
		}
	}
	for _, c := range []struct {
		path, want string
		untimed    bool
	}{
		{"/viatimer", "Added by a timer", false},
		{"/viaframe", "Added in a frame", false},
		{"/viaidle", "Added when idle", false},
		{"/viaimage", "", false},
		{"/viaanimation", "", false},
		{"/viasheet", "", false},
		{"/viapreload", "", false},
		{"/viashadowanimation", "", false},
		{"/viasmil", "", false},
		{"/viatransition", "", false},
		{"/viaisolated", "", false},
		{"/spa", "Inventory: 42 widgets", false},
	} {
		text, static, untimed, _ := log.open(t, s, ps.URL, c.path)
		if !strings.Contains(text, c.want) {
			t.Errorf("open %s, then observe: %q does not have %q", c.path, text, c.want)
		}
		if untimed != c.untimed || static {
			t.Errorf("open %s: settled with nothing scheduled: %v (static %v), want %v", c.path, untimed, static, c.untimed)
		}
	}
	// The view transition holds the page's rendering until Chromium ends
	// it (4 s): the settle runs out, and its note says why.
	res, err := s.Open(context.Background(), tabs.OpenOptions{Name: "transition-note", URL: ps.URL + "/viatransition"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "no frame rendered since load") {
		t.Errorf("open /viatransition: notes %q, want one that says no frame was rendered", res.Notes)
	}
}

// TestOpenSettledStatic: a document without scripts of its own is
// settled at its load event, without the settle's window (the debug log
// says so); documents without a script element in their light DOM that
// still add a line after load (from a body onload handler, an image's
// onerror handler, a same-origin iframe's script, a script in a
// declarative shadow root, a handler attribute in a nested one) are waited
// for as scripted pages are, and observed with what they added; so is one
// whose Refresh header sends it on, which the page itself cannot see.
func TestOpenSettledStatic(t *testing.T) {
	t.Parallel()
	ps := settlePages(t)
	log := &settleLog{static: map[string]bool{}, untimed: map[string]bool{}}
	s := newSupWith(t, func(o *tabs.Options) { o.Logger = slog.New(log) })
	openOn(t, s, "warm", "/form")
	for _, c := range []struct {
		path, want string
		static     bool
	}{
		{"/static", "Static page", true},
		{"/onload", "Added by onload", false},
		{"/onerror", "Added by onerror", false},
		{"/framewriter", "Added by the frame", false},
		{"/shadowscript", "Added from the shadow root", false},
		{"/shadowhandler", "Added by a shadow handler", false},
		{"/refreshed", "", false},
	} {
		text, static, _, ok := log.open(t, s, ps.URL, c.path)
		if !strings.Contains(text, c.want) {
			t.Errorf("open %s, then observe: %q does not have %q", c.path, text, c.want)
		}
		if !ok || static != c.static {
			t.Errorf("open %s: settled as a document without scripts: %v (logged: %v), want %v", c.path, static, ok, c.static)
		}
	}
}
