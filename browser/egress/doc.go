// Package egress is tabpilot's egress guard (the README's "Safety" section,
// and issue 9): under the public-only policy, the Chromium that tabpilot
// launches sends all its traffic, loopback included, through a local Proxy
// that refuses any destination that is not a public, globally routable
// address.
//
// The guard has three layers:
//
//   - ParseHost reads a host the way browsers and resolvers do (the WHATWG
//     URL host parser and inet_aton): 2130706433, 0x7f.1 and 0177.0.0.1
//     are the IPv4 address 127.0.0.1, not names.
//   - CheckAddr refuses loopback, private (RFC 1918, RFC 4193), link-local
//     (169.254.169.254, the cloud metadata address, included), shared
//     (CGNAT), multicast, unspecified, broadcast, documentation,
//     benchmarking and reserved addresses, IPv4 and IPv6, looking inside
//     IPv4-mapped, NAT64 and 6to4 IPv6 addresses. The ranges follow the
//     IANA special-purpose address registries (RFC 6890).
//   - Proxy is an HTTP forward proxy (absolute-form requests, WebSocket
//     upgrades) and a CONNECT tunnel. For each request it resolves the name
//     itself, refuses it if any answer fails CheckAddr, and dials the very
//     address it vetted, so a name that re-resolves later (DNS rebinding)
//     reaches nothing. Only ports 80 and 443 by default; client
//     connections, idle time and bytes per upstream connection are bounded.
//     A refused request is answered 403 with a one-line text body naming
//     the host and the reason, logged, and counted in Stats.
//
// Origin rules (Rules: --allow-origin, --allow-subresource-origin,
// --block-origin; OriginPattern) come before the address policy: an
// origin the user allowed may be loopback or private, an allow list
// refuses every other origin, a blocked origin is refused whatever else
// allows it. Under the Any policy a proxy enforces the rules alone.
// Proxy.CheckURL is the check of a document (a page or a frame), which the
// tab makes on the Fetch domain before the request is sent: there an
// origin allowed only for subresources is refused.
//
// CheckURL is the check for top-level navigations: only http, https and
// about:blank, and no numeric or loopback host forms. LaunchFlags gives the
// Chromium flags that point a browser at the proxy and close the side doors
// (QUIC, WebRTC UDP).
//
// The package reads no configuration and no environment: cmd/tabpilot reads
// --egress / TABPILOT_EGRESS and passes a Policy down.
package egress
