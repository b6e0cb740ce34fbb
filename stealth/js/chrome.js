// chrome.js — window.chrome. Runs in the page and iframes (not in workers).
// Chromium's new headless mode already has window.chrome with app, csi and loadTimes, like a headed
// browser; chrome-headless-shell and old headless builds have none. When it is missing, this adds
// chrome.app, chrome.csi() and chrome.loadTimes() (values from the Navigation Timing API), all
// reading as native code. chrome.runtime is left as the browser has it: a headed Chromium without
// extensions has none on ordinary pages, so adding one would be the tell.
if (G.document && !G.chrome) {
  const nativeFn = (name, fn) => { apply(wmSet, nativeText, [fn, 'function ' + name + '() { [native code] }']); return fn; };
  const timing = () => (G.performance && G.performance.timing) || {};
  const nav = () => (G.performance && G.performance.getEntriesByType && G.performance.getEntriesByType('navigation')[0]) || {};
  const chrome = {};
  chrome.app = {
    isInstalled: false,
    InstallState: { DISABLED: 'disabled', INSTALLED: 'installed', NOT_INSTALLED: 'not_installed' },
    RunningState: { CANNOT_RUN: 'cannot_run', READY_TO_RUN: 'ready_to_run', RUNNING: 'running' },
    getDetails: nativeFn('getDetails', function () { return null; }),
    getIsInstalled: nativeFn('getIsInstalled', function () { return false; }),
    installState: nativeFn('installState', function (cb) { if (typeof cb === 'function') cb('not_installed'); }),
    runningState: nativeFn('runningState', function () { return 'cannot_run'; }),
  };
  chrome.csi = nativeFn('', function () {
    const t = timing();
    return { onloadT: t.domContentLoadedEventEnd, pageT: G.performance.now(), startE: t.navigationStart, tran: 15 };
  });
  chrome.loadTimes = nativeFn('', function () {
    const t = timing(), n = nav();
    const s = (v) => (v || 0) / 1000;
    const proto = n.nextHopProtocol || 'http/1.1';
    return {
      commitLoadTime: s(t.responseStart), connectionInfo: proto, finishDocumentLoadTime: s(t.domContentLoadedEventEnd),
      finishLoadTime: s(t.loadEventEnd), firstPaintAfterLoadTime: 0, firstPaintTime: s(t.loadEventEnd),
      navigationType: 'Other', npnNegotiatedProtocol: proto === 'http/1.1' ? 'unknown' : proto,
      requestTime: s(t.navigationStart), startLoadTime: s(t.navigationStart),
      wasAlternateProtocolAvailable: false, wasFetchedViaSpdy: proto === 'h2', wasNpnNegotiated: proto !== 'http/1.1',
    };
  });
  defProp.define(G, 'chrome', { value: chrome, writable: true, enumerable: true, configurable: false });
}
