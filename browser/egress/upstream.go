package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/proxy"
)

// UpstreamDialer returns a Dialer that reaches each vetted ip:port through
// the upstream proxy at rawURL, for a Proxy chained in front of another
// proxy (a browser context's --proxy under the guard): the guard resolves
// and vets every destination itself, then asks the upstream for the very
// address it vetted, never a name, so the upstream's own resolver cannot
// take a request elsewhere.
//
//   - http://[user:password@]host:port and https://…: a CONNECT tunnel to
//     ip:port (RFC 9110 §9.3.6), with Proxy-Authorization: Basic when the
//     URL has credentials; https speaks TLS to the proxy first. Plain
//     http requests are tunnelled too, so the upstream must allow CONNECT
//     to the ports used (squid allows only 443 by default).
//   - socks5://[user:password@]host:port: SOCKS5 (RFC 1928, RFC 1929)
//     CONNECT to ip:port.
//
// timeout bounds connecting to the upstream and its answer. Errors: an
// unparsable URL, another scheme (socks4 cannot carry an IPv6 address nor
// credentials), no port.
func UpstreamDialer(rawURL string, timeout time.Duration) (Dialer, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("upstream proxy %q: want SCHEME://host:port", redactUser(rawURL))
	}
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	switch u.Scheme {
	case "http", "https":
		auth := ""
		if u.User != nil {
			pw, _ := u.User.Password()
			auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
		}
		return func(ctx context.Context, network, address string) (net.Conn, error) {
			return connectVia(ctx, d, u, auth, address, timeout)
		}, nil
	case "socks5":
		var a *proxy.Auth
		if u.User != nil {
			pw, _ := u.User.Password()
			a = &proxy.Auth{User: u.User.Username(), Password: pw}
		}
		sd, err := proxy.SOCKS5("tcp", u.Host, a, d)
		if err != nil {
			return nil, fmt.Errorf("upstream proxy %q: %w", redactUser(rawURL), err)
		}
		cd, ok := sd.(proxy.ContextDialer)
		if !ok {
			return nil, fmt.Errorf("upstream proxy %q: the SOCKS5 dialer cannot take a context", redactUser(rawURL))
		}
		return cd.DialContext, nil
	}
	return nil, fmt.Errorf("upstream proxy %q: the scheme must be http, https or socks5 behind the egress guard", redactUser(rawURL))
}

// connectVia opens a CONNECT tunnel to address through the proxy u.
func connectVia(ctx context.Context, d *net.Dialer, u *url.URL, auth, address string, timeout time.Duration) (net.Conn, error) {
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("upstream proxy %s: %w", u.Host, err)
	}
	if u.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("upstream proxy %s: TLS: %w", u.Host, err)
		}
		c = tc
	}
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	c.SetDeadline(deadline)
	req := "CONNECT " + address + " HTTP/1.1\r\nHost: " + address + "\r\n"
	if auth != "" {
		req += "Proxy-Authorization: " + auth + "\r\n"
	}
	if _, err := c.Write([]byte(req + "\r\n")); err != nil {
		c.Close()
		return nil, fmt.Errorf("upstream proxy %s: %w", u.Host, err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("upstream proxy %s: read the CONNECT answer: %w", u.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("upstream proxy %s refused CONNECT %s: %s", u.Host, address, resp.Status)
	}
	c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// bufferedConn is a conn whose first bytes were read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite half-closes when the connection can.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// redactUser replaces a URL's password with "xxxxx".
func redactUser(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
