package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tagVar marks every process of one tool session: the suite sets it in
// the environment of the tool's process, and every process the tool
// starts (a daemon that detaches, a browser) inherits it. The sampler
// and the cleanup find a session's processes by it, whoever their parent
// is.
const tagVar = "TPBENCH_TAG"

// memSample is the memory of one session's processes at one moment.
type memSample struct {
	toolRSS, toolPSS     int64 // KiB, the tool's own processes (no Chromium)
	chromeRSS, chromePSS int64 // KiB, Chromium's processes
	chromeUSS            int64 // KiB, Chromium's private memory (Private_Clean + Private_Dirty)
	toolProcs, chromeN   int
	detail               string // the tool's processes at its peak: pid comm rss
}

// sampler polls /proc for the processes of one tag and keeps the peaks of
// each phase (a phase is one page of a session).
type sampler struct {
	tag      string
	interval time.Duration
	// skipParent, when not 0, leaves out the processes whose parent it is
	// (the per-call processes of a CLI, children of the suite).
	skipParent int
	mu         sync.Mutex
	phase      string
	peaks      map[string]*memSample
	tagged     map[int]seen
	stop       chan struct{}
	done       chan struct{}
}

// seen is what the sampler knows of a pid's tag. A process's environment
// is the one it was started with, so a tagged pid stays tagged; but
// between its fork and its exec a new process shows its parent's
// environment, so a pid without the tag is read again for its first
// seconds.
type seen struct {
	tagged bool
	first  time.Time
}

func newSampler(tag string, interval time.Duration, skipParent int) *sampler {
	s := &sampler{tag: tag, interval: interval, skipParent: skipParent, peaks: map[string]*memSample{},
		tagged: map[int]seen{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

// setPhase starts a phase: the samples from now on count for it.
func (s *sampler) setPhase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = name
	if s.peaks[name] == nil {
		s.peaks[name] = &memSample{}
	}
}

func (s *sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.sample()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// sample reads every tagged process once and updates the peaks of the
// current phase.
func (s *sampler) sample() {
	var m memSample
	var detail []string
	for _, pid := range s.pids() {
		if s.skipParent != 0 && ppid(pid) == s.skipParent {
			continue
		}
		// A process may exec between the reads (a wrapper script becoming
		// Chromium): read what it runs before and after its memory, and
		// leave it out of this sample when that changed.
		name, exe := comm(pid), exePath(pid)
		rss, pss, uss, ok := smapsRollup(pid)
		if !ok || name == "" || exe != exePath(pid) || name != comm(pid) {
			continue
		}
		if isChromium(name, exe) {
			m.chromeRSS += rss
			m.chromePSS += pss
			m.chromeUSS += uss
			m.chromeN++
		} else {
			m.toolRSS += rss
			m.toolPSS += pss
			m.toolProcs++
			detail = append(detail, fmt.Sprintf("%d %s %dK/%dK", pid, name, rss, pss))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peaks[s.phase]
	if p == nil {
		p = &memSample{}
		s.peaks[s.phase] = p
	}
	if m.toolRSS > p.toolRSS {
		p.detail = strings.Join(detail, ", ")
	}
	p.toolRSS = max(p.toolRSS, m.toolRSS)
	p.toolPSS = max(p.toolPSS, m.toolPSS)
	p.chromeRSS = max(p.chromeRSS, m.chromeRSS)
	p.chromePSS = max(p.chromePSS, m.chromePSS)
	p.chromeUSS = max(p.chromeUSS, m.chromeUSS)
	p.toolProcs = max(p.toolProcs, m.toolProcs)
	p.chromeN = max(p.chromeN, m.chromeN)
}

// pids returns the live processes that carry the tag.
func (s *sampler) pids() []int {
	var out []int
	now := time.Now()
	for _, pid := range allPids() {
		v, ok := s.tagged[pid]
		if !ok || !v.tagged && now.Sub(v.first) < 3*time.Second {
			if !ok {
				v.first = now
			}
			v.tagged = hasTag(pid, s.tag)
			s.tagged[pid] = v
		}
		if v.tagged {
			out = append(out, pid)
		}
	}
	return out
}

// finish stops the sampler and returns the peaks of each phase.
func (s *sampler) finish() map[string]memSample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]memSample{}
	for k, v := range s.peaks {
		out[k] = *v
	}
	return out
}

func allPids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// hasTag reports whether the environment of pid has tagVar=tag. The
// environment is the one the process started with.
func hasTag(pid int, tag string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	want := []byte(tagVar + "=" + tag)
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

// isChromium reports whether a process runs a binary of Debian's Chromium
// (/usr/lib/chromium/: the browser, its zygotes, renderers, utilities and
// crashpad handler) or is one of the scripts that start it (the suite's
// wrapper and /usr/bin/chromium, both named chromium, which exec it).
func isChromium(comm, exe string) bool {
	if strings.HasPrefix(exe, "/usr/lib/chromium/") {
		return true
	}
	for _, n := range []string{comm, filepath.Base(exe)} {
		if n == "chromium" || n == "chrome" || strings.HasPrefix(n, "chrome_crashpad") {
			return true
		}
	}
	return false
}

func exePath(pid int) string {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return exe
}

// smapsRollup returns the Rss, Pss and Uss (Private_Clean +
// Private_Dirty) of pid in KiB, from /proc/PID/smaps_rollup.
func smapsRollup(pid int) (rss, pss, uss int64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil || len(b) == 0 {
		return 0, 0, 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "Rss:":
			rss = v
		case "Pss:":
			pss = v
		case "Private_Clean:", "Private_Dirty:":
			uss += v
		}
	}
	return rss, pss, uss, true
}

// killTagged ends the processes of a tag that are still alive after a
// session closed (the suite started them all): it waits up to grace for
// them to exit by themselves, then sends SIGKILL to each by pid. It
// returns how many it had to kill.
func killTagged(tag string, grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		var live []int
		for _, pid := range allPids() {
			if hasTag(pid, tag) && !isZombie(pid) {
				live = append(live, pid)
			}
		}
		if len(live) == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			for _, pid := range live {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return len(live)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// comm is the command name of pid.
func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// ppid is the parent of pid, or 0.
func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}
