//go:build !thin

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/client"
	"github.com/tabpilot/tabpilot/api/rpc"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/browser"
)

func (c *cli) daemonCommand() (cmd *command, session, dir *string, lockWait *time.Duration, cfg *config) {
	cmd = newCommand("daemon", "", "the session daemon",
		`Run the daemon of a session in the foreground: JSON-RPC 2.0 on the unix socket
DIR/SESSION.sock (mode 0600). The first CLI call of a session starts it in the
background. It exits on tabpilot stop, on SIGTERM or SIGINT, or after the idle
timeout without requests, closing its tabs and browsers and removing its
socket first.`)
	s := c.getenv(envSession)
	if s == "" {
		s = client.DefaultSession
	}
	d := client.DefaultDir(c.getenv(envRuntimeDir))
	fs := cmd.section("Flags")
	fs.StringVar(&s, "session", s, "the session `name` ["+envSession+"]")
	fs.StringVar(&d, "socket-dir", d, "the socket `directory`")
	wait := 15 * time.Second
	fs.Var(durationValue{&wait}, "lock-wait", "how long to wait for another daemon of the session to exit (default 15s)")
	conf, envErr := configFromEnv(c.getenv)
	conf.addFlags(cmd.section("Configuration"))
	if envErr != nil {
		// Reported by daemon(); help still works.
		conf.logLevel = slog.LevelInfo
	}
	return cmd, &s, &d, &wait, &conf
}

func (c *cli) daemon(args []string) int {
	cmd, session, dir, lockWait, cfg := c.daemonCommand()
	pos, code, done := c.parse(cmd, args)
	if done {
		return code
	}
	if _, err := configFromEnv(c.getenv); err != nil {
		return c.usageFail(cmd, err)
	}
	if len(pos) > 0 {
		return c.usageFail(cmd, usagef("unexpected argument %q", pos[0]))
	}
	if err := client.ValidSession(*session); err != nil {
		return c.usageFail(cmd, err)
	}
	if err := cfg.finish(); err != nil {
		return c.usageFail(cmd, err)
	}
	log := cfg.secrets.Logger(c.logger(cfg.logLevel)).With("session", *session)

	lctx, cancel := context.WithTimeout(c.ctx, *lockWait)
	ln, err := client.Listen(lctx, *dir, *session)
	cancel()
	if err != nil {
		log.Error("daemon: cannot listen", "err", err)
		fmt.Fprintf(c.stderr, "tabpilot daemon: %v\n", err)
		return exitFailed
	}
	// End the browsers a killed daemon of this session left behind.
	stateDir := filepath.Join(*dir, *session+".browsers")
	if n := browser.Sweep(stateDir, log); n > 0 {
		log.Warn("swept browsers left by a previous daemon", "count", n)
	}
	svc, stopSvc, err := cfg.startService(c.ctx, log, stateDir)
	if err != nil {
		ln.Close()
		log.Error("daemon: cannot start", "err", err)
		fmt.Fprintf(c.stderr, "tabpilot daemon: %v\n", err)
		return exitFailed
	}
	d := &daemon{
		session:  *session,
		ln:       ln,
		svc:      svc,
		stopSvc:  stopSvc,
		log:      log,
		idle:     cfg.idleTimeout,
		stopc:    make(chan string, 1),
		finished: make(chan struct{}),
		conns:    map[net.Conn]struct{}{},
		started:  time.Now(),
	}
	return d.run(c.ctx)
}

// daemon serves the session's socket. It is the rpc.Handler of every
// connection: it answers the daemon methods (client.MethodStop,
// client.MethodStatus) and passes the others to the service.
type daemon struct {
	session string
	ln      *client.Listener
	svc     *service.Service
	stopSvc func(context.Context) error
	log     *slog.Logger
	idle    time.Duration
	started time.Time

	stopc    chan string   // receives why the daemon stops
	finished chan struct{} // closed once the browsers are gone

	mu       sync.Mutex
	inflight int
	idleT    *time.Timer
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

func (d *daemon) requestStop(reason string) {
	select {
	case d.stopc <- reason:
	default:
	}
}

func (d *daemon) run(ctx context.Context) int {
	d.log.Info("daemon: listening", "socket", d.ln.Paths.Socket, "pid", os.Getpid(), "idle_timeout", d.idle)
	if d.idle > 0 {
		d.idleT = time.AfterFunc(d.idle, d.idleFired)
	}
	// Connections hang below their own context, not the signal's: the
	// shutdown cancels them explicitly, after the listener is closed.
	connCtx, cancelConns := context.WithCancel(context.Background())
	defer cancelConns()
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		for {
			conn, err := d.ln.Accept()
			if err != nil {
				return
			}
			d.mu.Lock()
			d.conns[conn] = struct{}{}
			d.wg.Add(1)
			d.mu.Unlock()
			go d.serveConn(connCtx, conn)
		}
	}()

	var reason string
	select {
	case <-ctx.Done():
		reason = "signal"
	case reason = <-d.stopc:
	}
	d.log.Info("daemon: stopping", "reason", reason)
	// No new connections, and no socket file: a new client starts a new
	// daemon, which waits for our pid lock.
	if err := d.ln.Close(); err != nil {
		d.log.Warn("daemon: close the listener", "err", err)
	}
	<-acceptDone
	if d.idleT != nil {
		d.idleT.Stop()
	}
	cancelConns() // cancels the requests in flight
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	if err := d.stopSvc(sctx); err != nil {
		d.log.Error("daemon: shutdown", "err", err)
	}
	cancel()
	// The connections close once their last answers are written: their
	// clients (tabpilot stop) see the end. Close the stragglers, whose
	// requests did not end in time.
	close(d.finished)
	if !waitTimeout(&d.wg, 5*time.Second) {
		d.mu.Lock()
		for conn := range d.conns {
			conn.Close()
		}
		d.mu.Unlock()
		waitTimeout(&d.wg, 5*time.Second)
	}
	if err := d.ln.Release(); err != nil {
		d.log.Warn("daemon: release", "err", err)
	}
	d.log.Info("daemon: stopped")
	return exitOK
}

// waitTimeout waits for wg at most d, and reports whether it is done.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func (d *daemon) serveConn(ctx context.Context, conn net.Conn) {
	defer d.wg.Done()
	err := rpc.Serve(ctx, conn, conn, d, &rpc.ServerOptions{CancelOnEOF: true, Logger: d.log})
	if ctx.Err() != nil {
		// Shutting down: keep the connection open until the browsers are
		// gone, so that tabpilot stop returns only then.
		<-d.finished
	} else if err != nil {
		d.log.Debug("daemon: connection ended", "err", err)
	}
	conn.Close()
	d.mu.Lock()
	delete(d.conns, conn)
	d.mu.Unlock()
}

// idleFired stops the daemon when no request is in flight.
func (d *daemon) idleFired() {
	d.mu.Lock()
	busy := d.inflight > 0
	d.mu.Unlock()
	if !busy {
		d.requestStop(fmt.Sprintf("idle for %v", d.idle))
	}
}

func (d *daemon) begin() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight++
	if d.idleT != nil {
		d.idleT.Stop()
	}
}

func (d *daemon) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight--
	if d.inflight == 0 && d.idleT != nil {
		d.idleT.Reset(d.idle)
	}
}

// Call implements rpc.Handler.
func (d *daemon) Call(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
	switch method {
	case client.MethodStop:
		d.requestStop("stop requested")
		return &api.Result{
			Content: []api.Content{api.TextContent(fmt.Sprintf("Stopping the daemon of session %q", d.session))},
			Details: map[string]any{"action": "stop", "session": d.session, "pid": os.Getpid()},
		}, nil
	case client.MethodStatus:
		d.mu.Lock()
		n := d.inflight
		d.mu.Unlock()
		v, _ := versionString()
		return &api.Result{
			Content: []api.Content{api.TextContent(fmt.Sprintf("daemon of session %q, pid %d, up %v", d.session, os.Getpid(), time.Since(d.started).Round(time.Second)))},
			Details: map[string]any{"session": d.session, "pid": os.Getpid(), "version": v,
				"started": d.started.UTC().Format(time.RFC3339), "inflight": n, "socket": d.ln.Paths.Socket,
				"goroutines": runtime.NumGoroutine(), "rssKiB": selfRSS()},
		}, nil
	}
	d.begin()
	defer d.end()
	return d.svc.Call(ctx, method, params)
}

// selfRSS returns the daemon's resident set size in KiB (VmRSS of
// /proc/self/status), or 0 when unknown.
func selfRSS() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
