// Package netlog owns one tab's network and console record: the requests
// the page made (with redirects as hops of their own, WebSocket frames,
// headers, post data, timings, sizes, initiators, failures and, when the
// caller attaches them, bodies), the console messages and the uncaught
// errors, all bounded by rings, and the HAR 1.2 recording built from them.
//
// A Log is fed decoded CDP events (Handle) and told of top-level
// navigations (Navigated); queries read it: Requests and Request for the
// request log, Console, Errors and ErrorCount for the page's messages,
// StartHAR, StopHAR and WriteHAR for a HAR.
//
// What it must not do: call CDP (FetchBody and FetchPostData are the only
// helpers that do, for the caller to run outside the event loop), start
// goroutines, or know of tabs, frames or sessions. The page core
// (tabs/pagecore) owns the listener and the calls; this package is data and its transforms. It
// imports the standard library, cdproto and this module's errcode and
// urlpattern only.
package netlog
