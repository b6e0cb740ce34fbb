package stealth

import "errors"

// ErrNoTarget is returned by Install when ctx carries no chromedp target (it is not a chromedp
// context, or the browser failed to start).
var ErrNoTarget = errors.New("stealth: context has no chromedp target")
