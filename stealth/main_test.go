package stealth

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var verbose = flag.Bool("stealth.dump", false, "log every surface's values")

// briefFlags are the launch flags every test browser of the project uses.
var briefFlags = []chromedp.ExecAllocatorOption{
	chromedp.ExecPath("/usr/bin/chromium"),
	chromedp.NoSandbox, chromedp.DisableGPU,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("no-first-run", true),
}

// flagOptions turns "--name=value" strings into chromedp allocator options.
func flagOptions(flags []string) []chromedp.ExecAllocatorOption {
	var opts []chromedp.ExecAllocatorOption
	for _, f := range flags {
		name, val, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, val))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	return opts
}

// stealthOpts are a stealthy headless launch's options: chromedp's defaults (which keep
// --enable-automation, the patches must hide it), the project's test flags, and Flags(o).
func stealthOpts(o *Options) []chromedp.ExecAllocatorOption {
	opts := append([]chromedp.ExecAllocatorOption(nil), chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts, briefFlags...)
	return append(opts, flagOptions(Flags(o))...)
}

// testBrowser is a browser started on first use and stopped by TestMain.
type testBrowser struct {
	name string
	opts []chromedp.ExecAllocatorOption
	once sync.Once
	ctx  context.Context
	stop func() // nil until started
	err  error
}

var (
	server *httptest.Server
	// plain is a headless browser launched as without stealth (stealth off): chromedp's defaults
	// and the project's test flags.
	plain = &testBrowser{name: "plain", opts: append(append([]chromedp.ExecAllocatorOption(nil), chromedp.DefaultExecAllocatorOptions[:]...), briefFlags...)}
	// stealthy is a headless browser launched with Flags(nil) added (stealth on). It keeps
	// chromedp's --enable-automation, which the patches must hide.
	stealthy = &testBrowser{name: "stealth"}
	// retina is stealthy with a device scale factor of 2, for the hairline test; the concurrency
	// test uses it too.
	retina   = &testBrowser{name: "retina"}
	browsers = []*testBrowser{plain, stealthy, retina}
	// launchUA is the user agent given to Flags: what a browser package passes once it knows the
	// version (chromium --version).
	launchUA string
)

func (b *testBrowser) start() (context.Context, error) {
	b.once.Do(func() {
		start := time.Now()
		// The first browser a test needs starts the others too, concurrently: most runs need all.
		for _, o := range browsers {
			if o != b {
				go func() { _, _ = o.start() }()
			}
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), b.opts...)
		ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
		if err := chromedp.Do(ctx); err != nil {
			cancel()
			acancel()
			b.err = fmt.Errorf("starting the %s browser: %w", b.name, err)
			return
		}
		b.ctx, b.stop = ctx, func() { cancel(); acancel() }
		if *verbose {
			fmt.Fprintf(os.Stderr, "the %s browser started in %v\n", b.name, time.Since(start))
		}
	})
	return b.ctx, b.err
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The tests wait on the browsers, not on Go's CPUs (-parallel defaults to GOMAXPROCS, 2 here):
	// run up to 8 at once unless -parallel is given.
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "8")
	}
	mux := http.NewServeMux()
	mux.Handle("/testdata/", http.StripPrefix("/testdata/", http.FileServer(http.Dir("testdata"))))
	mux.Handle("/botd/", http.StripPrefix("/botd/", http.FileServer(http.Dir(botdDist))))
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		h := map[string]string{}
		for k, v := range r.Header {
			h[strings.ToLower(k)] = strings.Join(v, ", ")
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(h)
	})
	// /docheaders/PATH serves testdata/PATH (an HTML page) with the headers of its own request as
	// window.DOC_HEADERS, which a page cannot read otherwise.
	mux.HandleFunc("/docheaders/", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/docheaders/"))))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		h := map[string]string{}
		for k, v := range r.Header {
			h[strings.ToLower(k)] = strings.Join(v, ", ")
		}
		js, _ := json.Marshal(h)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(strings.Replace(string(b), "<head>", "<head><script>window.DOC_HEADERS = "+string(js)+";</script>", 1)))
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := exec.Command("/usr/bin/chromium", "--version").Output()
	if f := strings.Fields(string(out)); err == nil && len(f) > 1 {
		launchUA = DefaultUserAgent(f[1])
	}
	stealthy.opts = stealthOpts(&Options{UserAgent: launchUA})
	retina.opts = stealthOpts(&Options{UserAgent: launchUA, DeviceScaleFactor: 2})
	server = httptest.NewUnstartedServer(mux)
	server.Listener = l
	server.Start()
	code := m.Run()
	for _, b := range browsers {
		b.once.Do(func() {}) // waits for a start under way; none begins after it
		if b.stop != nil {
			b.stop()
		}
	}
	server.Close()
	os.Exit(code)
}

// openTab opens a fresh tab on b (with the context options, e.g. WithNewBrowserContext) and
// installs stealth with o when on. cancel closes the tab.
func openTab(b *testBrowser, on bool, o *Options, copts ...chromedp.ContextOption) (context.Context, context.CancelFunc, error) {
	bctx, err := b.start()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := chromedp.NewContext(bctx, copts...)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("opening a tab on the %s browser: %w", b.name, err)
	}
	if on {
		if err := Install(ctx, o); err != nil {
			cancel()
			return nil, nil, fmt.Errorf("Install: %w", err)
		}
	}
	return ctx, cancel, nil
}

// loadResult navigates the tab to the path and returns the page's awaited window.<global>. The
// deadline is only a backstop for a hung browser: the pages bound their own waits (a worker or
// frame that does not answer in 90s reads "timeout", which the tests report), and a loaded
// machine can take a minute for a page.
func loadResult(ctx context.Context, path, global string) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(server.URL+path)); err != nil {
		return nil, fmt.Errorf("navigating to %s: %w", path, err)
	}
	expr := `new Promise((resolve) => { const f = () => window.` + global + ` ? resolve(window.` + global + `) : setTimeout(f, 10); f(); })`
	res, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("reading %s of %s: %w", global, path, err)
	}
	return res, nil
}

// pageResult navigates the tab to the path and returns the page's awaited window.<global>.
func pageResult(t *testing.T, ctx context.Context, path, global string) map[string]any {
	t.Helper()
	res, err := loadResult(ctx, path, global)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// load is one page load of loads: a fresh tab on b (stealth on with o, or off), the page at path
// and its window.<global>.
type load struct {
	b      *testBrowser
	on     bool
	o      *Options
	path   string
	global string
	copts  []chromedp.ContextOption
}

// surfaceLoad is the load of a surface page with stealth off (plain browser) or on (stealth
// browser, with o).
func surfaceLoad(name string, on bool, o *Options) load {
	b := plain
	if on {
		b = stealthy
	}
	return load{b: b, on: on, o: o, path: "/testdata/surfaces/" + name + ".html", global: "result"}
}

// runLoads runs the loads concurrently, each in a tab of its own, and returns their results in
// order, the funcs that close the tabs, and the first error.
func runLoads(ls ...load) ([]map[string]any, []context.CancelFunc, error) {
	res := make([]map[string]any, len(ls))
	cancels := make([]context.CancelFunc, len(ls))
	errs := make([]error, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Go(func() {
			ctx, cancel, err := openTab(l.b, l.on, l.o, l.copts...)
			if err != nil {
				errs[i] = err
				return
			}
			cancels[i] = cancel
			res[i], errs[i] = loadResult(ctx, l.path, l.global)
		})
	}
	wg.Wait()
	var live []context.CancelFunc
	for _, c := range cancels {
		if c != nil {
			live = append(live, c)
		}
	}
	for _, err := range errs {
		if err != nil {
			return res, live, err
		}
	}
	return res, live, nil
}

// closeAll closes tabs concurrently (chromedp closes one in a few round trips and waits until
// the browser no longer lists it).
func closeAll(cancels []context.CancelFunc) {
	var wg sync.WaitGroup
	for _, c := range cancels {
		wg.Go(c)
	}
	wg.Wait()
}

// loads runs the loads concurrently, each in a tab of its own that closes with the test, and
// returns their results in order; the first failure fails the test.
func loads(t *testing.T, ls ...load) []map[string]any {
	t.Helper()
	res, cancels, err := runLoads(ls...)
	t.Cleanup(func() { closeAll(cancels) })
	if err != nil {
		t.Fatal(err)
	}
	if *verbose {
		for i, l := range ls {
			t.Logf("%s stealth=%v: %s", l.path, l.on, jsonOf(res[i]))
		}
	}
	return res
}

// surface loads the surface page with stealth off (plain browser) or on (stealth browser, with o).
func surface(t *testing.T, name string, on bool, o *Options) map[string]any {
	t.Helper()
	return loads(t, surfaceLoad(name, on, o))[0]
}

// get walks a decoded JSON value by keys.
func get(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, keys ...string) string { s, _ := get(v, keys...).(string); return s }

func num(v any, keys ...string) float64 { f, _ := get(v, keys...).(float64); return f }

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }
