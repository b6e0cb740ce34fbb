package tabs_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// obsServer serves the observation test pages: testdata/observe/*, the
// observe package's recorded pages and the readability pages.
func obsServer(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/o/", http.StripPrefix("/o/", http.FileServer(http.Dir("testdata/observe"))))
	mux.Handle("/pages/", http.StripPrefix("/pages/", http.FileServer(http.Dir("observe/testdata/pages"))))
	mux.Handle("/real/", http.StripPrefix("/real/", http.FileServer(http.Dir(readabilityDir))))
	mux.HandleFunc("/gen/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/gen/"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(genPage(n)))
	})
	mux.HandleFunc("/huge/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/huge/"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(hugePage(n)))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// genPage is a page of n interactive elements: n/2 list items, each with
// its text, a link "Product i" and a button "Buy".
func genPage(n int) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html lang=en><meta charset=utf-8><title>Generated</title><main><h1>Products</h1><ul>\n")
	for i := 0; i < n/2; i++ {
		fmt.Fprintf(&b, "<li>Item %d in stock <a href=\"/p/%d\">Product %d</a> <button>Buy</button></li>\n", i, i, i)
	}
	b.WriteString("</ul></main>")
	return b.String()
}

// hugePage is a table of rows rows of three controls each: a checkbox, a
// text field and a button.
func hugePage(rows int) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html lang=en><meta charset=utf-8><title>Huge</title><main><h1>Orders</h1><table>\n")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&b, "<tr><td><input type=checkbox aria-label=\"Select row %d\"></td><td>Row %d</td><td><input aria-label=\"Note %d\" value=\"v%d\"></td><td><button>Edit %d</button></td></tr>\n", i, i, i, i, i)
	}
	b.WriteString("</table></main>")
	return b.String()
}

const readabilityDir = "../../shared/pages/readability"

// openAt opens a fresh tab at url.
func openAt(t *testing.T, url string) *tabs.Tab {
	t.Helper()
	name := "obs-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: url, WaitUntil: "load"}); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	tab, err := sup.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func observeTab(t *testing.T, tab *tabs.Tab, o tabs.ObserveOptions) *observe.Observation {
	t.Helper()
	var obs *observe.Observation
	err := sup.Run(context.Background(), tab.Name(), 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		obs, err = tb.Observe(ctx, o)
		return err
	}))
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	return obs
}

func TestObserveSmoke(t *testing.T) {
	s := obsServer(t)
	for _, p := range []string{"/pages/login.html", "/pages/widgets.html", "/pages/frames.html", "/pages/shop.html"} {
		tab := openAt(t, s.URL+p)
		time.Sleep(500 * time.Millisecond)
		obs := observeTab(t, tab, tabs.ObserveOptions{})
		t.Logf("%s\n%s", p, obs.Text())
		obs = observeTab(t, tab, tabs.ObserveOptions{IncludeAll: true})
		t.Logf("%s all\n%s", p, obs.Text())
	}
}

func TestObserveTiming(t *testing.T) {
	s := obsServer(t)
	for _, p := range strings.Split(os.Getenv("TP_PAGES"), ",") {
		tab := openAt(t, s.URL+p)
		for i := 0; i < 3; i++ {
			t0 := time.Now()
			obs := observeTab(t, tab, tabs.ObserveOptions{})
			txt := obs.Text()
			t.Logf("%s run%d %v elements=%d omitted=%d bytes=%d", p, i, time.Since(t0), len(obs.Elements), obs.Omitted, len(txt))
		}
		t0 := time.Now()
		obs := observeTab(t, tab, tabs.ObserveOptions{Query: "4321"})
		t.Logf("query %v\n%s", time.Since(t0), obs.Text())
	}
}
