package egress_test

import (
	"fmt"

	"github.com/tabpilot/tabpilot/browser/egress"
)

func ExampleCheckURL() {
	for _, u := range []string{
		"https://example.com/",
		"http://169.254.169.254/latest/meta-data/",
		"http://0x7f.1/",
		"http://localhost:3000/",
		"file:///etc/passwd",
	} {
		fmt.Println(egress.CheckURL(u))
	}
	// Output:
	// <nil>
	// blocked destination http://169.254.169.254/latest/meta-data/: link-local address (cloud metadata lives here)
	// blocked destination http://0x7f.1/ (127.0.0.1): numeric host form that resolvers read as an IPv4 address
	// blocked destination http://localhost:3000/: local host name
	// blocked destination file:///etc/passwd: scheme not allowed: file:
}

func ExampleLaunchFlags() {
	for _, f := range egress.LaunchFlags("127.0.0.1:41234") {
		fmt.Println(f)
	}
	// Output:
	// --proxy-server=http://127.0.0.1:41234
	// --proxy-bypass-list=<-loopback>
	// --disable-quic
	// --force-webrtc-ip-handling-policy=disable_non_proxied_udp
	// --webrtc-ip-handling-policy=disable_non_proxied_udp
	// --enforce-webrtc-ip-permission-check
	// --host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1
}
