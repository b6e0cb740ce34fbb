package tabs_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/tabs"
)

// BenchmarkOpenObserve measures open of a page on a live tab plus the
// first observation, with the old default wait (networkidle2) and the new
// one (settled) side by side, and load for the floor, on a page without
// scripts, an SPA shell whose content comes from a fetch answered 150 ms
// after load, a page whose requests never end, and a page whose image
// holds its load 300 ms past DOMContentLoaded and which renders on the
// second animation frame after load (settlePages' /framed), and a page
// with a cross-site iframe (/xframe). Besides ns/op
// it reports the median of the iterations in ms (median-ms).
func BenchmarkOpenObserve(b *testing.B) {
	ps := settlePages(b)
	for _, page := range []string{"static", "spa", "never", "framed", "xframe"} {
		for _, wait := range []string{"load", "networkidle2", "settled"} {
			b.Run(page+"/"+wait, func(b *testing.B) {
				name := fmt.Sprintf("bench-open-%s-%s", page, wait)
				ctx := context.Background()
				if _, err := sup.Open(ctx, tabs.OpenOptions{Name: name, URL: ps.URL + "/static", WaitUntil: "load"}); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
				var took []time.Duration
				for b.Loop() {
					start := time.Now()
					if _, err := sup.Open(ctx, tabs.OpenOptions{Name: name, URL: ps.URL + "/" + page, WaitUntil: wait}); err != nil {
						b.Fatal(err)
					}
					err := sup.Run(ctx, name, 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
						_, err := tb.Observe(ctx, tabs.ObserveOptions{})
						return err
					}))
					if err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "median-ms")
			})
		}
	}
}
