// codecs.js — media codecs. Runs in the page and iframes.
// A Chromium built without the proprietary codecs answers "" for H.264 and AAC, while the Chrome it
// claims to be answers "probably". When the user agent says Chrome and the build lacks them,
// HTMLMediaElement.canPlayType and MediaSource.isTypeSupported answer as Chrome does for MP4/H.264
// and AAC. Chromium builds with those codecs (Debian's does) are left alone.
if (G.HTMLMediaElement && G.document) {
  const probe = G.document.createElement('video');
  const h264 = 'video/mp4; codecs="avc1.42E01E"';
  if (probe.canPlayType(h264) === '') {
    const mp4 = /^\s*(video|audio)\/mp4\s*(;\s*codecs="?\s*(avc1(\.[0-9a-f.]+)?|mp4a\.40\.[25]|avc1[^"]*,\s*mp4a\.40\.2)\s*"?)?\s*$/i;
    const aac = /^\s*audio\/(aac|x-m4a|mp4)\s*$/i;
    hookMethod(G.HTMLMediaElement.prototype, 'canPlayType', (t, self, args) => {
      const v = apply(t, self, args);
      if (v !== '' || typeof args[0] !== 'string') return v;
      if (mp4.test(args[0])) return /codecs/i.test(args[0]) ? 'probably' : 'maybe';
      if (aac.test(args[0])) return 'maybe';
      return v;
    });
    if (G.MediaSource) hookMethod(G.MediaSource, 'isTypeSupported', (t, self, args) => apply(t, self, args) || (typeof args[0] === 'string' && mp4.test(args[0])));
  }
}
