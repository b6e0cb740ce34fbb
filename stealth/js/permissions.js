// permissions.js — notification permission. Runs in the page and iframes.
// Headless Chromium has long answered Notification.permission "denied" while
// navigator.permissions.query({name: "notifications"}) says "prompt", a pair no headed browser
// gives (bot detectors test it). When the two disagree that way, Notification.permission reads
// "default", as in a headed browser that never asked.
if (G.Notification && G.Notification.permission === 'denied' && G.navigator && G.navigator.permissions) {
  hookGetter(G.Notification, 'permission', (self, v) => (v === 'denied' ? 'default' : v));
}
