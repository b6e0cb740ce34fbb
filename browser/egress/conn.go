package egress

import (
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// errByteLimit ends a connection that reached Options.MaxBytes.
var errByteLimit = errors.New("egress proxy: byte limit reached")

// meter bounds one upstream connection, and the client side of its tunnel:
// bytes (counted on the upstream side, both directions) and idle time (any
// traffic on any of its connections pushes every deadline back).
type meter struct {
	p    *Proxy
	idle time.Duration
	max  int64
	used atomic.Int64
	last atomic.Int64 // UnixNano of the last deadline push

	mu    sync.Mutex
	conns []net.Conn
	done  bool
}

// meter wraps a freshly dialled upstream connection; it fails when the
// proxy is closing.
func (p *Proxy) meter(c net.Conn) (*meteredConn, error) {
	m := &meter{p: p, idle: p.opts.IdleTimeout, max: p.opts.MaxBytes}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return nil, errors.New("egress proxy: closed")
	}
	p.meters[m] = struct{}{}
	p.mu.Unlock()
	return m.wrap(c, true), nil
}

// wrap adds c to the meter; counted says whether its bytes count.
func (m *meter) wrap(c net.Conn, counted bool) *meteredConn {
	now := time.Now()
	m.mu.Lock()
	m.conns = append(m.conns, c)
	done := m.done
	m.mu.Unlock()
	if done {
		c.Close()
	}
	m.last.Store(now.UnixNano())
	_ = c.SetDeadline(now.Add(m.idle))
	return &meteredConn{Conn: c, m: m, counted: counted}
}

// touch pushes the deadlines back, at most once per idle/16.
func (m *meter) touch() {
	now := time.Now()
	if now.UnixNano()-m.last.Load() < int64(m.idle/16) {
		return
	}
	m.last.Store(now.UnixNano())
	m.mu.Lock()
	for _, c := range m.conns {
		_ = c.SetDeadline(now.Add(m.idle))
	}
	m.mu.Unlock()
}

// add counts n bytes and returns how many of them fit under the bound.
func (m *meter) add(n int) int {
	if m.max < 0 {
		return n
	}
	over := m.used.Add(int64(n)) - m.max
	if over <= 0 {
		return n
	}
	return max(0, n-int(min(over, int64(n))))
}

// closeAll closes every connection of the meter and forgets it.
func (m *meter) closeAll() {
	m.mu.Lock()
	m.done = true
	conns := m.conns
	m.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	m.p.mu.Lock()
	delete(m.p.meters, m)
	m.p.mu.Unlock()
}

// meteredConn is a connection under a meter. It deliberately has no
// ReadFrom or WriteTo, so io.Copy cannot go around the count.
type meteredConn struct {
	net.Conn
	m       *meter
	counted bool
}

func (c *meteredConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		if c.counted {
			if fit := c.m.add(n); fit < n {
				c.m.closeAll()
				return fit, errByteLimit
			}
		}
		c.m.touch()
	}
	return n, err
}

func (c *meteredConn) Write(b []byte) (int, error) {
	if c.counted {
		if fit := c.m.add(len(b)); fit < len(b) {
			n, _ := c.Conn.Write(b[:fit])
			c.m.closeAll()
			return n, errByteLimit
		}
	}
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.m.touch()
	}
	return n, err
}

// Close closes the connection; closing the upstream side closes the
// client side of its tunnel too.
func (c *meteredConn) Close() error {
	err := c.Conn.Close()
	if c.counted {
		c.m.closeAll()
	}
	return err
}

// CloseWrite half-closes when the connection can.
func (c *meteredConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// splice copies both ways until both sides are done. An EOF half-closes
// the other side; an error (a deadline, the byte limit, a reset) ends both.
func splice(client, up *meteredConn) {
	errc := make(chan error, 2)
	go func() { errc <- pipe(up, client) }()
	go func() { errc <- pipe(client, up) }()
	if err := <-errc; err != nil {
		client.Close()
		up.Close()
	}
	<-errc
}

func pipe(dst, src *meteredConn) error {
	if _, err := io.Copy(dst, src); err != nil {
		return err
	}
	return dst.CloseWrite()
}

// limitListener admits at most cap(p.sem) client connections at once and
// answers the others 503.
type limitListener struct {
	net.Listener
	p *Proxy
}

const busyBody = "tabpilot egress proxy: too many connections\n"

var busyResponse = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: " +
	strconv.Itoa(len(busyBody)) + "\r\n\r\n" + busyBody

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.p.sem <- struct{}{}:
			return &clientConn{Conn: c, sem: l.p.sem}, nil
		default:
			l.p.log.Warn("egress proxy: too many connections", "max", cap(l.p.sem))
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, busyResponse)
			_ = c.Close()
		}
	}
}

// clientConn gives its slot back when closed.
type clientConn struct {
	net.Conn
	sem  chan struct{}
	once sync.Once
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.sem })
	return err
}

func (c *clientConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// normHost lower-cases a host and drops brackets and a trailing dot.
func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}
