package tabs_test

import (
	"context"
	"fmt"
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
// events and the check that the element got the click.
func BenchmarkClick(b *testing.B) {
	for _, sel := range []string{"#go", "text/Sign in", `aria/Sign in[role="button"]`} {
		b.Run(sel, func(b *testing.B) {
			tab := benchTab(b, "/form")
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
