package script_test

import (
	"strings"
	"testing"
	"time"
)

// TestMarksAndClickAtStaleness draws set-of-marks on a screenshot, clicks
// a point read off the model's copy, and refuses a point from a screenshot
// older than the latest scroll.
func TestMarksAndClickAtStaleness(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const shot = await tab.screenshot({marks: true, silent: true});
assert(shot.width === 1024, 'width ' + shot.width);
// The overlay is gone after the capture.
assert(await tab.evaluate(() => !document.getElementById('__tabpilot_marks')), 'marks left on the page');
// The Add button's centre in image pixels.
const r = await tab.evaluate(() => { const b = document.getElementById('inc').getBoundingClientRect(); return {x: b.left + b.width / 2, y: b.top + b.height / 2}; });
const hit = await tab.clickAt(r.x * shot.scale, r.y * shot.scale, {screenshot: shot.id});
const after = await tab.evaluate(() => document.getElementById('out').textContent);
await tab.evaluate(() => { document.body.style.height = '5000px'; window.scrollTo(0, 300); });
let stale = 'no error';
try { await tab.clickAt(10, 10, {screenshot: shot.id}); } catch (e) { stale = e.code; }
return [hit.element, after, stale].join('|');
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(out)
	if len(got) != 1 {
		t.Fatalf("output %q", got)
	}
	parts := strings.Split(got[0], "|")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "button#inc") || parts[1] != "n=1" || parts[2] != "stale_element" {
		t.Fatalf("got %q, want the hit button#inc, n=1 and stale_element after scrolling", got[0])
	}
	if len(out.Screenshots) != 1 || out.Screenshots[0].Marks < 3 {
		t.Fatalf("screenshots = %+v, want marks on at least 3 elements", out.Screenshots)
	}
}
