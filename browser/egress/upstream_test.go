package egress

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestUpstreamDialer(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"socks4://127.0.0.1:1080", "http://127.0.0.1", "ftp://u:secretpw@127.0.0.1:21", "::"} {
		if _, err := UpstreamDialer(u, 0); err == nil || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("UpstreamDialer(%q): %v, want an error without the password", u, err)
		}
	}
	// A refused CONNECT (wrong credentials) is an error naming the status.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusProxyAuthRequired)
	}))
	defer srv.Close()
	d, err := UpstreamDialer(strings.Replace(srv.URL, "http://", "http://u:wrongpw@", 1), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := d(context.Background(), "tcp", "127.0.0.1:9"); err == nil || !strings.Contains(err.Error(), "407") || strings.Contains(err.Error(), "wrongpw") {
		if c != nil {
			c.Close()
		}
		t.Errorf("dial through a refusing upstream: %v, want its 407 without the password", err)
	}
}
