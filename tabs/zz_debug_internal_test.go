package tabs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

func TestZZDebugTiming(t *testing.T) {
	if os.Getenv("TP_PAGE") == "" {
		t.Skip()
	}
	srv := httptest.NewServer(http.StripPrefix("/real/", http.FileServer(http.Dir("../../shared/pages/readability"))))
	defer srv.Close()
	sup := NewSupervisor(&Options{Browser: browser.Options{Args: testenv.BrowserArgs}})
	defer sup.Shutdown(context.Background())
	ctx := context.Background()
	if _, err := sup.Open(ctx, OpenOptions{Name: "d", URL: srv.URL + os.Getenv("TP_PAGE"), WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	tab, _ := sup.Tab("d")
	tab.observeSetup()
	for i := 0; i < 4; i++ {
		t0 := time.Now()
		frames, owners, err := tab.frames(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		var durs []string
		for _, f := range frames {
			tf := time.Now()
			w, _ := tab.world(ctx, f, false)
			tw := time.Now()
			args, _ := tab.walkArgs(ctx, f, w, walkOpts{Refs: refsAll}, tab.ob.lastActed)
			ta := time.Now()
			tc := time.Now()
			wr, _, _ := tab.callWalker(ctx, f.sess, runtime.CallFunctionOnParams{ExecutionContextID: w.ctxID, Arguments: args}, false)
			if wr != nil && f.top {
				t.Logf("callWalker alone %v", time.Since(tc))
			}
			ta = time.Now()
			res, err := tab.walkIn(ctx, f, w.ctxID, args, walkOpts{Refs: refsAll})
			items, ms, by := 0, 0, 0
			if err == nil {
				items, ms, by = len(res.walk.Items), res.ms, res.bytes
			}
			if items > 0 || f.top {
				durs = append(durs, fmt.Sprintf("%s world=%v args=%v(%d) walk=%v js=%dms bytes=%d items=%d err=%v", f.url, tw.Sub(tf), ta.Sub(tw), len(args), time.Since(ta), ms, by, items, err))
			}
		}
		owners()
		t.Logf("frames %v (%d)\n%v", t1.Sub(t0), len(frames), durs)
		t0 = time.Now()
		if _, err := tab.Observe(ctx, ObserveOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Logf("observe %v", time.Since(t0))
	}
}
