package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// result gathers the figures of one tool on one page over the
// repetitions.
type result struct {
	tool, page string
	sessions   int
	cold       []time.Duration // the first page of a session only
	first      []time.Duration // open and the first observe, the tool running
	obs        []time.Duration
	click      []time.Duration
	eval       []time.Duration
	shot       []time.Duration
	clicksBad  int // clicks the page did not count
	evalBad    int // evaluations that did not return the title
	shotBytes  []int
	obsBytes   []int
	listed     []int
	omitted    []int
	noCounter  int // observations without the counter button
	full       *observation
	toolRSS    []int64 // KiB, peak per session
	toolPSS    []int64
	chromePSS  []int64
	chromeUSS  []int64
	killed     int
	memDetail  string // the latest session's processes at the tool's peak
	errs       []string
}

func (r *result) fail(stage string, err error) {
	msg := fmt.Sprintf("%s: %v", stage, err)
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	r.errs = append(r.errs, msg)
}

// last describes the latest session, for -v.
func (r *result) last() string {
	d := func(ds []time.Duration) string {
		if len(ds) == 0 {
			return "-"
		}
		return ms(ds[len(ds)-1])
	}
	s := fmt.Sprintf("%-14s %-10s cold %s first %s obs %s click %s eval %s shot %s", r.tool, r.page, d(r.cold), d(r.first), d(r.obs), d(r.click), d(r.eval), d(r.shot))
	if len(r.obsBytes) > 0 {
		s += fmt.Sprintf(" | %d B, %d listed", r.obsBytes[len(r.obsBytes)-1], r.listed[len(r.listed)-1])
	}
	if len(r.errs) > 0 {
		s += " | error: " + r.errs[len(r.errs)-1]
	}
	return s
}

// runSession starts the tool cold and drives it through the pages in
// turn, adding the figures to the results of each page. The cold start is
// the first page's; each page then gets an open with its first observe
// and the warm rounds, and its own memory phase.
func runSession(ctx context.Context, c *config, e *env, t *tool, pages []page, srv *server, info map[string]pageInfo, rep int, results func(page string) *result) {
	tag := fmt.Sprintf("%d-%s-%d", os.Getpid(), t.key, rep)
	// The CLIs' per-call processes are the client's: their memory is the
	// daemon's (the suite's own children are left out of the sum).
	skip := 0
	if t.key == "tp-cli" || t.key == "agent-browser" {
		skip = os.Getpid()
	}
	smp := newSampler(tag, 100*time.Millisecond, skip)
	smp.setPhase(pages[0].name)
	for _, p := range pages {
		results(p.name).sessions++
	}
	first := results(pages[0].name)
	op := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, c.timeout) }
	defer func() {
		peaks := smp.finish()
		for _, p := range pages {
			m, ok := peaks[p.name]
			if !ok {
				continue
			}
			res := results(p.name)
			res.toolRSS = append(res.toolRSS, m.toolRSS)
			res.toolPSS = append(res.toolPSS, m.toolPSS)
			res.chromePSS = append(res.chromePSS, m.chromePSS)
			res.chromeUSS = append(res.chromeUSS, m.chromeUSS)
			res.memDetail = m.detail
			if c.verbose {
				logf("  %-14s %-10s tool %.1f MB RSS / %.1f PSS, Chromium %.0f MB PSS / %.0f USS [%s]", t.key, p.name,
					mb(m.toolRSS), mb(m.toolPSS), mb(m.chromePSS), mb(m.chromeUSS), m.detail)
			}
		}
		first.killed += killTagged(tag, 10*time.Second)
	}()

	t0 := time.Now()
	octx, cancel := op()
	s, err := t.start(octx, tag)
	cancel()
	if err != nil {
		first.fail("start", err)
		return
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
		defer cancel()
		if err := s.close(cctx); err != nil {
			first.fail("close", err)
		}
	}()
	for i, p := range pages {
		if ctx.Err() != nil {
			return
		}
		smp.setPhase(p.name)
		res := results(p.name)
		t1 := time.Now()
		if i == 0 {
			t1 = t0
		}
		drivePage(ctx, c, s, srv.url(p), info[p.name], res, i == 0, t1, op)
		if c.verbose {
			logf("  %s", res.last())
		}
	}
}

// drivePage opens the page and measures it. t0 is when the open (or, on
// the first page, the tool's start) began.
func drivePage(ctx context.Context, c *config, s session, url string, info pageInfo, res *result, cold bool, t0 time.Time,
	op func() (context.Context, context.CancelFunc)) {
	octx, cancel := op()
	err := s.open(octx, url)
	cancel()
	if err != nil {
		res.fail("open", err)
		return
	}
	octx, cancel = op()
	obs, err := s.observe(octx)
	cancel()
	if err != nil {
		res.fail("observe (first)", err)
		return
	}
	if cold {
		res.cold = append(res.cold, time.Since(t0))
	} else {
		res.first = append(res.first, time.Since(t0))
	}

	clicks := 0
	for range c.warm {
		octx, cancel = op()
		t1 := time.Now()
		obs, err = s.observe(octx)
		d := time.Since(t1)
		cancel()
		if err != nil {
			res.fail("observe", err)
			return
		}
		res.obs = append(res.obs, d)
		if obs.counter == "" {
			res.noCounter++
			res.fail("observe", fmt.Errorf("the counter button %q is not in the observation", counterName))
			return
		}

		octx, cancel = op()
		t1 = time.Now()
		err = s.click(octx, obs.counter)
		d = time.Since(t1)
		cancel()
		if err != nil {
			res.fail("click", err)
			return
		}
		res.click = append(res.click, d)
		clicks++
		octx, cancel = op()
		out, err := s.eval(octx, counterJS)
		cancel()
		if got := clicksIn(out); err != nil || got != clicks {
			res.clicksBad++
			if err == nil {
				err = fmt.Errorf("the page counted %d clicks of %d (%q)", got, clicks, strings.TrimSpace(out))
			}
			res.fail("click check", err)
			clicks = max(got, 0)
		}

		octx, cancel = op()
		t1 = time.Now()
		out, err = s.eval(octx, "document.title")
		d = time.Since(t1)
		cancel()
		if err != nil {
			res.fail("evaluate", err)
			return
		}
		res.eval = append(res.eval, d)
		if !strings.Contains(out, info.title) {
			res.evalBad++
			res.fail("evaluate", fmt.Errorf("%q does not contain the title %q", out, info.title))
		}

		octx, cancel = op()
		t1 = time.Now()
		n, err := s.screenshot(octx)
		d = time.Since(t1)
		cancel()
		if err != nil {
			res.fail("screenshot", err)
			return
		}
		res.shot = append(res.shot, d)
		res.shotBytes = append(res.shotBytes, n)
	}
	res.obsBytes = append(res.obsBytes, obs.bytes)
	res.listed = append(res.listed, obs.listed)
	res.omitted = append(res.omitted, obs.omitted)
	if f, ok := s.(fullObserver); ok && c.full && res.full == nil {
		octx, cancel = op()
		full, err := f.observeFull(octx)
		cancel()
		if err == nil {
			res.full = &full
		}
	}
}

func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	if f < 10 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

func mb(kib int64) float64 { return float64(kib) / 1024 }
