// useragent.js — user agent, platform and client hints. Runs in the page, iframes and workers.
// In a page the CDP override (Emulation.setUserAgentOverride) already gives these values and this
// patch does nothing; in a worker the browser's own values show (shared workers take no override),
// so navigator.userAgent, appVersion, platform and userAgentData are made to agree with the page's:
// the configured user agent, or the browser's with "HeadlessChrome" read as "Chrome", and client
// hints (brands and the high-entropy values) equal to the page's userAgentMetadata. An emulated
// Safari user agent (stealth.Update) has no navigator.userAgentData at all.
{
  const nav = G.navigator;
  const proto = G.Navigator ? G.Navigator.prototype : (G.WorkerNavigator && G.WorkerNavigator.prototype);
  if (nav && proto) {
    const ua = O.userAgent || apply(String.prototype.replace, nav.userAgent, [/HeadlessChrome\//g, 'Chrome/']);
    if (nav.userAgent !== ua) {
      hookGetter(proto, 'userAgent', () => ua);
      hookGetter(proto, 'appVersion', () => apply(String.prototype.replace, ua, [/^Mozilla\//, '']));
    }
    if (O.platform && nav.platform !== O.platform) hookGetter(proto, 'platform', () => O.platform);
    if (O.noUAData) {
      // An emulated Safari: no client hints, and no navigator.userAgentData, as in Safari.
      delete proto.userAgentData;
      delete G.NavigatorUAData;
    }
    const UAD = G.NavigatorUAData && G.NavigatorUAData.prototype;
    if (UAD && O.brands) {
      const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
      const fix = (list, want) => (want && !same(list, want) ? want.map((b) => ({ brand: b.brand, version: b.version })) : list);
      hookGetter(UAD, 'brands', (self, v) => (same(v, O.brands) ? v : Object.freeze(fix(v, O.brands).map((b) => Object.freeze(b)))));
      if (O.uaPlatform) hookGetter(UAD, 'platform', (self, v) => O.uaPlatform);
      hookMethod(UAD, 'getHighEntropyValues', (t, self, args) => apply(Promise.prototype.then, apply(t, self, args), [(r) => {
        if (r.brands) r.brands = fix(r.brands, O.brands);
        if (r.fullVersionList && O.fullVersionList) r.fullVersionList = fix(r.fullVersionList, O.fullVersionList);
        if ('uaFullVersion' in r && O.fullVersion) r.uaFullVersion = O.fullVersion;
        if (r.platform && O.uaPlatform) r.platform = O.uaPlatform;
        const hints = O.uaHints || {};
        for (const k in hints) if (k in r) r[k] = hints[k];
        return r;
      }]));
    }
  }
}
