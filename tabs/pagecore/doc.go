// Package pagecore is the page core of a tab: the CDP session of one page
// target and what tabpilot knows of it from its events.
//
// A Page owns its target's chromedp context and session, the sessions of
// its out-of-process iframes (Target.attachToTarget) and the isolated
// worlds made in its frames (Page.createIsolatedWorld), and the event
// state its listeners keep: top-level navigations requested, committed
// and within the document, load and DOMContentLoaded, the HTTP status of
// its documents, requests in flight, JavaScript dialogs and the dialog
// policy, the popups it opened and its downloads. On that state it
// builds the waits every layer above shares: the settled wait (load,
// then a short quiet window of DOM and fetches), networkidle, the wait
// for a navigation an action started, and the rule that a call a dialog
// blocks returns at once (Blocking). It also holds the page-level
// operations on that session: navigation (Goto, history), cookies and
// storage, response waiters, and the coded Error every layer returns.
//
// Listeners run in chromedp's read loop: they record and return, and
// never call CDP. Every exported method is safe for concurrent use.
//
// It must not know about tabs, numbers or observations: what it needs
// from its owner (the supervisor's logger and goroutines, the download
// directory, the egress guard, a callback when the top document changes
// or a popup opens) comes in Env. Observation (tabs/observe), element
// location and input (tabs/act) and the tab's life (tabs) are built on it.
package pagecore
