// Command soak runs open/run/close cycles against one tabpilot daemon and
// reports the daemon's RSS and goroutine count at the start and the end,
// and the number of its Chromium processes before and after (issue 5's soak
// benchmark). It fails when the Chromium count or the goroutine count does
// not return to where it started.
//
// Chromium processes are counted by a marker in the environment, which the
// daemon and every browser it launches inherit, and by their parent chain
// and process group (see chromiumWith): a crashpad handler, reparented to
// init at once, is counted, which a walk up the parent chain from the
// daemon alone would miss.
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
	"strconv"
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
	marker := fmt.Sprintf("%s=%d-%d", markerVar, os.Getpid(), time.Now().UnixNano())
	opts := &client.Options{Session: "soak", Dir: dir, Executable: exe,
		Env: append(os.Environ(), marker,
			`TABPILOT_BROWSER_ARGS=--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"`)}
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
	open := 0 // Chromium processes seen with a tab open, in the warm-up
	cycle := func(i int) error {
		if _, err := call("open", map[string]any{"url": fmt.Sprintf("%s/%d", srv.URL, i), "wait_until": "load"}); err != nil {
			return err
		}
		if i < 0 {
			open = len(chromiumWith(marker))
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
	before := len(chromiumWith(marker))
	if err := cycle(-1); err != nil {
		return err
	}
	if open == 0 {
		return fmt.Errorf("no Chromium process carries the marker %s while a tab is open: the count is broken", marker)
	}
	// The warm-up's close released the browser: let it exit.
	settle(func() bool { return len(chromiumWith(marker)) <= before }, 10*time.Second)
	start, err := status()
	if err != nil {
		return err
	}
	startChromium := len(chromiumWith(marker))
	t0 := time.Now()
	for i := range n {
		if err := cycle(i); err != nil {
			return fmt.Errorf("cycle %d: %w", i, err)
		}
		if (i+1)%50 == 0 && i+1 < n {
			// Progress, and the trend of the figures, on stderr.
			if st, err := status(); err == nil {
				fmt.Fprintf(os.Stderr, "soak: %d cycles in %v: RSS %v KiB, %v goroutines, %d chromium processes\n",
					i+1, time.Since(t0).Round(time.Second), st["rssKiB"], st["goroutines"], len(chromiumWith(marker)))
			}
		}
	}
	el := time.Since(t0)
	// The last close releases the browser; its processes and the
	// daemon's goroutines wind down in the background. Wait up to 10 s
	// for them to return to the start, then read the figures.
	startG := int(start["goroutines"].(float64))
	var end map[string]any
	settled := settle(func() bool {
		end, err = status()
		return err == nil && len(chromiumWith(marker)) <= startChromium && int(end["goroutines"].(float64)) <= startG
	}, 10*time.Second)
	if err != nil {
		return err
	}
	endChromium := len(chromiumWith(marker))
	fmt.Printf("cycles: %d in %v (%.0f ms per open+run+close)\n", n, el.Round(time.Millisecond), float64(el.Milliseconds())/float64(n))
	fmt.Printf("daemon RSS: %v KiB at start, %v KiB at end\n", start["rssKiB"], end["rssKiB"])
	fmt.Printf("daemon goroutines: %v at start, %v at end\n", start["goroutines"], end["goroutines"])
	fmt.Printf("chromium processes of the daemon: %d before the first open, %d with a tab open, %d at start, %d after the last close (settled in %v)\n",
		before, open, startChromium, endChromium, settled.Round(10*time.Millisecond))
	if endChromium > startChromium || int(end["goroutines"].(float64)) > startG {
		return fmt.Errorf("counts did not return to the start: chromium %d -> %d, goroutines %d -> %v", startChromium, endChromium, startG, end["goroutines"])
	}
	return nil
}

// settle polls ok every 100 ms until it holds or limit passes, and returns
// how long it waited.
func settle(ok func() bool, limit time.Duration) time.Duration {
	t0 := time.Now()
	for !ok() && time.Since(t0) < limit {
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(t0)
}

// markerVar names the environment variable that marks the soak's daemon
// and, by inheritance, the browsers it launches.
const markerVar = "TABPILOT_SOAK_MARKER"

// chromiumWith returns the pids of the Chromium processes (a "chrom" in
// /proc/PID/comm) that belong to the soak's daemon: those whose environment
// (/proc/PID/environ) holds marker (NAME=VALUE), those below a process
// that holds it (the daemon, a browser), and those in the process group of
// a browser that holds it. The marker alone is not enough: Chromium's
// zygote and renderers rewrite the memory that /proc/PID/environ shows.
// The parent chain alone is not enough either: crashpad handlers are
// reparented to init at once, and so is any child a dying browser leaves.
func chromiumWith(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	type proc struct {
		ppid, pgid int
		chrom      bool
		marked     bool
	}
	procs := map[int]proc{}
	markedGroups := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		st := string(b)
		i, j := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(st[j+1:]) // state ppid pgrp ...
		if len(f) < 3 {
			continue
		}
		var p proc
		p.ppid, _ = strconv.Atoi(f[1])
		p.pgid, _ = strconv.Atoi(f[2])
		p.chrom = strings.Contains(st[i+1:j], "chrom")
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil {
			for _, kv := range strings.Split(string(env), "\x00") {
				if kv == marker {
					p.marked = true
					break
				}
			}
		}
		if p.marked && p.chrom {
			markedGroups[p.pgid] = true
		}
		procs[pid] = p
	}
	var out []int
	for pid, p := range procs {
		if !p.chrom {
			continue
		}
		ours := p.marked || markedGroups[p.pgid]
		for q, n := p.ppid, 0; !ours && q > 1 && n < 64; q, n = procs[q].ppid, n+1 {
			ours = procs[q].marked
		}
		if ours {
			out = append(out, pid)
		}
	}
	return out
}
