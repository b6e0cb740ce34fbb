// fpcommon.js: the fingerprint collectors shared by the page and its workers.
// Test-only code (not a patch): it reads each surface and never throws.
/* eslint-disable */
var FP = (function () {
  function safe(f) {
    try { return f(); } catch (e) { return 'error: ' + (e && e.message); }
  }
  async function asafe(f) {
    try { return await f(); } catch (e) { return 'error: ' + (e && e.message); }
  }
  async function uaData() {
    const d = self.navigator.userAgentData;
    if (!d) return null;
    const high = await asafe(() => d.getHighEntropyValues(['architecture', 'bitness', 'model', 'platformVersion',
      'uaFullVersion', 'fullVersionList', 'wow64', 'formFactors']));
    return { brands: d.brands, mobile: d.mobile, platform: d.platform, high: high };
  }
  function intl() {
    const o = Intl.DateTimeFormat().resolvedOptions();
    const d = new Date(2024, 0, 15, 12, 0, 0);
    return {
      locale: o.locale, timeZone: o.timeZone,
      numberLocale: new Intl.NumberFormat().resolvedOptions().locale,
      offset: d.getTimezoneOffset(),
      dateString: d.toString().replace(/^.*\d\d:\d\d:\d\d /, ''),
      localeString: d.toLocaleString(),
    };
  }
  // basic: what both a page and a worker can report.
  async function basic() {
    const n = self.navigator;
    return {
      userAgent: n.userAgent, appVersion: n.appVersion, platform: n.platform,
      language: n.language, languages: n.languages ? Array.from(n.languages) : null,
      hardwareConcurrency: n.hardwareConcurrency, deviceMemory: n.deviceMemory,
      webdriver: n.webdriver, uaData: await uaData(), intl: safe(intl),
    };
  }
  return { safe: safe, asafe: asafe, basic: basic };
})();
