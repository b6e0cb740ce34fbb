package stealth

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
)

// Emulation are the values a device or place emulation of a tab (package tabs/emulate) puts in
// place of those Install presented, so that the page's JavaScript agrees with the overrides the
// emulation sent: navigator.userAgent, appVersion, platform and userAgentData, and
// navigator.language(s). A zero field keeps Install's value.
type Emulation struct {
	// UserAgent is the emulated user agent; Platform and Metadata go with it. Empty: Install's
	// user agent, platform and client hints.
	UserAgent string
	// Platform is navigator.platform of UserAgent. Empty: the browser's own.
	Platform string
	// Metadata are the client hints of UserAgent. Nil with a UserAgent: none, as Safari and
	// Firefox send none; the patch then removes navigator.userAgentData, which those browsers do
	// not have.
	Metadata *emulation.UserAgentMetadata
	// Locale is the emulated BCP 47 locale: navigator.languages become it and its base
	// language. Empty: Install's languages.
	Locale string
	// TimeZone is the emulated IANA time zone, for the workers the page starts. Empty: Install's.
	TimeZone string
	// ScreenWidth and ScreenHeight are the emulated screen in CSS pixels, which out-of-process
	// iframes read from the patch. 0: Install's.
	ScreenWidth, ScreenHeight int
	// Mobile is a mobile emulation: the patch keeps the emulated screen as it is rather than
	// growing it to the window's outer size.
	Mobile bool
}

// installs are the open Installs by page target, for Update and Restore.
var installs = struct {
	sync.Mutex
	m map[cdp.Session]*installer
}{m: map[cdp.Session]*installer{}}

// register records in as the Install of the page target s until ctx ends.
func register(ctx context.Context, s cdp.Session, in *installer) {
	installs.Lock()
	installs.m[s] = in
	installs.Unlock()
	context.AfterFunc(ctx, func() {
		installs.Lock()
		defer installs.Unlock()
		if installs.m[s] == in {
			delete(installs.m, s)
		}
	})
}

func lookup(s cdp.Session) (*installer, error) {
	installs.Lock()
	defer installs.Unlock()
	in := installs.m[s]
	if in == nil {
		return nil, fmt.Errorf("stealth: no Install is open on that page target")
	}
	return in, nil
}

// Update replaces the patch script of the page target s (the *chromedp.Target of the context
// given to Install) with one made for e, or for Install's values when e is nil:
// Page.removeScriptToEvaluateOnNewDocument of the script it had, then
// Page.addScriptToEvaluateOnNewDocument of the new one, without runImmediately, so that it
// applies from the page's next document (the current one keeps the patches it ran). The
// out-of-process iframes and workers that start from then on get e's values too, user agent
// override, locale and time zone included. Update sends no Emulation override to the page
// itself: the emulation does. ctx bounds the calls.
func Update(ctx context.Context, s cdp.Session, e *Emulation) error {
	in, err := lookup(s)
	if err != nil {
		return err
	}
	v := in.viewFor(e)
	in.mu.Lock()
	defer in.mu.Unlock() // one Update at a time per page: the ids stay paired
	if in.scriptID != "" {
		if _, err := cdp.Call(ctx, s, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: in.scriptID}); err != nil {
			return wrap(err, "Page.removeScriptToEvaluateOnNewDocument")
		}
		in.scriptID = ""
	}
	res, err := cdp.Call(ctx, s, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: v.src})
	if err != nil {
		return wrap(err, "Page.addScriptToEvaluateOnNewDocument")
	}
	in.scriptID, in.cur = res.Identifier, v
	return nil
}

// Restore gives the page target s back what Install set after an emulation reset cleared it
// (tabs/emulate.Reset): Emulation.setUserAgentOverride with Install's user agent, platform,
// client hints and Accept-Language, setLocaleOverride, and setTimezoneOverride when Install had
// one, sent at once; then [Update] with Install's values. The device metrics are the caller's:
// it sets its viewport again with [MetricsOverride].
func Restore(ctx context.Context, s cdp.Session) error {
	in, err := lookup(s)
	if err != nil {
		return err
	}
	base := in.viewFor(nil)
	if err := concurrently(in.emulationOverrides(ctx, s, base)...); err != nil {
		return err
	}
	return Update(ctx, s, nil)
}

// viewFor returns the values of e on top of Install's; nil e is Install's.
func (in *installer) viewFor(e *Emulation) *view {
	v := &view{c: in.c, ua: *in.ua}
	v.c.Languages = append([]string(nil), in.c.Languages...)
	if e == nil {
		v.src = in.src
		return v
	}
	if e.UserAgent != "" {
		v.ua.UserAgent, v.ua.Platform = e.UserAgent, e.Platform
		if e.Metadata != nil {
			v.ua.Metadata = *e.Metadata
			for _, b := range e.Metadata.FullVersionList {
				if b.Brand == "Chromium" || b.Brand == "Google Chrome" {
					v.ua.FullVersion = b.Version
				}
			}
		} else {
			v.ua.Metadata, v.noHints = emulation.UserAgentMetadata{}, true
		}
	}
	if e.Locale != "" {
		v.c.Locale = e.Locale
		v.c.Languages = []string{e.Locale}
		if base, _, ok := strings.Cut(e.Locale, "-"); ok && base != "" {
			v.c.Languages = append(v.c.Languages, base)
		}
	}
	if e.TimeZone != "" {
		v.c.TimeZone = e.TimeZone
	}
	if e.ScreenWidth > 0 && e.ScreenHeight > 0 {
		v.c.ScreenWidth, v.c.ScreenHeight = e.ScreenWidth, e.ScreenHeight
	}
	so := scriptOptionsFor(v.c, &v.ua)
	if v.noHints {
		so.Brands, so.FullVersionList, so.UAPlatform, so.UAHints, so.NoUAData = nil, nil, "", nil, true
	}
	so.Mobile = e.Mobile
	v.src = script(v.c, so)
	return v
}
