package script_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// TestPDFAndEmulate calls tab.pdf and tab.emulate from a run: the PDF has
// the page's sentence, and an emulated iPhone 15 in Berlin shows in the
// page after a reload, with navigator.userAgent equal to the header sent.
func TestPDFAndEmulate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>Print</title><p>The printed sentence.</p><p id=ua>%s</p>`, r.Header.Get("User-Agent"))
	}))
	defer srv.Close()
	name := openAt(t, srv.URL+"/", tabs.OpenOptions{})
	path := filepath.Join(t.TempDir(), "run.pdf")
	got := result(t, name, fmt.Sprintf(`const r = await tab.pdf({path: %q, format: 'A4', printBackground: true, margins: {top: '1cm'}, pageRanges: '1'}); return r.path + ' ' + r.pages + ' ' + (r.bytes > 1000)`, path))
	if got != path+" 1 true" {
		t.Errorf("pdf: %q", got)
	}
	if _, err := exec.LookPath("pdftotext"); err == nil {
		out, err := exec.Command("pdftotext", path, "-").Output()
		if err != nil || !strings.Contains(string(out), "The printed sentence.") {
			t.Errorf("pdftotext: %q %v", out, err)
		}
	}
	got = result(t, name, `const r = await tab.emulate({device: 'iPhone 15', timezone: 'Europe/Berlin', geolocation: {latitude: 52.52, longitude: 13.4}});
await tab.reload();
const p = await tab.evaluate(() => new Promise((ok) => navigator.geolocation.getCurrentPosition((g) => ok([navigator.userAgent === document.getElementById('ua').textContent, innerWidth, devicePixelRatio, Intl.DateTimeFormat().resolvedOptions().timeZone, g.coords.latitude].join(' ')), (e) => ok('geo ' + e.code + ' ' + e.message))));
return r.options.device + ' | ' + p`)
	if got != "iPhone 15 | true 393 3 Europe/Berlin 52.52" {
		t.Errorf("emulate: %q", got)
	}
	got = result(t, name, `await tab.emulate({reset: true}); await tab.reload(); return await tab.evaluate(() => [innerWidth > 393, navigator.maxTouchPoints].join(' '))`)
	if got != "true 0" {
		t.Errorf("after reset: %q", got)
	}
	_, err := run(t, name, `await tab.emulate({devise: 'iPhone 15'})`, 10*time.Second)
	if errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "devise") {
		t.Errorf("unknown option: %v", err)
	}
}
