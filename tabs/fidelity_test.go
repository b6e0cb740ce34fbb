package tabs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// TestObserveWhatAPersonActsOn checks the observation of testdata/observe/
// fidelity.html: icon-only and role-less controls, the controls of
// delegating listeners, hidden file inputs behind labels, field values as
// the field holds them, input types, clipped elements, boxes, frame
// labels and a modal dialog.
func TestObserveWhatAPersonActsOn(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/fidelity.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	has := func(el observe.Element, state string) bool { return slices.Contains(el.States, state) }

	// Icon-only and role-less controls, named from what there is.
	for _, name := range []string{"menu toggle burger", "trash", "star", "send", "Blue circle"} {
		if el := obsOne(t, o, "clickable", name); !has(el, "icon") {
			t.Errorf("%q is not marked icon: %v", name, el.States)
		}
	}
	// The controls of a delegating listener, one each.
	for _, name := range []string{"Reply", "Forward", "1", "2", "3"} {
		obsOne(t, o, "clickable", name)
	}
	clickAndTitle(t, tab, o, "mail Reply", "Reply", "mail star", "star", "day 2", "2")
	// Hidden file inputs: their label, or the dropzone wrapping one.
	for _, name := range []string{"Choose a photo", "Drop files here"} {
		if el := obsOne(t, o, "button", name); !has(el, "upload") {
			t.Errorf("%q is not marked upload: %v", name, el.States)
		}
	}
	// Values as the field holds them, a textarea marked multiline.
	notes := obsOne(t, o, "textbox", "Notes")
	if !strings.HasPrefix(notes.Value, "line one\n  indented line two\nxxx") || !strings.HasSuffix(notes.Value, "\nEND") ||
		len(notes.Value) != 1333 || notes.ValueLength != 0 || !has(notes, "multiline") {
		t.Errorf("Notes: %d chars %q…, length %d, states %v", len(notes.Value), notes.Value[:min(40, len(notes.Value))], notes.ValueLength, notes.States)
	}
	// A longer value is cut, with its length, and tab.value reads it all.
	log := obsOne(t, o, "textbox", "Log")
	if log.ValueLength != 5000 || log.Value != strings.Repeat("y", 2000)+"…" ||
		!strings.Contains(o.Text(), fmt.Sprintf("(cut: 5000 characters; tab.value(%d) reads all)", log.ID)) {
		t.Errorf("Log: %d chars, length %d", len(log.Value), log.ValueLength)
	}
	var whole string
	if err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		whole, err = tb.Value(ctx, tabs.Target{ID: log.ID}, 0)
		return err
	}); err != nil || whole != strings.Repeat("y", 5000) {
		t.Errorf("Value: %d chars, %v", len(whole), err)
	}
	if v := obsOne(t, o, "textbox", "Name").Value; v != "  two  spaces  " {
		t.Errorf("Name value %q", v)
	}
	if !strings.Contains(o.Text(), `textbox "Notes": "line one\n  indented line two\nxxx`) {
		t.Errorf("text rendering of Notes:\n%s", o.Text())
	}
	// Input types that set the format.
	for name, typ := range map[string]string{"Birthday": "date", "Alarm": "time", "Email": "email", "Secret": "password"} {
		if el := obsOne(t, o, "textbox", name); el.Type != typ {
			t.Errorf("%s: type %q, want %q", name, el.Type, typ)
		}
	}
	if el := obsOne(t, o, "spinbutton", "Qty"); el.Type != "number" {
		t.Errorf("Qty: type %q", el.Type)
	}
	// Clipped away: not offered.
	for _, name := range []string{"Clipped zero", "Clipped away", "Off the page"} {
		if len(obsFind(o, "button", name)) != 0 {
			t.Errorf("%q is offered:\n%s", name, o.Text())
		}
	}
	// A canvas and an image map's area carry their boxes.
	cv := obsOne(t, o, "canvas", "")
	if cv.Bounds == nil || cv.Bounds.Width != 300 || cv.Bounds.Height != 150 {
		t.Errorf("canvas box %+v", cv.Bounds)
	}
	north := obsOne(t, o, "link", "North")
	if b := north.Bounds; b == nil || b.Width != 50 || b.Height != 50 {
		t.Errorf("area box %+v", b)
	}
	// An image map's area is clicked by number, on its shape.
	if _, err := obsClick(t, tab, north.ID); err != nil {
		t.Errorf("click the area: %v", err)
	}
	var hash string
	obsEval(t, tab, "location.hash", &hash)
	if hash != "#a" {
		t.Errorf("after clicking the area, hash %q", hash)
	}
	// A frame is labelled by its title.
	if f := obsOne(t, o, "button", "Gift wrap").Frame; f != "Checkout extras" {
		t.Errorf("frame label %q", f)
	}
	// A modal dialog is named in the default observation.
	if d := obsOne(t, o, "dialog", "Cookie consent"); !has(d, "modal") || d.ID == 0 {
		t.Errorf("dialog %+v", d)
	}
	// Informative images are there to read with includeAll.
	all := obsObserve(t, tab, tabs.ObserveOptions{IncludeAll: true})
	if len(obsFind(all, "img", "Blue mug")) != 1 || !strings.Contains(all.Text(), `img "Blue mug"`) {
		t.Errorf("no img \"Blue mug\" in:\n%s", all.Text())
	}
}

// clickAndTitle clicks, by number, the clickable of each name in o and
// checks the title the page then shows (pairs: title, name).
func clickAndTitle(t *testing.T, tab *tabs.Tab, o *observe.Observation, pairs ...string) {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		want, name := pairs[i], pairs[i+1]
		if _, err := obsClick(t, tab, obsOne(t, o, "clickable", name).ID); err != nil {
			t.Fatalf("click %s: %v", name, err)
		}
		var title string
		obsEval(t, tab, "document.title", &title)
		if title != want {
			t.Errorf("click %s: title %q, want %q", name, title, want)
		}
	}
}

// scrollList scrolls the element of id to top and waits for the frame
// after its scroll event, in which a virtualised list renders.
func scrollList(t *testing.T, tab *tabs.Tab, id string, top int) {
	t.Helper()
	var ok bool
	obsEval(t, tab, fmt.Sprintf(`new Promise((res) => { const l = document.getElementById(%q);
		l.addEventListener('scroll', () => requestAnimationFrame(() => res(true)), {once: true}); l.scrollTop = %d; })`, id, top), &ok)
}

// openRow returns the "Open" button of recycled.html's row "item n".
func openRow(t *testing.T, o *observe.Observation, n int) observe.Element {
	t.Helper()
	for _, el := range o.Elements {
		if el.Role == "button" && el.Name == "Open" && el.Context == "item "+strconv.Itoa(n) {
			return el
		}
	}
	t.Fatalf("no Open button of item %d in:\n%s", n, o.Text())
	return observe.Element{}
}

// TestRecycledRowIsStale checks that a number never hits the item a
// virtualised list moved into its node, and that a label of its own that
// changed is no reason to refuse.
func TestRecycledRowIsStale(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/recycled.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	row3 := openRow(t, o, 3)
	scrollList(t, tab, "list", 770*20)
	_, err := obsClick(t, tab, row3.ID)
	var te *tabs.Error
	if !errors.As(err, &te) || te.Code != errcode.StaleElement || !strings.Contains(te.Msg, `"item 3"`) || !strings.Contains(te.Msg, `"item 77`) {
		t.Fatalf("click on a recycled row: %v, want stale_element naming item 3 and what it shows now", err)
	}
	var title string
	obsEval(t, tab, "document.title", &title)
	if title != "Virtual" {
		t.Errorf("the recycled row was clicked: title %q", title)
	}

	follow := obsOne(t, o, "button", "Follow")
	if _, err := obsClick(t, tab, follow.ID); err != nil {
		t.Fatal(err)
	}
	res, err := obsClick(t, tab, follow.ID)
	if err != nil || !strings.Contains(res.Target, `was "Follow", now "Following"`) {
		t.Fatalf("second click on Follow: %+v, %v; want it done, saying was Follow, now Following", res, err)
	}
}

// TestRelabeledButtonIsStale: a button in no list item or row, named by
// its own label ("Delete Alice"), whose node the page gave another item's
// label (a list re-rendered in place) is stale_element, and nothing is
// clicked; a button whose own label changed and is nowhere else on the
// page (Follow, then Following) is clicked.
func TestRelabeledButtonIsStale(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/relabeled.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	alice := obsOne(t, o, "button", "Delete Alice")
	follow := obsOne(t, o, "button", "Follow")
	if err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tabs.Target{Selector: "#reverse"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, err := obsClick(t, tab, alice.ID)
	var te *tabs.Error
	if !errors.As(err, &te) || te.Code != errcode.StaleElement || !strings.Contains(te.Msg, `"Delete Alice"`) || !strings.Contains(te.Msg, `"Delete Carol"`) {
		t.Fatalf("click on Delete Alice after the list re-rendered: %v, want stale_element saying it now shows Delete Carol", err)
	}
	var title string
	obsEval(t, tab, "document.title", &title)
	if title != "People" {
		t.Errorf("a relabeled button was clicked: title %q", title)
	}
	if _, err := obsClick(t, tab, follow.ID); err != nil {
		t.Fatal(err)
	}
	res, err := obsClick(t, tab, follow.ID)
	if err != nil || !strings.Contains(res.Target, `was "Follow", now "Following"`) {
		t.Fatalf("second click on Follow: %+v, %v; want it done, saying was Follow, now Following", res, err)
	}
}

// TestObserveScrollCollectsRecycledRows checks observe({scroll: true}) on a
// list of 1,000 rows that renders 24 nodes at a time.
func TestObserveScrollCollectsRecycledRows(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/recycled.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{Scroll: true, MaxTokens: 100000})
	rows := 0
	ids := map[int]bool{}
	for _, el := range o.Elements {
		if el.Role == "button" && el.Name == "Open" {
			rows++
			ids[el.ID] = true
		}
	}
	if rows != 1000 || len(ids) != 1000 || o.Scrolled == nil || o.Scrolled.Found < 970 || o.Scrolled.Complete != 1 {
		t.Fatalf("%d rows, %d numbers, report %+v", rows, len(ids), o.Scrolled)
	}
	// In order, top to bottom; the ones scrolled past are offscreen.
	if r := openRow(t, o, 999); !slices.Contains(r.States, "offscreen") || o.Elements[len(o.Elements)-1].ID != r.ID {
		t.Errorf("last row %+v, last element %+v", r, o.Elements[len(o.Elements)-1])
	}
	if r := openRow(t, o, 2); slices.Contains(r.States, "offscreen") {
		t.Errorf("row 2 is on screen: %+v", r)
	}
	// A row scrolled past: its node shows another item now.
	if _, err := obsClick(t, tab, openRow(t, o, 500).ID); !errors.Is(err, tabs.ErrStale) {
		t.Errorf("click on row 500: %v, want stale", err)
	}
	if _, err := obsClick(t, tab, openRow(t, o, 2).ID); err != nil {
		t.Fatal(err)
	}
	var title string
	obsEval(t, tab, "document.title", &title)
	if title != "opened item 2" {
		t.Errorf("title %q", title)
	}
}

// TestScrollSaysWhatMoved checks the scrollable markers of an observation
// and the report of a scroll: which container moved, and where it stands.
func TestScrollSaysWhatMoved(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/recycled.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	list := obsOne(t, o, "scrollable", "list")
	if list.ScrollPosition != "0%/19560px below" || !strings.Contains(o.Text(), `scrollable "list" 0%/19560px below`) {
		t.Errorf("list marker %q in:\n%.400s", list.ScrollPosition, o.Text())
	}
	var res *tabs.ScrollResult
	if err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		res, err = tb.Scroll(ctx, 0, 400)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if res.Container != "div#list" || res.Y != 400 || res.Position != "2%/19160px below" {
		t.Errorf("scroll over the list: %+v", res)
	}
	if err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		res, err = tb.ScrollAt(ctx, tabs.Target{ID: obsOne(t, o, "button", "Follow").ID}, 0, 400)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if res.Container != "" || !strings.Contains(res.Note, "nothing scrolled") {
		t.Errorf("scroll over a page that does not scroll: %+v", res)
	}
	// The page itself, in the observation's first line.
	tall := obsOpen(t, s.URL+"/gen/400")
	if p := obsObserve(t, tall, tabs.ObserveOptions{}).PageScroll(); !strings.HasPrefix(p, "0%/") || !strings.HasSuffix(p, "px below") {
		t.Errorf("page scroll %q", p)
	}
}

// TestObserveDelegatedAndModal checks trial.html: the controls of
// delegating listeners on a toolbar, a date picker, a menu and a table are
// one each; a button whose only content is a titled SVG is an icon; a
// colour input shows its value; a modal <dialog> makes the rest inert.
func TestObserveDelegatedAndModal(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/trial.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	clickAndTitle(t, tab, o, "tb Bold", "Bold", "tb Italic", "Italic", "day 2", "2", "menu Save", "Save", "cal 11", "11")
	if el := obsOne(t, o, "button", "trash"); !slices.Contains(el.States, "icon") {
		t.Errorf("SVG button %+v", el)
	}
	if v := obsOne(t, o, "button", "Tint").Value; v != "#00ff00" {
		t.Errorf("colour value %q", v)
	}
	// A button that lets the pointer through is not offered; an
	// unlabelled dialog is named by its heading.
	if len(obsFind(o, "button", "Pay now")) != 0 {
		t.Errorf("a pointer-events: none button is offered:\n%s", o.Text())
	}
	all := obsObserve(t, tab, tabs.ObserveOptions{IncludeAll: true})
	obsOne(t, all, "dialog", "New message")
	// A custom combobox shows its choice.
	if cb := obsFind(o, "combobox", ""); len(cb) != 1 || cb[0].Value != "Country" {
		t.Errorf("custom combobox %+v", cb)
	}
	// A control that stays disabled on a page at rest fails fast.
	start := time.Now()
	_, err := obsClick(t, tab, obsOne(t, o, "button", "Checkout").ID)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "is disabled") || time.Since(start) > 4*time.Second {
		t.Errorf("click on a disabled button: %v after %v", err, time.Since(start))
	}
	// While a confirm holds the page, an action by number fails at once.
	if _, err := obsClick(t, tab, obsOne(t, o, "button", "Del").ID); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, err = obsClick(t, tab, obsOne(t, o, "button", "Behind").ID)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "confirm") || time.Since(start) > 3*time.Second {
		t.Errorf("click by number under a confirm: %v after %v", err, time.Since(start))
	}
	if err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error { return tb.HandleDialog(ctx, false, nil) }); err != nil {
		t.Fatal(err)
	}
	m := obsOpen(t, s.URL+"/o/trial.html?modal")
	mo := obsObserve(t, m, tabs.ObserveOptions{})
	if len(mo.Elements) != 2 || mo.Elements[0].Role != "dialog" || mo.Elements[1].Name != "Accept" {
		t.Errorf("with a modal dialog open:\n%s", mo.Text())
	}
}

// TestRecycledOneButtonRows checks a virtualised list whose rows are one
// button each: the button is the item, so a recycled one is stale, and
// observe({scroll: true}) collects every row.
func TestRecycledOneButtonRows(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/trial.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	item3 := obsOne(t, o, "button", "item 3")
	scrollList(t, tab, "vl", 100*20)
	if _, err := obsClick(t, tab, item3.ID); !errors.Is(err, tabs.ErrStale) || !strings.Contains(err.Error(), `"item 3"`) {
		t.Fatalf("click on a recycled button: %v", err)
	}
	all := obsObserve(t, tab, tabs.ObserveOptions{Scroll: true, MaxTokens: 100000})
	n := 0
	for _, el := range all.Elements {
		if el.Role == "button" && strings.HasPrefix(el.Name, "item ") {
			n++
		}
	}
	if n != 1000 {
		t.Errorf("%d rows collected, want 1000", n)
	}
}

// TestBackForwardCacheRestore checks a page back from the back/forward
// cache: it is loaded (no load event comes again), and the objects the
// observation kept in it (its inline handler's node) are made afresh.
func TestBackForwardCacheRestore(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/bf-e.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	if _, err := obsClick(t, tab, obsOne(t, o, "link", "to B").ID); err != nil {
		t.Fatal(err)
	}
	if err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Back(ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		o = obsObserve(t, tab, tabs.ObserveOptions{})
		if len(o.Notes) != 0 || len(obsFind(o, "button", "Al")) != 1 {
			t.Fatalf("observation %d after back: %v\n%s", i, o.Notes, o.Text())
		}
	}
	if _, err := obsClick(t, tab, obsOne(t, o, "button", "Al").ID); err != nil {
		t.Fatal(err)
	}
	// An open after the restore is the open's page at once: the traversal
	// the cache served commits the document's old loader, not the one
	// Chromium started it with, and an open that took that navigation
	// for one still in flight waited out its whole timeout.
	want := s.URL + "/o/bf-b.html?after"
	var res *tabs.NavResult
	start := time.Now()
	err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var err error
		res, err = tb.Goto(ctx, want, "settled")
		return err
	})
	if err != nil || res.URL != want {
		t.Fatalf("open after the restore: %+v, %v after %v; want %s", res, err, time.Since(start), want)
	}
}

// TestClickAfterShiftOnMouseMove: a page that inserts a banner above the
// button at the first mouse move (a layout shift in the very frame of the
// click's move) is not clicked where the button was: the guard stops the
// press and release that would reach the banner, and the click, tried
// again with the waiting check, lands once on the button.
func TestClickAfterShiftOnMouseMove(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Shift</title><main id=m><button id=b style="height:40px">Save</button></main>
<script>
window.hits = {b: 0, banner: 0, downs: 0};
document.getElementById('b').addEventListener('click', () => hits.b++);
document.getElementById('b').addEventListener('mousedown', () => hits.downs++);
addEventListener('mousemove', () => {
  if (document.getElementById('banner')) return;
  const d = document.createElement('div');
  d.id = 'banner'; d.textContent = 'Sale!'; d.style.height = '200px';
  d.addEventListener('mousedown', () => hits.banner++);
  d.addEventListener('click', () => hits.banner++);
  document.getElementById('m').prepend(d);
}, {once: false});
</script>`)
	}))
	tab := obsOpen(t, base+"/")
	var hits string
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#b"}); err != nil {
			return err
		}
		raw, err := tb.Evaluate(ctx, "JSON.stringify(hits)", nil)
		hits = strings.Trim(string(raw), `"`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{\"b\":1,\"banner\":0,\"downs\":1}`; hits != want {
		t.Errorf("hits %s, want %s", hits, want)
	}
}

// TestClickOntoAFailedPageSaysSo: a click whose link leads to a refused
// connection, or to a 404, navigates, and its result says how the new
// page failed.
func TestClickOntoAFailedPageSaysSo(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: one just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/"
	ln.Close()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Links</title><a id=dead href="%s">Dead link</a> <a id=gone href="/missing">Gone page</a>`, dead)
	}))
	name := obsOpen(t, base+"/").Name()
	for _, c := range []struct{ sel, want string }{
		{"#dead", "the navigation failed (" + dead + ": net::ERR_CONNECTION_REFUSED)"},
		{"#gone", "the new page answered HTTP 404"},
	} {
		var res *tabs.ActionResult
		err := sup.Run(context.Background(), name, 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
			if _, err := tb.Goto(ctx, base+"/", "load"); err != nil {
				return err
			}
			var err error
			res, err = tb.Click(ctx, tabs.Target{Selector: c.sel})
			return err
		}))
		if err != nil || !res.Navigated || !strings.Contains(res.Note, c.want) {
			t.Errorf("click %s: %+v, %v; want navigated with a note %q", c.sel, res, err, c.want)
		}
	}
}

// TestObserveSVGLinks: links drawn in SVG (<a href> and the older
// xlink:href, whose href property is an SVGAnimatedString, not a string)
// are observed as links beside an HTML one, and a click on one follows
// it. The walk used to send the SVGAnimatedString as the link's URL, and
// the whole observation failed to decode.
func TestObserveSVGLinks(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/svglink.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	for _, name := range []string{"HTML link", "SVG link", "Old SVG link"} {
		obsOne(t, o, "link", name)
	}
	if _, err := obsClick(t, tab, obsOne(t, o, "link", "SVG link").ID); err != nil {
		t.Fatalf("click the SVG link: %v", err)
	}
	var title string
	obsEval(t, tab, "document.title", &title)
	if title != "Page B" {
		t.Errorf("after a click on the SVG link: title %q, want Page B", title)
	}
}

// TestClickPickOnMousedown: an autocomplete list that picks its item on
// mousedown and closes at once leaves the release and the click to what
// was under the item. The page had the press and picked: the click
// succeeds with a note saying so (an error would have an agent click
// again), and the element under the pointer gets neither the release
// nor the click.
func TestClickPickOnMousedown(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Pick</title>
<input id=q aria-label=City><ul id=sug style="position:absolute;top:40px;margin:0;padding:0;list-style:none;background:#fff"></ul>
<p id=under style="margin-top:40px" onmouseup="window.ups++" onclick="window.clicks++">Chosen: <span id=chosen>none</span></p>
<script>
window.ups = 0; window.clicks = 0;
q.addEventListener('input', () => {
  sug.innerHTML = '';
  for (const c of ['Paris', 'Prague', 'Porto']) {
    const li = document.createElement('li');
    li.textContent = c; li.style.cursor = 'pointer'; li.style.padding = '4px';
    li.addEventListener('mousedown', (e) => { e.preventDefault(); chosen.textContent = c; q.value = c; sug.style.display = 'none'; });
    sug.appendChild(li);
  }
  sug.style.display = 'block';
});
</script>`)
	}))
	tab := obsOpen(t, base+"/")
	var got string
	var res *tabs.ActionResult
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Type(ctx, tabs.Target{Selector: "#q"}, "P"); err != nil {
			return err
		}
		var err error
		if res, err = tb.Click(ctx, tabs.Target{Selector: "text/Prague"}); err != nil {
			return err
		}
		raw, err := tb.Evaluate(ctx, "chosen.textContent + ' ' + ups + ' ' + clicks", nil)
		got = strings.Trim(string(raw), `"`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != "Prague 0 0" {
		t.Errorf("chosen, ups and clicks under it: %q, want %q", got, "Prague 0 0")
	}
	if res == nil || !strings.Contains(res.Note, "got the press (mousedown)") {
		t.Errorf("note %+v, want one saying the element got the press", res)
	}
}

// TestClickDisplayContents: an element with display: contents has no box
// of its own; the observation offers it (it has a click handler, or a
// role), and a click by number lands on its contents, which is where a
// person's click would go.
func TestClickDisplayContents(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Contents</title><script>window.hits = [];</script>
<div style="display:contents" onclick="hits.push('wrap')"><span>display contents child</span></div>
<p>between</p>
<div style="display:contents" role="button" tabindex="0" onclick="hits.push('role')">dc role button</div>
<div id=half style="display:contents" onclick="hits.push('half')"><span style="position:absolute;left:-9999px">offscreen child</span><span>visible child</span></div>
<my-el id=host onclick="hits.push('host')"></my-el>
<script>customElements.define('my-el', class extends HTMLElement {
  connectedCallback() { this.attachShadow({mode: 'open'}).innerHTML = '<style>:host{display:contents}</style><button>In the shadow</button>'; }
});</script>`)
	}))
	tab := obsOpen(t, base+"/")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	for _, c := range []struct{ role, name string }{{"clickable", "display contents child"}, {"button", "dc role button"}} {
		if _, err := obsClick(t, tab, obsOne(t, o, c.role, c.name).ID); err != nil {
			t.Fatalf("click %s %q: %v", c.role, c.name, err)
		}
	}
	// By selector: one whose contents start off-screen, and a shadow host
	// whose :host is display: contents.
	for _, sel := range []string{"#half", "#host"} {
		err := clickTarget(t, tab, tabs.Target{Selector: sel})
		if err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
	}
	if got := evalString(t, tab, "hits.join()"); got != "wrap,role,half,host" {
		t.Errorf("hits %q, want wrap,role,half,host", got)
	}
}

// TestClickHiddenByHover: a button that a :hover style hides, and one that
// a mouseenter handler swaps for another in its place, fail the click at
// once (its own mouse move hid them), saying so, and the button that took
// the place gets nothing.
func TestClickHiddenByHover(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hover</title><style>#fade:hover{visibility:hidden}</style>
<script>window.hits = [];</script>
<p><button id=fade onclick="hits.push('fade')">Fade</button></p>
<p><button id=a onclick="hits.push('save')">Save draft</button><button id=b style="display:none" onclick="hits.push('delete')">Delete all</button></p>
<script>a.addEventListener('mouseenter', () => { a.style.display = 'none'; b.style.display = ''; });</script>`)
	}))
	tab := obsOpen(t, base+"/")
	for _, sel := range []string{"#fade", "#a"} {
		err := clickTarget(t, tab, tabs.Target{Selector: sel})
		var te *tabs.Error
		if !errors.As(err, &te) || te.Code != errcode.NotActionable || !strings.Contains(te.Msg, "as the pointer reached it") {
			t.Errorf("click %s: %v, want not_actionable: became hidden (or moved away) as the pointer reached it", sel, err)
		}
	}
	if got := evalString(t, tab, "hits.join()"); got != "" {
		t.Errorf("hits %q, want none", got)
	}
}

// TestClickHiddenByMousemove: a button that its own mousemove handler
// hides (a handler that runs as the mouse move reaches it, after the
// page's mouseenter handlers) is not pressed either: the click fails at
// once as hidden by the pointer, not after the wait for a hidden element,
// and what was under the pointer gets nothing, the window's capture-phase
// listeners included.
func TestClickHiddenByMousemove(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Move</title><script>window.hits = [];
for (const type of ['pointerdown', 'mousedown', 'click']) addEventListener(type, (e) => { if (e.isTrusted) hits.push('window ' + type); }, true);</script>
<p onpointerdown="hits.push('p down')" onclick="hits.push('p')"><button id=h onclick="hits.push('h')">Hide on move</button>&nbsp;</p>
<script>h.addEventListener('mousemove', () => { h.style.visibility = 'hidden'; });</script>`)
	}))
	tab := obsOpen(t, base+"/")
	start := time.Now()
	err := clickTarget(t, tab, tabs.Target{Selector: "#h"})
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "became hidden as the pointer reached it") {
		t.Errorf("click: %v, want not_actionable: became hidden as the pointer reached it", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the click failed after %v, want at once (not after the 5 s wait for a hidden element)", d.Round(time.Millisecond))
	}
	if got := evalString(t, tab, "hits.join()"); got != "" {
		t.Errorf("hits %q, want none", got)
	}
}

// TestClickCoveredAtThePress: a button whose mousedown handler puts a
// backdrop over the page (a menu that opens on the press) gets the press
// but not the click: the error says the press landed and the page may
// have acted on it, not that the button never got anything; and a click
// that a window capture-phase listener of the page stops on its way is
// a click, with a note that a listener of the page stopped it.
func TestClickCoveredAtThePress(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Menu</title><script>window.hits = [];</script>
<button id=m onmousedown="hits.push('down'); document.body.insertAdjacentHTML('beforeend', '<div id=bd style=&quot;position:fixed;inset:0;z-index:9&quot;></div>')" onclick="hits.push('click')">Open menu</button>
<button id=s onclick="hits.push('s')">Stopped</button>
<script>addEventListener('click', (e) => { if (e.target.id === 's') { hits.push('window'); e.stopImmediatePropagation(); } }, true);</script>`)
	}))
	tab := obsOpen(t, base+"/")
	click := func(sel string) error {
		return run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
			_, err := tb.Click(ctx, tabs.Target{Selector: sel})
			return err
		})
	}
	err := click("#m")
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "got the press (mousedown), then div#bd covered it") {
		t.Errorf("click #m: %v, want not_actionable: got the press (mousedown), then div#bd covered it", err)
	}
	if got := evalString(t, tab, "const h = hits.join(); bd.remove(); hits.length = 0; h"); got != "down" {
		t.Errorf("hits after the click on #m: %q, want down (the press, no click)", got)
	}
	// The guard runs before the page's window listener: it saw the click
	// go to the element, and the page stop it there.
	var res *tabs.ActionResult
	err = run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		res, err = tb.Click(ctx, tabs.Target{Selector: "#s"})
		return err
	})
	if err != nil || !strings.Contains(res.Note, "on the window") {
		t.Errorf("click #s: %+v, %v, want clicked, with a note that a listener of the page on the window stopped the click", res, err)
	}
	if got := evalString(t, tab, "hits.join()"); got != "window" {
		t.Errorf("hits %q, want window", got)
	}
}

// TestClickWaitsForASlowAnswer: a button that a 2.5 s fetch enables, and
// one under an overlay that the answer of such a fetch removes, are
// clicked once the answer comes: a request in flight for less than 10 s
// is a page still loading, not a page at rest, whose cover or disabled
// control would fail the action after 1.5 s.
func TestClickWaitsForASlowAnswer(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(2500 * time.Millisecond)
			fmt.Fprint(w, "ok")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Slow</title><script>window.hits = [];</script>
<button id=pay disabled onclick="hits.push('pay')">Pay</button>
<p><button id=go onclick="hits.push('go')">Go</button></p>
<div id=ov style="position:fixed;inset:0;background:rgba(0,0,0,.3)"></div>
<script>
function load(f) { fetch('/slow?' + Math.random()).then(f); }
</script>`)
	}))
	tab := obsOpen(t, base+"/")
	err := sup.Run(context.Background(), tab.Name(), 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Evaluate(ctx, "load(() => ov.remove())", nil); err != nil {
			return err
		}
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#go"}); err != nil {
			return fmt.Errorf("click under the overlay: %w", err)
		}
		if _, err := tb.Evaluate(ctx, "load(() => { pay.disabled = false; })", nil); err != nil {
			return err
		}
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#pay"}); err != nil {
			return fmt.Errorf("click the disabled button: %w", err)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab, "hits.join()"); got != "go,pay" {
		t.Errorf("hits %q, want go,pay", got)
	}
}

// TestClickRowRenderedOnHover: a row whose mouseenter handler renders it
// again (new nodes in the same place) removes the numbered button as the
// click's pointer arrives: the number fails as stale, saying why, and a
// selector finds the new button and clicks it.
func TestClickRowRenderedOnHover(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Rows</title><script>window.hits = [];</script>
<div id=row><button id=act onclick="hits.push('old')">Refund</button></div>
<script>row.addEventListener('mouseenter', () => {
  row.innerHTML = '<button id=act onclick="hits.push(\'new\')">Refund</button>';
}, {once: true});</script>`)
	}))
	tab := obsOpen(t, base+"/")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	_, err := obsClick(t, tab, obsOne(t, o, "button", "Refund").ID)
	if errcode.Of(err) != errcode.StaleElement || !strings.Contains(err.Error(), "as the pointer reached it") {
		t.Errorf("click by number: %v, want stale_element: removed as the pointer reached it", err)
	}
	err = clickTarget(t, tab, tabs.Target{Selector: "#act"})
	if err != nil {
		t.Fatalf("click by selector: %v", err)
	}
	if got := evalString(t, tab, "hits.join()"); got != "new" {
		t.Errorf("hits %q, want new", got)
	}
}

// TestDisabledBesideCrossSiteFrame: on a page with a cross-site iframe,
// whose document request ends in the iframe's own process, the frame's
// document is not a request still in flight: the page reaches network
// idle, and a control that stays disabled fails after 1.5 s, as on any
// page at rest.
func TestDisabledBesideCrossSiteFrame(t *testing.T) {
	t.Parallel()
	var base string
	base = httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/frame" {
			fmt.Fprint(w, `<!doctype html><p>static</p>`)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Disabled</title><button id=b disabled>Go</button><iframe src="%s/frame"></iframe>`, strings.Replace(base, "127.0.0.1", "localhost", 1))
	}))
	tab := obsOpen(t, base+"/")
	err := sup.Run(context.Background(), tab.Name(), 5*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		return tb.WaitForLoadState(ctx, "networkidle", 0)
	}))
	if err != nil {
		t.Errorf("wait for network idle: %v", err)
	}
	err = sup.Run(context.Background(), tab.Name(), 6*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tabs.Target{Selector: "#b"})
		return err
	}))
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "is disabled") {
		t.Errorf("click a disabled button beside a cross-site frame, within 6 s: %v, want not_actionable: is disabled", err)
	}
}

// TestClickDisabledOnHover: a button that a mouseenter handler disables
// is not pressed: the click says it is disabled (after the 1.5 s a
// control that stays disabled gets), not that a listener stopped its click.
func TestClickDisabledOnHover(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Disable</title><script>window.hits = [];</script>
<button id=h onpointerdown="hits.push('down')" onclick="hits.push('click')">Hover me</button>
<script>h.addEventListener('mouseenter', () => { h.disabled = true; });</script>`)
	}))
	tab := obsOpen(t, base+"/")
	err := clickTarget(t, tab, tabs.Target{Selector: "#h"})
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "is disabled") {
		t.Errorf("click: %v, want not_actionable: is disabled", err)
	}
	if got := evalString(t, tab, "hits.join()"); got != "" {
		t.Errorf("hits %q, want none", got)
	}
}

// TestClickSelectorRemovedOnHover: a button that a mouseenter handler
// replaces with another (removed from the page) is not waited for until
// the timeout, by selector: the click fails at once, saying the pointer's
// arrival removed it, and the new button gets nothing.
func TestClickSelectorRemovedOnHover(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Swap</title><script>window.hits = [];</script>
<p id=p><button id=b onclick="hits.push('b')">Save draft</button></p>
<script>b.addEventListener('mouseenter', () => { p.innerHTML = '<button id=b2 onclick="hits.push(\'b2\')">Delete all</button>'; });</script>`)
	}))
	tab := obsOpen(t, base+"/")
	err := clickTarget(t, tab, tabs.Target{Selector: "#b"})
	if errcode.Of(err) != errcode.ElementNotFound || !strings.Contains(err.Error(), "as the pointer reached it") {
		t.Errorf("click: %v, want element_not_found: removed as the pointer reached it", err)
	}
	if got := evalString(t, tab, "hits.join()"); got != "" {
		t.Errorf("hits %q, want none", got)
	}
}

// TestClickByNumberCheckedAtThePress: a click by number leaves the check
// after its mouse move to the guard at the press, which runs before every
// listener of the page, those on the window that an inline script put
// there first included. A button that the move hides (a :hover style, a
// mousemove handler) or disables fails as it did, and one that the move
// sends elsewhere is found where it went and clicked once; the page's
// window listeners see the one press that reached its element and
// nothing of those that did not.
func TestClickByNumberCheckedAtThePress(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Press</title><script>window.hits = [];
for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']) addEventListener(type, (e) => { if (e.isTrusted) hits.push(type + ' ' + (e.target.id || e.target.tagName)); }, true);</script>
<style>#fade:hover{visibility:hidden} p{margin:40px}</style>
<p><button id=fade>Fade</button></p>
<p><button id=mv>Hide on move</button></p>
<p><button id=dis>Disable on hover</button></p>
<p style="height:200px"><button id=jump style="position:relative">Jump</button></p>
<script>
mv.addEventListener('mousemove', () => { mv.style.visibility = 'hidden'; });
dis.addEventListener('mouseenter', () => { dis.disabled = true; });
jump.addEventListener('mouseover', () => { jump.style.top = '120px'; }, {once: true});
</script>`)
	}))
	tab := obsOpen(t, base+"/")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	for _, c := range []struct {
		name, want, hits string
	}{
		{"Fade", "became hidden or moved away as the pointer reached it", ""},
		{"Hide on move", "became hidden as the pointer reached it", ""},
		{"Disable on hover", "is disabled", ""},
		{"Jump", "", "pointerdown jump,mousedown jump,pointerup jump,mouseup jump,click jump"},
	} {
		if evalString(t, tab, "hits.length = 0, ''") != "" {
			t.Fatal("reset hits")
		}
		_, err := obsClick(t, tab, obsOne(t, o, "button", c.name).ID)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("click %s: %v, want it clicked", c.name, err)
		case c.want != "" && (errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), c.want)):
			t.Errorf("click %s: %v, want not_actionable: %s", c.name, err, c.want)
		}
		if got := evalString(t, tab, "hits.join()"); got != c.hits {
			t.Errorf("click %s: the page's window listeners saw %q, want %q", c.name, got, c.hits)
		}
	}
}

// TestClickMoveBeforePress: on a page whose animation frames keep
// flowing, where Chromium holds a mouse move for the next vsync, the press
// that follows the move without waiting for its answer still reaches the
// page after it: every click, by number and by selector, is seen as
// pointermove, mousemove, pointerdown, mousedown, pointerup, mouseup and
// click on its button, in that order.
func TestClickMoveBeforePress(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Order</title><script>window.seen = [];
for (const type of ['pointermove', 'mousemove', 'pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']) addEventListener(type, (e) => { if (e.isTrusted) seen.push(type + ' ' + e.target.id); }, true);</script>
<p><button id=a>Left</button> <button id=b>Right</button></p><p id=spin></p>
<script>(function f(t) { spin.textContent = Math.round(t); requestAnimationFrame(f); })(0);</script>`)
	}))
	tab := obsOpen(t, base+"/")
	if !tab.Tap().Live() {
		t.Fatal("the tap of the launched browser's connection saw no write: the press waits for the move's answer")
	}
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	ids := map[string]int{"a": obsOne(t, o, "button", "Left").ID, "b": obsOne(t, o, "button", "Right").ID}
	for i := range 6 {
		id := []string{"a", "b"}[i%2]
		if evalString(t, tab, "seen.length = 0, ''") != "" {
			t.Fatal("reset seen")
		}
		var err error
		if i < 4 {
			_, err = obsClick(t, tab, ids[id])
		} else {
			err = clickTarget(t, tab, tabs.Target{Selector: "#" + id})
		}
		if err != nil {
			t.Fatalf("click %d on %s: %v", i, id, err)
		}
		want := strings.ReplaceAll("pointermove X,mousemove X,pointerdown X,mousedown X,pointerup X,mouseup X,click X", "X", id)
		if got := evalString(t, tab, "seen.join()"); got != want {
			t.Errorf("click %d on %s: the page saw %q, want %q", i, id, got, want)
		}
	}
}

// TestClickAfterItsScroll: a button the click scrolls into view, on a
// page whose scroll handler renders the buttons again (new nodes, as a
// virtualised list does), is pressed after the page's scroll handler ran,
// so the click reaches the new button: each of five clicks is counted once.
// The page's animation frames keep flowing, so the scroll's frame waits
// for the vsync.
func TestClickAfterItsScroll(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Rerender</title><div id=host></div><script>window.n = 0;
function render() {
  host.innerHTML = [1, 2, 3, 4, 5].map((i) => '<p style="margin-top:1500px"><button id=b' + i + ' onclick="n++">Pick ' + i + '</button></p>').join('');
}
render();
addEventListener('scroll', render);
(function f() { document.title = 'Rerender ' + performance.now(); requestAnimationFrame(f); })();</script>`)
	}))
	tab := obsOpen(t, base+"/")
	for i := 1; i <= 5; i++ {
		err := clickTarget(t, tab, tabs.Target{Selector: fmt.Sprintf("#b%d", i)})
		if err != nil {
			t.Fatalf("click #b%d: %v", i, err)
		}
		if got := evalString(t, tab, "String(n)"); got != strconv.Itoa(i) {
			t.Fatalf("after the click on #b%d the page counted %s clicks, want %d", i, got, i)
		}
	}
}

// TestClickHoverEffectNextFrame: a hover effect that the page makes in
// the animation frame after the pointer arrives (a button rendered again,
// as React does on a hover state; a button that then moves away and lets
// another take its place) comes before the press, as after a person's
// pointer arrives: the guard sees at the press that the page's handlers
// of the move asked for a frame that has not run, stops the press, and the
// click starts over after that frame. So the press and the release never
// go to two different buttons: a selector's click goes to the button
// rendered again, and to the moved one where it went; a number's click on
// the button rendered again fails, since the number named the old node;
// the decoy that took the old place never gets a click. Five rounds, by
// number and by selector in turn.
func TestClickHoverEffectNextFrame(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Next frame</title><div id=wrap style="position:absolute;left:100px;top:100px"></div>
<button id=mover style="position:absolute;left:100px;top:200px;width:120px;height:40px" onclick="clicks.push('mover')">Mover</button>
<button id=decoy style="position:absolute;left:400px;top:200px;width:120px;height:40px" onclick="clicks.push('decoy')">Decoy</button>
<script>window.clicks = []; let gen = 0;
function make() {
  const b = document.createElement('button'); b.id = 'target'; b.textContent = 'Target'; b.style.cssText = 'width:120px;height:40px';
  const g = ++gen; b.onclick = () => clicks.push('target');
  b.addEventListener('mouseenter', () => { if (g === 1) requestAnimationFrame(() => wrap.replaceChildren(make())); });
  return b;
}
wrap.appendChild(make());
mover.addEventListener('mouseover', () => requestAnimationFrame(() => { mover.style.left = '400px'; decoy.style.left = '100px'; }));
(function f() { document.title = 'Next frame ' + performance.now(); requestAnimationFrame(f); })();</script>`)
	}))
	for round := range 5 {
		tab := obsOpen(t, fmt.Sprintf("%s/?%d", base, round))
		o := obsObserve(t, tab, tabs.ObserveOptions{})
		for _, c := range []struct {
			name string
			tg   tabs.Target
		}{
			{"Target", tabs.Target{ID: obsOne(t, o, "button", "Target").ID}},
			{"Mover", tabs.Target{ID: obsOne(t, o, "button", "Mover").ID}},
		} {
			if round%2 == 1 {
				c.tg = tabs.Target{Selector: "#" + strings.ToLower(c.name)}
			}
			if evalString(t, tab, "clicks.length = 0, ''") != "" {
				t.Fatal("reset clicks")
			}
			var res *tabs.ActionResult
			err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
				var err error
				res, err = tb.Click(ctx, c.tg)
				return err
			})
			want := strings.ToLower(c.name)
			got := evalString(t, tab, "clicks.join()")
			note := ""
			if res != nil {
				note = res.Note
			}
			if c.name == "Target" && c.tg.ID > 0 {
				if errcode.Of(err) != errcode.StaleElement || got != "" {
					t.Errorf("round %d: click %s by number: err %v (%s), the page's click handlers saw %q; want stale_element and no click", round, c.name, err, errcode.Of(err), got)
				}
				continue
			}
			if err != nil || got != want || note != "" {
				t.Errorf("round %d: click %s: err %v, note %q; the page's click handlers saw %q, want %q", round, c.name, err, note, got, want)
			}
		}
	}
}

// TestClickRowsReRenderedOnHover: a list that re-renders its rows in
// place (the same nodes, other items, as React does with index keys) when
// the pointer arrives, at once or in the next animation frame: a click by
// number on "Delete Alice" fails as stale_element at the press, and the
// page's handlers delete no one (before, the press went to the node that
// now read "Delete Bob", and the click succeeded); one by text/Delete
// Alice goes to the button that reads so at the press.
func TestClickRowsReRenderedOnHover(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		later := r.URL.Query().Get("mode") == "raf"
		swap := "swap()"
		if later {
			swap = "requestAnimationFrame(swap)"
		}
		fmt.Fprintf(w, `<!doctype html><title>Rows</title><ul id=list><li><span>Alice</span> <button>Delete Alice</button></li><li><span>Bob</span> <button>Delete Bob</button></li></ul>
<script>window.deleted = []; let names = ['Alice', 'Bob'], done = false;
const btns = [...document.querySelectorAll('button')], spans = [...document.querySelectorAll('span')];
btns.forEach((b, i) => b.addEventListener('click', () => deleted.push(names[i])));
function swap() { names = ['Bob', 'Alice']; spans.forEach((s, i) => s.textContent = names[i]); btns.forEach((b, i) => b.textContent = 'Delete ' + names[i]); }
list.addEventListener('mouseover', () => { if (done) return; done = true; %s; });</script>`, swap)
	}))
	for _, mode := range []string{"sync", "raf", "sync", "raf", "raf", "raf"} {
		tab := obsOpen(t, base+"/?mode="+mode)
		o := obsObserve(t, tab, tabs.ObserveOptions{})
		_, err := obsClick(t, tab, obsOne(t, o, "button", "Delete Alice").ID)
		if errcode.Of(err) != errcode.StaleElement {
			t.Errorf("%s: click on Delete Alice after the rows were re-rendered: %v (%s), want stale_element", mode, err, errcode.Of(err))
		}
		if got := evalString(t, tab, "deleted.join()"); got != "" {
			t.Errorf("%s: the page deleted %q, want no one", mode, got)
		}
		// By its text, the click goes to the button that reads
		// "Delete Alice" at the press.
		tab = obsOpen(t, base+"/?mode="+mode)
		err = clickTarget(t, tab, tabs.Target{Selector: "text/Delete Alice"})
		if got := evalString(t, tab, "deleted.join()"); err != nil || got != "Alice" {
			t.Errorf("%s: click text/Delete Alice: %v; the page deleted %q, want Alice", mode, err, got)
		}
	}
}

// TestClickDialogOnHover: a confirm dialog that the page opens in a
// mouseover handler holds the click's press and release, which were on
// their way: the click says the dialog is open and that the rest of the
// click reaches the page when it is answered, and it does, once.
func TestClickDialogOnHover(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Ask on hover</title><script>window.seen = [];
for (const type of ['mousedown', 'mouseup', 'click']) addEventListener(type, (e) => { if (e.isTrusted) seen.push(type + ' ' + e.target.id); }, true);</script>
<button id=b style="width:120px;height:40px">Target</button>
<script>let asked = 0; b.addEventListener('mouseover', () => { if (!asked++) seen.push('confirm ' + confirm('Sure?')); });</script>`)
	}))
	tab := obsOpen(t, base+"/")
	var res *tabs.ActionResult
	err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		res, err = tb.Click(ctx, tabs.Target{Selector: "#b"})
		return err
	})
	if err != nil {
		t.Fatalf("click: %v", err)
	}
	if res.Dialog == nil || res.Dialog.Message != "Sure?" || !strings.Contains(res.Note, "reach it when the dialog is answered") {
		t.Fatalf("click: dialog %+v, note %q; want the confirm and a note that the rest of the click waits for it", res.Dialog, res.Note)
	}
	if err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error { return tb.HandleDialog(ctx, true, nil) }); err != nil {
		t.Fatalf("accept: %v", err)
	}
	want := "confirm true,mousedown b,mouseup b,click b"
	got := ""
	for range 50 {
		if got = evalString(t, tab, "seen.join()"); got == want {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != want {
		t.Fatalf("the page saw %q, want %q", got, want)
	}
}

// TestClickByNumberGuardOutOfReach: a page that replaces
// Event.prototype.stopImmediatePropagation and preventDefault with
// functions that do nothing cannot unarm the guard of a click by number,
// which runs in a world of its own: a backdrop that the button's
// mousedown handler puts over the page (a menu that opens on the press)
// gets none of the release and the click, and the click fails saying so.
func TestClickByNumberGuardOutOfReach(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hostile</title><script>window.hits = [];
Event.prototype.stopImmediatePropagation = function () {};
Event.prototype.stopPropagation = function () {};
Event.prototype.preventDefault = function () {};</script>
<button id=b onclick="hits.push('b')">Pay</button>
<script>b.addEventListener('mousedown', () => {
  document.body.insertAdjacentHTML('beforeend', '<div id=cover style="position:fixed;inset:0;z-index:9" onpointerup="hits.push(\'cover up\')" onclick="hits.push(\'cover\')"></div>');
});</script>`)
	}))
	tab := obsOpen(t, base+"/")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	_, err := obsClick(t, tab, obsOne(t, o, "button", "Pay").ID)
	if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "then div#cover covered it") {
		t.Errorf("click: %v, want not_actionable: then div#cover covered it", err)
	}
	if got := evalString(t, tab, "hits.join()"); got != "" {
		t.Errorf("hits %q, want none", got)
	}
}

// TestClickAriaNamesElements: aria/ finds elements by their accessible
// name, not text by its own: aria/X on a button labelled "Close dialog"
// that shows X matches nothing (it pressed the button twice, then blamed
// it for covering itself), while aria/Close dialog clicks it once.
func TestClickAriaNamesElements(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Aria</title><script>window.hits = [];
addEventListener('pointerdown', (e) => { if (e.isTrusted) hits.push('down'); }, true);</script>
<button aria-label="Close dialog" onclick="hits.push('x')">X</button>`)
	}))
	tab := obsOpen(t, base+"/")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		ctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
		defer cancel()
		_, err := tb.Click(ctx, tabs.Target{Selector: "aria/X"})
		return err
	})
	if errcode.Of(err) != errcode.ElementNotFound {
		t.Errorf("click aria/X: %v, want element_not_found", err)
	}
	err = clickTarget(t, tab, tabs.Target{Selector: "aria/Close dialog[role=\"button\"]"})
	if err != nil {
		t.Errorf("click aria/Close dialog: %v", err)
	}
	if got := evalString(t, tab, "hits.join()"); got != "down,x" {
		t.Errorf("hits %q, want down,x", got)
	}
}

// TestClickOffScreen: a control the page parked outside the viewport,
// where no scroll brings it, fails saying so, not as covered by
// "nothing"; its label is clicked instead.
func TestClickOffScreen(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Off</title>
<input type=checkbox id=a style="position:absolute;left:-9999px"><label for=a>Offscreen box</label>`)
	}))
	tab := obsOpen(t, base+"/")
	click := func(sel string) error {
		return run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
			_, err := tb.Click(ctx, tabs.Target{Selector: sel})
			return err
		})
	}
	if err := click("#a"); errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "is outside the viewport") {
		t.Errorf("click #a: %v, want not_actionable: is outside the viewport", err)
	}
	if err := click("label"); err != nil {
		t.Errorf("click its label: %v", err)
	}
	if got := evalString(t, tab, "String(a.checked)"); got != "true" {
		t.Errorf("checked %q, want true", got)
	}
}

// TestClickFrameChainUnderOverlay: a button of a same-origin iframe
// found by a selector chain (iframe >> ...) is hit-tested on the top page
// too, as by number: under an overlay of the parent page that goes 1.2 s
// after load it is clicked once the overlay has gone, and under one that
// stays the click fails as covered, with the overlay's own pointer
// handlers never run.
func TestClickFrameChainUnderOverlay(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/inner" {
			fmt.Fprint(w, `<!doctype html><button onclick="parent.log.push('pay')">Pay in frame</button>`)
			return
		}
		goes := ""
		if r.URL.Query().Get("goes") != "" {
			goes = `<script>addEventListener('load', () => setTimeout(() => ov.remove(), 1200));</script>`
		}
		fmt.Fprint(w, `<!doctype html><title>Overlay</title><script>window.log = [];</script>
<iframe src="/inner" style="position:absolute;left:10px;top:10px;width:300px;height:100px;border:0"></iframe>
<div id=ov style="position:fixed;inset:0;background:rgba(255,255,255,.5);z-index:3" onpointerdown="log.push('overlay down')" onpointerup="log.push('overlay up')" onclick="log.push('overlay')"></div>`+goes)
	}))
	for _, c := range []struct {
		query, want string
		ok          bool
	}{{"?goes=1", "pay", true}, {"", "", false}} {
		tab := obsOpen(t, base+"/"+c.query)
		err := clickTarget(t, tab, tabs.Target{Selector: `iframe >> aria/Pay in frame[role="button"]`})
		switch {
		case c.ok && err != nil:
			t.Errorf("click under an overlay that goes: %v", err)
		case !c.ok && (errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "is covered by div#ov")):
			t.Errorf("click under an overlay that stays: %v, want not_actionable: is covered by div#ov", err)
		}
		if got := evalString(t, tab, "log.join()"); got != c.want {
			t.Errorf("page %q: log %q, want %q", c.query, got, c.want)
		}
	}
}

// TestClickChainTextXPath: text/, xpath/ and pierce/ parts of a scope
// chain search below what the part before matched: text/ inside a
// same-origin iframe (a clickable span with no role, as the recorder
// writes it), xpath/ relative to a row, pierce/ into the open shadow
// root of a host.
func TestClickChainTextXPath(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/inner" {
			fmt.Fprint(w, `<!doctype html><p>Terms</p><span style="cursor:pointer" onclick="parent.log.push('continue')">Continue here</span>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Chain</title><script>window.log = [];</script>
<div id=r1><button onclick="log.push('r1')">Edit</button><span id=h1></span></div>
<div id=r2><button onclick="log.push('r2')">Edit</button><span id=h2></span></div>
<iframe title="Terms" src="/inner" style="width:300px;height:100px;border:0"></iframe>
<script>for (const id of ['h1', 'h2']) document.getElementById(id).attachShadow({mode: 'open'}).innerHTML = '<button onclick="log.push(\'' + id + '\')">Inner</button>';</script>`)
	}))
	tab := obsOpen(t, base+"/")
	for _, sel := range []string{`iframe[title="Terms"] >> text/Continue here`, `#r2 >> xpath/.//button`, `#h1 >> pierce/button`} {
		if err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
			_, err := tb.Click(ctx, tabs.Target{Selector: sel})
			return err
		}); err != nil {
			t.Errorf("click %s: %v", sel, err)
		}
	}
	if got := evalString(t, tab, "log.join()"); got != "continue,r2,h1" {
		t.Errorf("log %q, want continue,r2,h1", got)
	}
}

// TestClickLinkInFrame: a click on a link inside a same-origin iframe
// (by a selector chain, and by number) returns once the frame's new
// document has committed, with a note saying the frame navigated, so
// that what runs right after it (an observation, a script) sees the new
// document, every time.
func TestClickLinkInFrame(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/frame":
			fmt.Fprint(w, `<!doctype html><a id=q href="/report?q=2">Q2 report</a><p style="margin-top:900px" id=end><a id=frag href="#end">To the end</a>`)
		case "/report":
			fmt.Fprint(w, `<!doctype html><h1>Report</h1><a id=back href="/frame">Back</a>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Dashboard</title><iframe title="Reports" src="/frame" style="width:300px;height:100px;border:0"></iframe>`)
		}
	}))
	tab := obsOpen(t, base+"/")
	// A link to a fragment of the frame's document is no wait.
	start := time.Now()
	if err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tabs.Target{Selector: `iframe >> #frag`})
		return err
	}); err != nil {
		t.Fatal(err)
	} else if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a click on a fragment link of the frame took %v", d.Round(time.Millisecond))
	}
	for i := range 8 {
		if i > 0 {
			// Back to the list, by a link of the frame too.
			if err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
				_, err := tb.Click(ctx, tabs.Target{Selector: `iframe >> #back`})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		target := tabs.Target{Selector: `iframe >> #q`}
		if i%2 == 1 {
			target = tabs.Target{ID: obsOne(t, obsObserve(t, tab, tabs.ObserveOptions{}), "link", "Q2 report").ID}
		}
		var res *tabs.ActionResult
		var got string
		err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
			var err error
			if res, err = tb.Click(ctx, target); err != nil {
				return err
			}
			raw, err := tb.Evaluate(ctx, `document.querySelector('iframe').contentWindow.location.pathname`, nil)
			got = strings.Trim(string(raw), `"`)
			return err
		})
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if got != "/report" || !strings.Contains(res.Note, "the frame navigated, to "+base+"/report?q=2") {
			t.Errorf("round %d: the frame shows %s right after the click, note %q; want /report and a note", i, got, res.Note)
		}
	}
}

// TestClickSameOriginFrameUnderOverlay: a button of a same-origin iframe
// under a transparent overlay of the parent page, which goes 1.2 s after
// load, is clicked once it has gone, as on a page of one document; the
// overlay never gets the click.
func TestClickSameOriginFrameUnderOverlay(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/inner" {
			fmt.Fprint(w, `<!doctype html><button onclick="parent.log.push('pay')">Pay in frame</button>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Overlay</title><script>window.log = [];</script>
<iframe src="/inner" style="position:absolute;left:10px;top:10px;width:300px;height:100px;border:0"></iframe>
<div id=ov style="position:absolute;left:0;top:0;width:400px;height:200px;opacity:0;z-index:3" onclick="log.push('overlay')"></div>
<script>addEventListener('load', () => setTimeout(() => ov.remove(), 1200));</script>`)
	}))
	tab := obsOpen(t, base+"/")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	if _, err := obsClick(t, tab, obsOne(t, o, "button", "Pay in frame").ID); err != nil {
		t.Fatalf("click under the overlay that goes: %v", err)
	}
	if got := evalString(t, tab, "log.join()"); got != "pay" {
		t.Errorf("log %q, want pay", got)
	}
}

// TestClickScrollsOnlyWhenNeeded: a click on an element a person can
// click where it is scrolls nothing (the page's scroll handlers, a header
// that hides on scroll, stay quiet), by selector and by number; one under
// a sticky header, or clipped away in a scrolled box, is scrolled into
// view and clicked as before.
func TestClickScrollsOnlyWhenNeeded(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Scroll</title><style>body{margin:0;height:5000px} #hdr{position:sticky;top:0;height:60px;background:#eee;z-index:2}</style>
<div id=hdr>Header</div><script>window.hits = []; window.scrolls = 0; addEventListener('scroll', () => scrolls++, true);</script>
<button id=v style="position:absolute;top:600px;left:20px" onclick="hits.push('v')">Visible</button>
<button id=u style="position:absolute;top:1010px;left:200px" onclick="hits.push('u')">Under the header</button>
<div id=box style="position:absolute;top:200px;left:400px;width:200px;height:100px;overflow:auto"><div style="height:450px"></div><button id=c onclick="hits.push('c')">In the box</button></div>`)
	}))
	tab := obsOpen(t, base+"/")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#v"}); err != nil {
			return err
		}
		obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
		if err != nil {
			return err
		}
		for _, e := range obs.Elements {
			if e.Name == "Visible" {
				_, err = tb.Click(ctx, tabs.Target{ID: e.ID})
				return err
			}
		}
		return fmt.Errorf("no element named Visible in %q", obs.Text())
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab, "hits.join() + ' scrollY=' + scrollY + ' scrolls=' + scrolls"); got != "v,v scrollY=0 scrolls=0" {
		t.Errorf("after two clicks on a button in view: %q, want v,v scrollY=0 scrolls=0", got)
	}
	evalString(t, tab, "scrollTo(0, 1000); hits.length = 0; 'ok'")
	err = run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#u"}); err != nil {
			return fmt.Errorf("#u: %w", err)
		}
		if _, err := tb.Click(ctx, tabs.Target{Selector: "#c"}); err != nil {
			return fmt.Errorf("#c: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab, "hits.join() + ' ' + (scrollY < 1000 && box.scrollTop > 0)"); got != "u,c true" {
		t.Errorf("after the clicks on a button under the sticky header and one clipped in a box: %q, want u,c true (both scrolled into view)", got)
	}
}

// TestActionsReleaseTheirElements: the elements actions worked on are not
// kept alive after them. A list that replaces its button on each click,
// each button carrying 800 KB, clicked 20 times by selector and 10 times
// by number, holds about as much as before the clicks once the page's
// garbage is collected: the handle of each clicked button (a remote
// object) is released when its click returns. Kept, they held 30 buttons
// (24 MB).
func TestActionsReleaseTheirElements(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Next</title><div id=box></div><script>let n = 0;
function make() { const b = document.createElement('button'); b.textContent = 'Next'; b.id = 'next'; b.big = new Array(200000).fill(n); b.onclick = () => { n++; b.remove(); make(); }; box.append(b); }
make();</script>`)
	}))
	tab := obsOpen(t, base+"/")
	heap := func(ctx context.Context, tb *tabs.Tab) (float64, error) {
		if _, err := tb.Send(ctx, "HeapProfiler.collectGarbage", nil); err != nil {
			return 0, err
		}
		raw, err := tb.Send(ctx, "Runtime.getHeapUsage", nil)
		if err != nil {
			return 0, err
		}
		var u struct{ UsedSize float64 }
		err = json.Unmarshal(raw, &u)
		return u.UsedSize, err
	}
	var before, after float64
	err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		if before, err = heap(ctx, tb); err != nil {
			return err
		}
		for range 20 {
			if _, err := tb.Click(ctx, tabs.Target{Selector: "#next"}); err != nil {
				return err
			}
		}
		for range 10 {
			obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
			if err != nil {
				return err
			}
			if len(obs.Elements) != 1 {
				return fmt.Errorf("observation %q, want the one button", obs.Text())
			}
			if _, err := tb.Click(ctx, tabs.Target{ID: obs.Elements[0].ID}); err != nil {
				return err
			}
		}
		// The release goes in the background after each action.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if after, err = heap(ctx, tb); err != nil || after-before <= 8e6 || time.Now().After(deadline) {
				return err
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, tab, "String(n)"); got != "30" {
		t.Fatalf("the page counted %s clicks, want 30", got)
	}
	if grown := (after - before) / 1e6; grown > 8 {
		t.Errorf("the page's heap grew by %.1f MB over 30 clicks on buttons of 0.8 MB each, want at most 8 MB (the buttons the clicks left are kept alive)", grown)
	}
}

// TestObserveScrolledBoxes: the controls inside a scroll container are
// offered over its whole scroll range, above where it stands as well as
// below, and past the end of the page's own (a person scrolls the box to
// them); those of a container that an ancestor's overflow clips away
// entirely are not.
func TestObserveScrolledBoxes(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Boxes</title>
<div id=a style="height:200px;width:300px;overflow:auto"><button>Top A</button><div style="height:400px"></div><button>Deep A</button><div style="height:1400px"></div><button>Far A</button></div>
<div style="overflow:hidden;height:100px;position:relative"><div style="position:absolute;top:150px;height:80px;overflow:auto"><button>Hidden B</button></div></div>
<div id=chips style="overflow:auto;white-space:nowrap;width:120px"><a href="#1">Chip one</a> <a href="#2">Chip two</a> <a href="#3">Chip three</a> <a href="#4">Chip four</a></div>`)
	}))
	tab := obsOpen(t, base+"/")
	var chips string
	names := func() string {
		var got []string
		for _, e := range observed(t, tab) {
			if e.Role == "button" {
				got = append(got, e.Name)
			}
			if e.Role == "scrollable" && e.Name == "chips" {
				chips = e.ScrollPosition
			}
		}
		return strings.Join(got, ",")
	}
	if got := names(); got != "Top A,Deep A,Far A" {
		t.Errorf("before scrolling the box: %q, want Top A,Deep A,Far A (Far A is past the end of the page's own scroll range; Hidden B's box is clipped away)", got)
	}
	// A row that scrolls sideways, under 40 px high, says it scrolls.
	if !strings.HasPrefix(chips, "0%/") || !strings.HasSuffix(chips, "px right") {
		t.Errorf("the chip row's scroll position %q, want 0%%/…px right", chips)
	}
	evalString(t, tab, "a.scrollTop = 300; 'ok'")
	if got := names(); got != "Top A,Deep A,Far A" {
		t.Errorf("with the box scrolled by 300 px: %q, want Top A,Deep A,Far A (Top A is above where the box stands)", got)
	}
}

// TestFillRefusesWhatTakesNoText: fill and type on a checkbox, a file
// input or a submit input fail at once, saying what to do instead, and
// leave the control as it was (a checkbox whose fill "had no effect"
// read as a page that undid it).
func TestFillRefusesWhatTakesNoText(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Controls</title><label>Agree <input type=checkbox id=c></label><input type=file id=f><input type=submit id=s value=Go onclick="return false">`)
	}))
	tab := obsOpen(t, base+"/")
	for _, c := range []struct{ sel, want string }{
		{"#c", "an input of type checkbox takes no text; click it"},
		{"#f", "an input of type file takes no text; use upload"},
		{"#s", "an input of type submit is a button and takes no text; click it"},
	} {
		err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
			_, err := tb.Fill(ctx, tabs.Target{Selector: c.sel}, "x")
			return err
		})
		if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), c.want) {
			t.Errorf("fill %s: %v, want not_actionable: %s", c.sel, err, c.want)
		}
	}
	if got := evalString(t, tab, "String(c.checked) + ' ' + f.files.length + ' ' + s.value"); got != "false 0 Go" {
		t.Errorf("after the fills: %q, want false 0 Go (nothing changed)", got)
	}
}

// TestFillRefusesAMalformedValue: a fill of a date, time, color or range
// input with a value the input would not keep fails with bad_request,
// naming the format, and leaves the field as it was (it used to set the
// value, which the input then dropped, and so lost what the field held).
func TestFillRefusesAMalformedValue(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Fields</title><input type=range id=range min=0 max=100><input type=date id=date><input type=color id=color><input type=number id=num value=50>`)
	}))
	tab := obsOpen(t, base+"/")
	fill := func(sel, v string) error {
		return run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
			_, err := tb.Fill(ctx, tabs.Target{Selector: sel}, v)
			return err
		})
	}
	for _, c := range [][2]string{{"#range", "80"}, {"#date", "2024-03-05"}, {"#color", "#FF8800"}} {
		if err := fill(c[0], c[1]); err != nil {
			t.Fatalf("fill %s %q: %v", c[0], c[1], err)
		}
	}
	for _, c := range []struct{ sel, v, want string }{
		{"#range", "abc", "give a number from 0 to 100"},
		{"#range", "150", "give a number from 0 to 100"},
		{"#date", "03/05/2024", "give yyyy-mm-dd"},
		{"#num", "abc", "give a number"},
	} {
		if err := fill(c.sel, c.v); errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), c.want) {
			t.Errorf("fill %s %q: %v, want bad_request: %s", c.sel, c.v, err, c.want)
		}
	}
	if got := evalString(t, tab, "[range.value, date.value, color.value, num.value].join(' ')"); got != "80 2024-03-05 #ff8800 50" {
		t.Errorf("the fields hold %q, want 80 2024-03-05 #ff8800 50 (the refused fills left them as they were)", got)
	}
	// An empty value clears a date (it reached the page as undefined,
	// and a color's fill failed with a TypeError); a color cannot be
	// empty, and says so.
	if err := fill("#date", ""); err != nil {
		t.Errorf("fill #date with nothing: %v", err)
	}
	if err := fill("#color", ""); errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "give #rrggbb") {
		t.Errorf("fill #color with nothing: %v, want bad_request: give #rrggbb", err)
	}
	if got := evalString(t, tab, "date.value + '|' + color.value"); got != "|#ff8800" {
		t.Errorf("after the empty fills: %q, want |#ff8800", got)
	}
}

// TestObserveAriaModal: an ARIA modal dialog (role dialog, aria-modal)
// whose backdrop covers the page is observed as a native modal <dialog>
// is: its controls, and nothing of the page behind it, which a person
// cannot reach. One that leaves the page usable (a chat panel in a corner
// marked aria-modal) hides nothing.
func TestObserveAriaModal(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := `<!doctype html><title>Modal</title><header><a href="#">Home</a> <button>Menu</button></header><ul><li><button>Row 1</button></li><li><button>Row 2</button></li></ul>`
		if r.URL.Path == "/panel" {
			page += `<div role=dialog aria-modal=true aria-label="Chat" style="position:fixed;right:0;bottom:0;width:200px;height:150px;background:#eee"><button>Send</button></div>`
		} else {
			page += `<div style="position:fixed;inset:0;background:rgba(0,0,0,.4)"><div role=dialog aria-modal=true aria-label="Sure" style="margin:100px auto;width:300px;background:#fff"><button>Close</button></div></div>
<div role=dialog aria-modal=true aria-label="Hidden drawer" style="display:none"><button>Drawer</button></div>`
		}
		fmt.Fprint(w, page)
	}))
	for _, c := range []struct{ path, want string }{
		{"/", `dialog "Sure" modal|button "Close"`},
		{"/panel", `link "Home"|button "Menu"|button "Row 1"|button "Row 2"|dialog "Chat" modal|button "Send"`},
	} {
		tab := obsOpen(t, base+c.path)
		var got []string
		for _, e := range observed(t, tab) {
			got = append(got, fmt.Sprintf("%s %q", e.Role, e.Name)+strings.Repeat(" modal", min(1, strings.Count(strings.Join(e.States, " "), "modal"))))
		}
		if g := strings.Join(got, "|"); g != c.want {
			t.Errorf("observe %s: %s, want %s", c.path, g, c.want)
		}
	}
}

// TestObserveFixedOffScreen: what a fixed element keeps outside the
// viewport (a drawer parked off screen, a dialog at left: -5000px) is no
// scroll away: it is not offered. What of it shows is.
func TestObserveFixedOffScreen(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Fixed</title><div style="height:3000px"><button>Main</button></div>
<nav style="position:fixed;left:-300px;top:0;width:250px;height:100%"><a href="#a">Drawer link</a><button>Drawer button</button></nav>
<div style="position:fixed;right:0;bottom:0"><button>Chat</button></div>
<div role=dialog aria-modal=true aria-label="Parked" style="position:fixed;left:-5000px;top:0"><button>Parked OK</button></div>`)
	}))
	tab := obsOpen(t, base+"/")
	var got []string
	for _, e := range observed(t, tab) {
		got = append(got, e.Role+" "+e.Name)
	}
	if g := strings.Join(got, "|"); g != "button Main|button Chat" {
		t.Errorf("observe: %s, want button Main|button Chat", g)
	}
}

// observed observes tab with the default options and returns its
// elements, failing the test when the observation fails.
func observed(t *testing.T, tab *tabs.Tab) []observe.Element {
	t.Helper()
	var els []observe.Element
	err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
		if err == nil {
			els = obs.Elements
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return els
}

// TestClickHoverDisablesOrHides: a button that the page disables, or
// hides, in the animation frame after the pointer arrives (a mouseover
// handler that asks for one), hides at once, or disables at once and
// hides in the next frame. The click, by number and by CSS, text/ and
// aria/ selector, fails with the reason, and the page sees no press: a
// disabled button as disabled, once it stays so on a page at rest
// (before, a click that started over could press it, and Chromium gives
// a disabled control the press's pointer events and no click, which was
// reported as a page listener that stopped the click); a hidden one at
// once, as hidden by the pointer (before, the click that started over
// waited for it to show until its timeout).
func TestClickHoverDisablesOrHides(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		effect := map[string]string{
			"disable":  "requestAnimationFrame(() => { b.disabled = true; })",
			"hide":     "requestAnimationFrame(() => { b.style.visibility = 'hidden'; })",
			"hide-now": "b.style.visibility = 'hidden'",
			// Disabled at once (by a timer), hidden in the next frame.
			"disable-hide": "setTimeout(() => { b.disabled = true; }), requestAnimationFrame(() => { b.style.visibility = 'hidden'; })",
		}[r.URL.Query().Get("mode")]
		fmt.Fprintf(w, `<!doctype html><title>Hover</title><button id=b style="margin:40px">Go</button>
<script>window.seen = [];
for (const t of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']) addEventListener(t, (e) => seen.push(e.type), true);
b.addEventListener('mouseover', () => { %s; });</script>`, effect)
	}))
	// A text/ or aria/ selector matches only what shows: the click that
	// starts over checks the element it had, rather than wait for a match.
	selectors := []string{"", "#b", "text/Go", `aria/Go[role="button"]`}
	for _, mode := range []string{"disable", "hide", "hide-now", "disable-hide"} {
		for round := range 4 {
			tab := obsOpen(t, fmt.Sprintf("%s/?mode=%s&round=%d", base, mode, round))
			tg := tabs.Target{Selector: selectors[round]}
			if tg.Selector == "" {
				tg = tabs.Target{ID: obsOne(t, obsObserve(t, tab, tabs.ObserveOptions{}), "button", "Go").ID}
			}
			err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
				_, err := tb.Click(ctx, tg)
				return err
			})
			want := "is disabled"
			if mode != "disable" {
				want = "became hidden as the pointer reached it"
			}
			if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, round %d (%+v): %v (%s), want not_actionable saying %q", mode, round, tg, err, errcode.Of(err), want)
			}
			if got := evalString(t, tab, "seen.join()"); got != "" {
				t.Errorf("%s, round %d: the page saw %q of the click, want nothing", mode, round, got)
			}
		}
	}
}

// TestClickMoveDisablesForAMoment: a button the page disables for 300 ms
// on every mouse move over it. The quick try's press is refused (the move
// disabled it), and the try after it, once the button is enabled again,
// presses without another mouse move, as a person's press comes where the
// pointer rests: the page gets one press and one click, and the click
// succeeds. Before, each try moved the pointer again and disabled the
// button again, until the timeout, which sometimes came after the press
// was refused and read as success.
func TestClickMoveDisablesForAMoment(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Move</title><button id=b style="margin:40px">Go</button>
<script>window.seen = [];
for (const t of ['pointerdown', 'mousedown', 'click']) addEventListener(t, (e) => seen.push(e.type), true);
b.onclick = () => seen.push('handler');
b.addEventListener('mousemove', () => { b.disabled = true; setTimeout(() => { b.disabled = false; }, 300); });</script>`)
	}))
	for round := range 4 {
		tab := obsOpen(t, fmt.Sprintf("%s/?%d", base, round))
		tg := tabs.Target{Selector: "#b"}
		if round%2 == 1 {
			tg = tabs.Target{ID: obsOne(t, obsObserve(t, tab, tabs.ObserveOptions{}), "button", "Go").ID}
		}
		err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
			_, err := tb.Click(tabs.WithActionTimeout(ctx, 4*time.Second), tg)
			return err
		})
		if got := evalString(t, tab, "seen.join()"); err != nil || got != "pointerdown,mousedown,click,handler" {
			t.Errorf("round %d (%+v): %v; the page saw %q, want one press and its click", round, tg, err, got)
		}
	}
}

// TestClickCoverPutBackOnHover: a transparent cover the page puts over a
// button whenever the pointer comes over it, and takes down after 300 ms
// (when Chromium sends the pointer's mouseover again, and the page puts
// up another). A person could never click the button: the click fails as
// covered by it after the 1.5 s of a cover that stays, not after its whole
// timeout, and the cover never gets a click.
func TestClickCoverPutBackOnHover(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Cover</title><div id=w style="position:relative;margin:40px;width:300px;height:80px"><button id=b>Go</button></div>
<script>window.seen = [];
b.onclick = () => seen.push('button');
w.addEventListener('mouseover', () => {
  if (document.getElementById('c')) return;
  const c = document.createElement('div'); c.id = 'c';
  c.style.cssText = 'position:absolute;inset:0;z-index:9';
  c.onclick = () => seen.push('cover');
  w.appendChild(c); setTimeout(() => c.remove(), 300);
});</script>`)
	}))
	for round := range 2 {
		tab := obsOpen(t, fmt.Sprintf("%s/?%d", base, round))
		start := time.Now()
		err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
			_, err := tb.Click(tabs.WithActionTimeout(ctx, 15*time.Second), tabs.Target{Selector: "#b"})
			return err
		})
		took := time.Since(start)
		if errcode.Of(err) != errcode.NotActionable || !strings.Contains(err.Error(), "covered by div#c") || took > 8*time.Second {
			t.Errorf("round %d: %v (%s) after %v; want not_actionable, covered by div#c, well before the 15 s timeout", round, err, errcode.Of(err), took)
		}
		if got := evalString(t, tab, "seen.join()"); got != "" {
			t.Errorf("round %d: the page's click handlers saw %q, want none", round, got)
		}
	}
}

// TestClickSelectorNotesLabelChange: a CSS selector's click goes to what
// matches it at the press; when the page put a button that reads other
// in its place as the pointer arrived (Go → Delete, in the next frame),
// the result says so. A button that changes its label in its own click
// handler (Follow → Following) gets no note.
func TestClickSelectorNotesLabelChange(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Swap</title><div id=wrap style="padding:40px"><button class=act>Go</button></div>
<button id=follow onclick="this.textContent = 'Following'">Follow</button>
<script>window.seen = [];
const b = document.querySelector('.act'); b.onclick = () => seen.push('go');
b.addEventListener('mouseenter', () => requestAnimationFrame(() => {
  const n = document.createElement('button'); n.className = 'act'; n.textContent = 'Delete';
  n.onclick = () => seen.push('delete'); b.replaceWith(n);
}), {once: true});</script>`)
	}))
	tab := obsOpen(t, base)
	var res *tabs.ActionResult
	err := obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		res, err = tb.Click(ctx, tabs.Target{Selector: ".act"})
		return err
	})
	want := `".act" showed "Go" when it was found and "Delete" at the press`
	if err != nil || res == nil || !strings.Contains(res.Note, want) || evalString(t, tab, "seen.join()") != "delete" {
		t.Errorf("click .act: %+v, %v; want success with a note saying %q, and the page's delete handler", res, err, want)
	}
	err = obsDo(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		res, err = tb.Click(ctx, tabs.Target{Selector: "#follow"})
		return err
	})
	if err != nil || res == nil || res.Note != "" || evalString(t, tab, "follow.textContent") != "Following" {
		t.Errorf("click #follow: %+v, %v; want success, no note, and the label Following", res, err)
	}
}
