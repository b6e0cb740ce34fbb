package pagecore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
)

// Cookie is a browser cookie, in the shape of Playwright's storage state.
type Cookie struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// URL, when setting, gives the domain, path and scheme at once.
	URL    string `json:"url,omitempty"`
	Domain string `json:"domain,omitempty"`
	Path   string `json:"path,omitempty"`
	// Expires is seconds since the Unix epoch; -1 (or 0 when setting) is a
	// session cookie.
	Expires  float64 `json:"expires"`
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	// SameSite is Strict, Lax or None ("" when the browser has none).
	SameSite string `json:"sameSite,omitempty"`
}

func fromCDPCookie(c *network.Cookie) Cookie {
	exp := c.Expires
	if c.Session {
		exp = -1
	}
	return Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Expires: exp,
		HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite)}
}

// Cookies returns the cookies the browser would send to urls, or, with no
// urls, to the current page and its frames (Network.getCookies).
func (t *Page) Cookies(ctx context.Context, urls []string) ([]Cookie, error) {
	res, err := cdp.Call(ctx, t.target, network.GetCookies, network.GetCookiesParams{URLs: urls})
	if err != nil {
		return nil, CDPErr("get cookies", err)
	}
	return sortCookies(res.Cookies), nil
}

// AllCookies returns every cookie of the tab's browser context
// (Storage.getCookies).
func (t *Page) AllCookies(ctx context.Context) ([]Cookie, error) {
	res, err := cdp.Call(ctx, t.target, storage.GetCookies, storage.GetCookiesParams{})
	if err != nil {
		if c := chromedp.FromContext(t.ctx); c != nil && c.Browser != nil {
			res, err = cdp.Call(ctx, c.Browser, storage.GetCookies, storage.GetCookiesParams{})
		}
		if err != nil {
			return nil, CDPErr("get all cookies", err)
		}
	}
	return sortCookies(res.Cookies), nil
}

func sortCookies(cs []*network.Cookie) []Cookie {
	out := make([]Cookie, 0, len(cs))
	for _, c := range cs {
		out = append(out, fromCDPCookie(c))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Domain != out[j].Domain {
			return out[i].Domain < out[j].Domain
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func sameSite(s string) (network.CookieSameSite, error) {
	switch strings.ToLower(s) {
	case "":
		return "", nil
	case "strict":
		return network.CookieSameSiteStrict, nil
	case "lax":
		return network.CookieSameSiteLax, nil
	case "none":
		return network.CookieSameSiteNone, nil
	}
	return "", Errorf(errcode.BadRequest, "invalid sameSite %q: use Strict, Lax or None", s)
}

// cookieParam checks a cookie to set: a name, and a url or a domain.
func cookieParam(c Cookie) (*network.CookieParam, error) {
	if c.Name == "" {
		return nil, Errorf(errcode.BadRequest, "a cookie needs a name")
	}
	if c.URL == "" && c.Domain == "" {
		return nil, Errorf(errcode.BadRequest, "cookie %q needs a url or a domain", c.Name)
	}
	if c.URL != "" {
		if u, err := url.Parse(c.URL); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, Errorf(errcode.BadRequest, "cookie %q: invalid url %q", c.Name, c.URL)
		}
	}
	ss, err := sameSite(c.SameSite)
	if err != nil {
		return nil, err
	}
	p := &network.CookieParam{Name: c.Name, Value: c.Value, URL: c.URL, Domain: c.Domain, Path: c.Path,
		Secure: c.Secure, HTTPOnly: c.HTTPOnly, SameSite: ss}
	if c.URL == "" && p.Path == "" {
		p.Path = "/"
	}
	if c.Expires > 0 {
		p.Expires = cdp.TimeSinceEpoch(c.Expires)
	}
	return p, nil
}

// SetCookie sets a cookie (Network.setCookie). It needs a name and a url
// or a domain; path defaults to "/" with a domain. Errors: bad_request for
// a missing or invalid field, or a cookie the browser refuses.
func (t *Page) SetCookie(ctx context.Context, c Cookie) error {
	p, err := cookieParam(c)
	if err != nil {
		return err
	}
	_, err = cdp.Call(ctx, t.target, network.SetCookie, network.SetCookieParams{
		Name: p.Name, Value: p.Value, URL: p.URL, Domain: p.Domain, Path: p.Path,
		Secure: new(p.Secure), HTTPOnly: new(p.HTTPOnly), SameSite: p.SameSite, Expires: p.Expires,
	})
	if err != nil {
		if ctx.Err() != nil {
			return CDPErr("set cookie", err)
		}
		return Errorf(errcode.BadRequest, "the browser refused cookie %q: %v", c.Name, err)
	}
	return nil
}

// ClearCookies deletes every cookie of the browser
// (Network.clearBrowserCookies).
func (t *Page) ClearCookies(ctx context.Context) error {
	if _, err := cdp.Call(ctx, t.target, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		return CDPErr("clear cookies", err)
	}
	return nil
}

// SetHeaders sets the extra HTTP headers the tab sends with every request
// (Network.setExtraHTTPHeaders), replacing earlier ones; an empty map
// removes them. A User-Agent header sets the user agent instead
// (Emulation.setUserAgentOverride), so navigator.userAgent agrees.
// Errors: bad_request for an invalid name or a value with a line break.
func (t *Page) SetHeaders(ctx context.Context, headers map[string]string) error {
	extra := network.Headers{}
	ua := ""
	for k, v := range headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:()<>@,;\\\"/[]?={}") {
			return Errorf(errcode.BadRequest, "invalid header name %q", k)
		}
		if strings.ContainsAny(v, "\r\n") {
			return Errorf(errcode.BadRequest, "header %s: the value has a line break", k)
		}
		if strings.EqualFold(k, "User-Agent") {
			ua = v
			continue
		}
		extra[k] = v
	}
	if _, err := cdp.Call(ctx, t.target, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: extra}); err != nil {
		return CDPErr("set headers", err)
	}
	if ua != "" {
		if _, err := cdp.Call(ctx, t.target, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua}); err != nil {
			return CDPErr("set user agent", err)
		}
	}
	return nil
}

// StorageState is what an agent saves to start again signed in: the
// cookies and the local storage of origins, in Playwright's shape.
type StorageState struct {
	Cookies []Cookie        `json:"cookies"`
	Origins []OriginStorage `json:"origins"`
}

// OriginStorage is the local storage of one origin.
type OriginStorage struct {
	Origin       string        `json:"origin"`
	LocalStorage []StorageItem `json:"localStorage"`
}

// StorageItem is one local storage entry.
type StorageItem struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// StorageState returns every cookie of the browser context
// (Storage.getCookies) and the local storage of the current page's origin
// (read in the page). A page blocked by a dialog gives the cookies only.
func (t *Page) StorageState(ctx context.Context) (*StorageState, error) {
	cs, err := t.AllCookies(ctx)
	if err != nil {
		return nil, err
	}
	st := &StorageState{Cookies: cs, Origins: []OriginStorage{}}
	if t.PendingDialog() != nil {
		return st, nil
	}
	var o struct {
		Origin string     `json:"origin"`
		Items  [][]string `json:"items"`
	}
	const read = `(() => { let items = []; try { for (let i = 0; i < localStorage.length; i++) { const k = localStorage.key(i); items.push([k, localStorage.getItem(k)]); } } catch (e) {}
 return {origin: location.origin, items}; })()`
	if err := t.EvalJSON(ctx, read, &o); err != nil {
		return nil, err
	}
	if o.Origin != "" && o.Origin != "null" && len(o.Items) > 0 {
		sort.Slice(o.Items, func(i, j int) bool { return o.Items[i][0] < o.Items[j][0] })
		os := OriginStorage{Origin: o.Origin}
		for _, kv := range o.Items {
			if len(kv) == 2 && kv[0] != storageFlag {
				os.LocalStorage = append(os.LocalStorage, StorageItem{Name: kv[0], Value: kv[1]})
			}
		}
		st.Origins = append(st.Origins, os)
	}
	return st, nil
}

// storageFlag is the sessionStorage key that marks an origin whose local
// storage was restored in this tab.
const storageFlag = "__tabpilot_storage_restored"

// SetStorageState restores a storage state (the JSON of StorageState, as
// tab.storageState() or Playwright saves it): the cookies
// (Network.setCookies) and each origin's local storage, written before the
// page's scripts run when the tab first shows a document of that origin
// (Page.addScriptToEvaluateOnNewDocument, also run at once on the current
// document). It replaces local storage restored earlier in the tab.
// Errors: bad_request for JSON that is not a storage state or a cookie
// without a url or domain.
func (t *Page) SetStorageState(ctx context.Context, raw json.RawMessage) error {
	var st StorageState
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&st); err != nil {
		return Errorf(errcode.BadRequest, "invalid storage state: %v (want {cookies: [...], origins: [{origin, localStorage: [{name, value}]}]})", err)
	}
	var params []*network.CookieParam
	for _, c := range st.Cookies {
		p, err := cookieParam(c)
		if err != nil {
			return err
		}
		params = append(params, p)
	}
	if len(params) > 0 {
		if _, err := cdp.Call(ctx, t.target, network.SetCookies, network.SetCookiesParams{Cookies: params}); err != nil {
			if ctx.Err() != nil {
				return CDPErr("set cookies", err)
			}
			return Errorf(errcode.BadRequest, "the browser refused the storage state's cookies: %v", err)
		}
	}
	t.x.mu.Lock()
	old := t.x.storageScripts
	t.x.storageScripts = nil
	t.x.mu.Unlock()
	for _, id := range old {
		_, _ = cdp.Call(ctx, t.target, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: id})
	}
	data := map[string][][2]string{}
	for _, o := range st.Origins {
		u, err := url.Parse(o.Origin)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return Errorf(errcode.BadRequest, "invalid storage state origin %q: use scheme://host[:port]", o.Origin)
		}
		origin := u.Scheme + "://" + u.Host
		for _, it := range o.LocalStorage {
			data[origin] = append(data[origin], [2]string{it.Name, it.Value})
		}
	}
	if len(data) == 0 {
		return nil
	}
	js, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode local storage: %w", err)
	}
	// The flag's value names this restore, so a later one applies again.
	nonce := fmt.Sprintf("%x", time.Now().UnixNano())
	src := fmt.Sprintf(`(() => { const items = (%s)[location.origin]; if (!items) return;
 try { if (sessionStorage.getItem(%q) === %q) return; for (const [k, v] of items) localStorage.setItem(k, v); sessionStorage.setItem(%q, %q); } catch (e) {} })();`,
		js, storageFlag, nonce, storageFlag, nonce)
	var res page.AddScriptToEvaluateOnNewDocumentResult
	err = t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src, RunImmediately: new(true)})
		return err
	})
	if err != nil {
		return EvalErr(err)
	}
	t.x.mu.Lock()
	t.x.storageScripts = append(t.x.storageScripts, res.Identifier)
	t.x.mu.Unlock()
	return nil
}
