package egress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// No Chromium of this package may survive it.
	if left := testenv.ChromiumChildren(os.Getpid()); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "chromium processes left behind: %v\n", left)
		for _, p := range left {
			syscall.Kill(p, syscall.SIGKILL)
		}
		code = 1
	}
	os.Exit(code)
}

// launchChromium starts the package's one headless Chromium with the test
// flags and extra, and returns a tab's context. Cleanup closes it and kills
// whatever is left of its process group.
func launchChromium(t *testing.T, extra []string) context.Context {
	t.Helper()
	exe, err := exec.LookPath("/usr/bin/chromium")
	if err != nil {
		t.Skip("no /usr/bin/chromium")
	}
	dir := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(dir),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Setpgid = true
			cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		}),
	)
	for _, f := range append(append([]string{}, testenv.BrowserArgs...), extra...) {
		name, val, ok := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, val))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		testenv.KillDescendants(os.Getpid(), dir)
	})
	if err := chromedp.Do(ctx); err != nil { // no deadline: binds the browser's life
		t.Fatalf("launch chromium: %v", err)
	}
	return ctx
}

const e2ePage = `<!doctype html><title>egress e2e</title>
<script>
async function probe(u) {
  try { const r = await fetch(u); return 'ok:' + r.status + ':' + (await r.text()); }
  catch (e) { return 'err:' + e.name; }
}
function ws(u) {
  return new Promise(res => {
    let s;
    try { s = new WebSocket(u); } catch (e) { res('throw:' + e.name); return; }
    s.onmessage = e => { res('msg:' + e.data); s.close(); };
    s.onerror = () => res('error');
    setTimeout(() => res('timeout'), 20000);
  });
}
async function rtc(stun) {
  const pc = new RTCPeerConnection({iceServers: [{urls: stun}]});
  const cands = [];
  pc.onicecandidate = e => { if (e.candidate && e.candidate.candidate) cands.push(e.candidate.candidate); };
  pc.createDataChannel('x');
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise(res => {
    if (pc.iceGatheringState === 'complete') return res();
    pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') res(); };
    setTimeout(res, 15000);
  });
  pc.close();
  return JSON.stringify(cands);
}
window.results = (async () => ({
  public: await probe('http://api.public.test/data'),
  privateName: await probe('http://intranet.test/data'),
  privateLiteral: await probe('http://10.0.0.5/data'),
  loopback: await probe('http://127.0.0.1:PORT/data'),
  metadata: await probe('http://169.254.169.254/latest/meta-data/'),
  wsPublic: await ws('ws://public.test/ws'),
  wsPrivate: await ws('ws://intranet.test/ws'),
  wsLoopback: await ws('ws://127.0.0.1:PORT/ws'),
  rtc: await rtc('stun:127.0.0.1:UDPPORT'),
}))();
</script>`

// TestChromium loads a page from a public name through the proxy, in a
// real headless Chromium launched with LaunchFlags. The page's fetches and
// WebSockets to private, loopback and metadata addresses fail in the page
// and are counted as refusals; the public ones work; WebRTC sends no UDP.
// Without the guard each private probe would succeed: the test dialer
// would connect it to the test server, and 127.0.0.1:PORT is the server.
func TestChromium(t *testing.T) {
	h := newHarnessWith(t, func(h *harness, o *Options) {
		_, port, _ := net.SplitHostPort(h.plain.Listener.Addr().String())
		var n int
		fmt.Sscan(port, &n)
		// Allow the test server's real port, so that the loopback probe
		// is refused for being loopback, not for its port.
		o.AllowedPorts = []int{80, 443, n}
	})
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	_, port, _ := net.SplitHostPort(h.plain.Listener.Addr().String())
	_, udpPort, _ := net.SplitHostPort(udp.LocalAddr().String())
	h.mu.Lock()
	h.page = strings.NewReplacer("UDPPORT", udpPort, "PORT", port).Replace(e2ePage)
	h.mu.Unlock()

	// LaunchFlags come last, so its --host-resolver-rules replaces the
	// test default.
	ctx := launchChromium(t, LaunchFlags(h.addr))
	opCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	resp, err := chromedp.Run(opCtx, chromedp.NavigateResponse("http://public.test/page"))
	if err != nil {
		t.Fatalf("navigate: %v", err)
	}
	if resp.Status != 200 {
		t.Fatalf("page status %d", resp.Status)
	}
	title, err := chromedp.Run(opCtx, chromedp.Title())
	if err != nil || title != "egress e2e" {
		t.Fatalf("title %q, %v", title, err)
	}
	res, err := chromedp.Run(opCtx, chromedp.Evaluate[map[string]string]("window.results", chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("results: %v", err)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("page results: %s", b)

	if res["public"] != "ok:200:secret-data" {
		t.Errorf("public fetch = %q, want it to work", res["public"])
	}
	for _, k := range []string{"privateName", "privateLiteral", "loopback", "metadata"} {
		if !strings.HasPrefix(res[k], "err:") {
			t.Errorf("%s fetch = %q, want it to fail", k, res[k])
		}
	}
	if res["wsPublic"] != "msg:hello public.test" {
		t.Errorf("public WebSocket = %q", res["wsPublic"])
	}
	for _, k := range []string{"wsPrivate", "wsLoopback"} {
		if res[k] != "error" {
			t.Errorf("%s = %q, want error", k, res[k])
		}
	}
	if strings.Contains(strings.ToLower(res["rtc"]), " udp ") {
		t.Errorf("WebRTC gathered UDP candidates: %s", res["rtc"])
	}
	udp.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if n, from, err := udp.ReadFrom(make([]byte, 1500)); err == nil {
		t.Errorf("WebRTC sent %d bytes of UDP from %v around the proxy", n, from)
	}

	// The refusals, each seen by the proxy.
	want := []struct {
		host, kind string
		reason     Reason
	}{
		{"intranet.test", "http", ReasonPrivate},
		{"10.0.0.5", "http", ReasonPrivate},
		{"169.254.169.254", "http", ReasonLinkLocal},
		{"intranet.test", "connect", ReasonPrivate},
		{"127.0.0.1", "connect", ReasonLoopback},
	}
	recent := h.p.Stats().Recent
	for _, w := range want {
		found := false
		for _, r := range recent {
			if r.Host == w.host && r.Kind == w.kind && r.Reason == w.reason {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s refusal of %s (%s) in %+v", w.kind, w.host, w.reason, recent)
		}
	}
	if s := h.p.Stats(); s.Refused < uint64(len(want))+1 { // +1: the loopback fetch
		t.Errorf("refused = %d", s.Refused)
	}
	h.assertNotDialed("10.0.0.5", "169.254.169.254", "127.0.0.1")

	// A top-level navigation to a private name: over http the proxy's 403
	// page is what loads; over https the tunnel fails.
	resp, err = chromedp.Run(opCtx, chromedp.NavigateResponse("http://intranet.test/"))
	if err != nil {
		t.Fatalf("navigate to a private name: %v", err)
	}
	if resp.Status != http.StatusForbidden || resp.Headers["X-Tabpilot-Egress"] != "refused; reason=private" {
		t.Errorf("http navigation to a private name: status %d headers %v", resp.Status, resp.Headers)
	}
	since := h.p.Stats().Refused
	err = chromedp.Do(opCtx, chromedp.Navigate("https://intranet.test/"))
	var le *chromedp.LoadError
	if !errors.As(err, &le) || le.ErrorText != "net::ERR_TUNNEL_CONNECTION_FAILED" {
		t.Errorf("https navigation to a private name: %v", err)
	}
	// What the lead turns into blocked_destination. (The favicon request
	// of the http page may land after since too, so the kind may vary.)
	r, ok := h.p.RefusalFor("https://intranet.test/", since)
	if !ok || r.Host != "intranet.test" || r.Reason != ReasonPrivate {
		t.Errorf("RefusalFor = %+v, %v", r, ok)
	}
	tunnel := false
	for _, r := range h.p.RefusalsSince(since) {
		tunnel = tunnel || r.Kind == "connect" && r.Host == "intranet.test" && r.Port == 443
	}
	if !tunnel {
		t.Errorf("no refused CONNECT intranet.test:443 in %+v", h.p.RefusalsSince(since))
	}
}
