package tabs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/tabs"
)

// benchTab opens a tab on path for a benchmark.
func benchTab(b *testing.B, path string) *tabs.Tab {
	b.Helper()
	name := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: srv.URL + path, WaitUntil: "load"}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	tab, err := sup.Tab(name)
	if err != nil {
		b.Fatal(err)
	}
	return tab
}

// BenchmarkClick measures a click by selector end to end: resolve, the
// actionability checks (one or two animation frames and the hit test), the mouse
// events and the check that the element got the click. "animated" is the
// form on a page whose animation frames keep flowing (a requestAnimationFrame
// loop), where a mouse move is delivered only with the next vsync.
func BenchmarkClick(b *testing.B) {
	for _, c := range []struct{ page, sel string }{
		{"/form", "#go"}, {"/form", "text/Sign in"}, {"/form", `aria/Sign in[role="button"]`}, {"/animated", "#go"},
	} {
		name := c.sel
		if c.page != "/form" {
			name = strings.TrimPrefix(c.page, "/") + "/" + c.sel
		}
		sel := c.sel
		b.Run(name, func(b *testing.B) {
			tab := benchTab(b, c.page)
			err := sup.Run(context.Background(), tab.Name(), 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := tb.Click(ctx, tabs.Target{Selector: sel}); err != nil {
						return err
					}
				}
				return nil
			}))
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
