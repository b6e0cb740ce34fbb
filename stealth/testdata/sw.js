// sw.js: a service worker that answers a message with FP.basic(), now and as read when its
// script started (the values a detector reads at the top level), and the User-Agent header of
// its own fetch.
importScripts('/testdata/fpcommon.js');
const atStart = { userAgent: navigator.userAgent, appVersion: navigator.appVersion, platform: navigator.platform,
  languages: Array.from(navigator.languages), hardwareConcurrency: navigator.hardwareConcurrency };
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('message', (e) => {
  e.waitUntil(Promise.all([FP.basic(), FP.asafe(async () => (await (await fetch('/headers')).json())['user-agent'])])
    .then(([v, ua]) => { v.atStart = atStart; v.fetchUserAgent = ua; e.ports[0].postMessage(v); }));
});
