package egress

import (
	"fmt"
	"io"
	"net/netip"
	"testing"
)

func BenchmarkParseHost(b *testing.B) {
	b.ReportAllocs()
	for _, h := range []string{"www.example.com", "93.184.216.34", "0x7f.1", "[2606:4700:4700::1111]"} {
		b.Run(h, func(b *testing.B) {
			for b.Loop() {
				ParseHost(h)
			}
		})
	}
}

func BenchmarkCheckAddr(b *testing.B) {
	b.ReportAllocs()
	for _, a := range []string{"93.184.216.34", "2606:4700:4700::1111"} {
		addr := netip.MustParseAddr(a)
		b.Run(a, func(b *testing.B) {
			for b.Loop() {
				if CheckAddr(addr) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
}

// BenchmarkForward is one small forwarded GET through the proxy (a new
// client connection and a new upstream connection each time).
func BenchmarkForward(b *testing.B) {
	h := newHarness(b, nil)
	c := h.client()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Get("http://public.test/")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkTunnel streams 4 MiB through a CONNECT tunnel; SetBytes makes
// the result a throughput.
func BenchmarkTunnel(b *testing.B) {
	h := newHarness(b, nil)
	const n = 4 << 20
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		c, br, resp := h.connect("public.test:80")
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
		fmt.Fprintf(c, "GET /big?n=%d HTTP/1.1\r\nHost: public.test\r\nConnection: close\r\n\r\n", n)
		got, _ := io.Copy(io.Discard, br)
		if got < n {
			b.Fatalf("read %d", got)
		}
		c.Close()
	}
}
