// permissions.js — notification permission. Runs in the page and iframes.
// Headless Chromium has long answered Notification.permission "denied" while
// navigator.permissions.query({name: "notifications"}) says "prompt", a pair no headed browser
// gives (bot detectors test it). Notification.permission reads "default" instead of "denied", as
// in a headed browser that never asked. The getter is hooked without being read: reading it asks
// the browser process for the permission with a synchronous IPC, which held every document's
// first script by about 8 ms (measured on Chromium 156, a loaded 2-core machine); the native
// getter runs when the page reads it.
if (G.Notification && G.navigator && G.navigator.permissions) {
  hookGetter(G.Notification, 'permission', (self, v) => (v === 'denied' ? 'default' : v));
}
