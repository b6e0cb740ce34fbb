// Command soak runs open/run/close cycles against one tabpilot daemon and
// reports the daemon's RSS and goroutine count at the start and the end,
// and the number of Chromium processes after (issue 5's soak benchmark).
//
//	go build -o bin/tabpilot ./cmd/tabpilot && go run ./bench/soak -bin bin/tabpilot -n 500
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/client"
)

func main() {
	bin := flag.String("bin", "bin/tabpilot", "the tabpilot binary")
	n := flag.Int("n", 500, "cycles")
	flag.Parse()
	if err := run(*bin, *n); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func run(bin string, n int) error {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Soak %s</title><button onclick="this.textContent='done'">Go</button>`, r.URL.Path)
	}))
	defer srv.Close()
	exe, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tabpilot-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts := &client.Options{Session: "soak", Dir: dir, Executable: exe,
		Env: append(os.Environ(), `TABPILOT_BROWSER_ARGS=--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"`)}
	ctx := context.Background()
	call := func(method string, params any) (*api.Result, error) {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		r, err := client.Call(cctx, opts, method, params)
		if err == nil && r.IsError {
			err = fmt.Errorf("%s: %s", method, r.Text())
		}
		return r, err
	}
	defer client.Stop(ctx, opts)
	// Warm up: one cycle, so the start figures include a launched browser's
	// steady state.
	status := func() (map[string]any, error) {
		r, err := call(client.MethodStatus, nil)
		if err != nil {
			return nil, err
		}
		return r.Details, nil
	}
	cycle := func(i int) error {
		if _, err := call("open", map[string]any{"url": fmt.Sprintf("%s/%d", srv.URL, i), "wait_until": "load"}); err != nil {
			return err
		}
		r, err := call("run", map[string]any{"code": `await tab.click("button"); return await tab.evaluate(() => document.querySelector("button").textContent)`})
		if err != nil {
			return err
		}
		if r.Text() != "done" {
			return fmt.Errorf("cycle %d: run said %q", i, r.Text())
		}
		_, err = call("close", map[string]any{})
		return err
	}
	if err := cycle(-1); err != nil {
		return err
	}
	start, err := status()
	if err != nil {
		return err
	}
	pid := int(start["pid"].(float64))
	t0 := time.Now()
	for i := range n {
		if err := cycle(i); err != nil {
			return fmt.Errorf("cycle %d: %w", i, err)
		}
	}
	el := time.Since(t0)
	time.Sleep(time.Second)
	end, err := status()
	if err != nil {
		return err
	}
	fmt.Printf("cycles: %d in %v (%.0f ms per open+run+close)\n", n, el.Round(time.Millisecond), float64(el.Milliseconds())/float64(n))
	fmt.Printf("daemon RSS: %v KiB at start, %v KiB at end\n", start["rssKiB"], end["rssKiB"])
	fmt.Printf("daemon goroutines: %v at start, %v at end\n", start["goroutines"], end["goroutines"])
	fmt.Printf("chromium processes of the daemon after the last close: %d\n", chromiumOf(pid))
	return nil
}

// chromiumOf counts the Chromium processes below pid.
func chromiumOf(pid int) int {
	entries, _ := os.ReadDir("/proc")
	parent := map[string]string{}
	comm := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) > 1 {
			parent[e.Name()] = f[1]
			comm[e.Name()] = s[strings.IndexByte(s, '(')+1 : i]
		}
	}
	n := 0
	want := fmt.Sprint(pid)
	for p := range parent {
		if !strings.Contains(comm[p], "chrom") {
			continue
		}
		for q := parent[p]; q != "" && q != "0" && q != "1"; q = parent[q] {
			if q == want {
				n++
				break
			}
		}
	}
	return n
}
