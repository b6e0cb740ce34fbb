// fp.js: the collectors of each surface, for the surface pages and fingerprint.html.
// Test-only code (not a patch): FPX.<surface>() returns the values a detector would read.
/* eslint-disable */
var FPX = (function () {
  const safe = FP.safe, asafe = FP.asafe;
  const nativeRe = /^function [\w$ ]*\(\) \{ \[native code\] \}$/;
  const fnToString = Function.prototype.toString;

  function getter(proto, name) {
    const d = proto && Object.getOwnPropertyDescriptor(proto, name);
    return d && d.get;
  }
  function nativeFunctions() {
    const w = window;
    const list = {
      'Function.prototype.toString': Function.prototype.toString,
      'Navigator.webdriver': getter(Navigator.prototype, 'webdriver'),
      'Navigator.userAgent': getter(Navigator.prototype, 'userAgent'),
      'Navigator.appVersion': getter(Navigator.prototype, 'appVersion'),
      'Navigator.platform': getter(Navigator.prototype, 'platform'),
      'Navigator.languages': getter(Navigator.prototype, 'languages'),
      'Navigator.language': getter(Navigator.prototype, 'language'),
      'Navigator.hardwareConcurrency': getter(Navigator.prototype, 'hardwareConcurrency'),
      'Navigator.deviceMemory': getter(Navigator.prototype, 'deviceMemory'),
      'Navigator.plugins': getter(Navigator.prototype, 'plugins'),
      'Navigator.mimeTypes': getter(Navigator.prototype, 'mimeTypes'),
      'Navigator.userAgentData': getter(Navigator.prototype, 'userAgentData'),
      'Screen.width': getter(Screen.prototype, 'width'),
      'Screen.height': getter(Screen.prototype, 'height'),
      'Screen.availWidth': getter(Screen.prototype, 'availWidth'),
      'Screen.availHeight': getter(Screen.prototype, 'availHeight'),
      'Screen.colorDepth': getter(Screen.prototype, 'colorDepth'),
      'window.outerWidth': getter(w, 'outerWidth'),
      'window.outerHeight': getter(w, 'outerHeight'),
      'window.devicePixelRatio': getter(w, 'devicePixelRatio'),
      'window.screenX': getter(w, 'screenX'),
      'window.screenY': getter(w, 'screenY'),
      'Document.hidden': getter(Document.prototype, 'hidden'),
      'Document.visibilityState': getter(Document.prototype, 'visibilityState'),
      'Document.hasFocus': Document.prototype.hasFocus,
      'HTMLElement.offsetHeight': getter(HTMLElement.prototype, 'offsetHeight'),
      'HTMLIFrameElement.contentWindow': getter(HTMLIFrameElement.prototype, 'contentWindow'),
      'HTMLIFrameElement.srcdoc': getter(HTMLIFrameElement.prototype, 'srcdoc'),
      'WebGLRenderingContext.getParameter': w.WebGLRenderingContext && WebGLRenderingContext.prototype.getParameter,
      'WebGL2RenderingContext.getParameter': w.WebGL2RenderingContext && WebGL2RenderingContext.prototype.getParameter,
      'CanvasRenderingContext2D.measureText': CanvasRenderingContext2D.prototype.measureText,
      'CanvasRenderingContext2D.fillText': CanvasRenderingContext2D.prototype.fillText,
      'BaseAudioContext.sampleRate': getter(w.BaseAudioContext && BaseAudioContext.prototype, 'sampleRate'),
      'AudioContext.baseLatency': getter(w.AudioContext && AudioContext.prototype, 'baseLatency'),
      'AudioContext.outputLatency': getter(w.AudioContext && AudioContext.prototype, 'outputLatency'),
      'AudioDestinationNode.maxChannelCount': getter(w.AudioDestinationNode && AudioDestinationNode.prototype, 'maxChannelCount'),
      'HTMLMediaElement.canPlayType': HTMLMediaElement.prototype.canPlayType,
      'MediaSource.isTypeSupported': w.MediaSource && MediaSource.isTypeSupported,
      'Notification.permission': getter(w.Notification, 'permission'),
      'Permissions.query': w.Permissions && Permissions.prototype.query,
      'Intl.DateTimeFormat.resolvedOptions': Intl.DateTimeFormat.prototype.resolvedOptions,
      'Date.toString': Date.prototype.toString,
      'Date.getTimezoneOffset': Date.prototype.getTimezoneOffset,
      'chrome.loadTimes': w.chrome && w.chrome.loadTimes,
      'chrome.csi': w.chrome && w.chrome.csi,
    };
    const res = { checked: 0, nonNative: [] };
    for (const k in list) {
      const f = list[k];
      if (typeof f !== 'function') continue;
      res.checked++;
      let s;
      try { s = fnToString.call(f); } catch (e) { s = 'throws'; }
      const ok = nativeRe.test(s) && Object.getPrototypeOf(f) === Function.prototype &&
        (k.indexOf("chrome.") === 0 || k === "Worker" || k === "SharedWorker" || !("prototype" in f)) &&
        safe(() => f.toString()) === s;
      if (!ok) res.nonNative.push(k + ': ' + s.slice(0, 80));
    }
    res.toStringOfToString = fnToString.call(fnToString);
    try { fnToString.call({}); res.wrongReceiver = 'no error'; } catch (e) {
      res.wrongReceiver = e.constructor.name + ': ' + e.message;
      res.stackClean = !/__tpStealth|Object\.apply/.test(e.stack);
    }
    return res;
  }

  function webdriver() {
    return {
      value: navigator.webdriver,
      own: Object.getOwnPropertyNames(navigator).indexOf('webdriver') >= 0,
      onPrototype: !!Object.getOwnPropertyDescriptor(Navigator.prototype, 'webdriver'),
    };
  }

  function chrome() {
    const c = window.chrome;
    if (!c) return { type: typeof c };
    return {
      type: typeof c, keys: Object.keys(c).sort(),
      runtime: typeof c.runtime, runtimeKeys: c.runtime ? Object.keys(c.runtime).sort() : null,
      loadTimes: typeof c.loadTimes, csi: typeof c.csi, app: typeof c.app,
      loadTimesKeys: safe(() => Object.keys(c.loadTimes()).sort()),
      csiKeys: safe(() => Object.keys(c.csi()).sort()),
      appKeys: c.app ? Object.keys(c.app).sort() : null,
    };
  }

  function hairline() {
    const div = document.createElement('div');
    div.style.border = '.5px solid transparent';
    document.body.appendChild(div);
    const h = div.offsetHeight;
    document.body.removeChild(div);
    return { offsetHeight: h, hairline: h === 1 };
  }

  function frameValues(w) {
    return {
      webdriver: safe(() => w.navigator.webdriver),
      chrome: safe(() => typeof w.chrome),
      userAgent: safe(() => w.navigator.userAgent),
      platform: safe(() => w.navigator.platform),
      plugins: safe(() => w.navigator.plugins.length),
      languages: safe(() => Array.from(w.navigator.languages)),
      hardwareConcurrency: safe(() => w.navigator.hardwareConcurrency),
      toStringNative: safe(() => nativeRe.test(w.Function.prototype.toString.call(
        Object.getOwnPropertyDescriptor(w.Navigator.prototype, 'webdriver').get))),
    };
  }
  function iframes() {
    const out = {};
    const a = document.createElement('iframe');
    a.srcdoc = '<!doctype html><p>srcdoc</p>';
    document.body.appendChild(a);
    out.srcdocSync = frameValues(a.contentWindow);
    out.contentWindowSane = safe(() => a.contentWindow === window.frames[window.frames.length - 1] &&
      a.contentWindow.self === a.contentWindow && a.contentWindow.frameElement === a &&
      a.contentWindow.parent === window && a.contentWindow.window === a.contentWindow);
    const detached = document.createElement('iframe');
    out.detachedContentWindow = detached.contentWindow === null;
    const b = document.createElement('iframe');
    document.body.appendChild(b);
    out.blankSync = frameValues(b.contentWindow);
    return new Promise((resolve) => {
      const done = () => { out.srcdocLoaded = frameValues(a.contentWindow); resolve(out); };
      if (a.contentDocument && a.contentDocument.readyState === 'complete' && a.contentDocument.body &&
          a.contentDocument.body.textContent === 'srcdoc') done();
      else a.onload = done;
      setTimeout(() => resolve(out), 3000);
    });
  }

  function webgl() {
    const out = {};
    for (const kind of ['webgl', 'webgl2']) {
      out[kind] = safe(() => {
        const gl = document.createElement('canvas').getContext(kind);
        if (!gl) return null;
        const ext = gl.getExtension('WEBGL_debug_renderer_info');
        return {
          vendor: gl.getParameter(gl.VENDOR), renderer: gl.getParameter(gl.RENDERER),
          unmaskedVendor: ext ? gl.getParameter(ext.UNMASKED_VENDOR_WEBGL) : null,
          unmaskedRenderer: ext ? gl.getParameter(ext.UNMASKED_RENDERER_WEBGL) : null,
          version: gl.getParameter(gl.VERSION),
        };
      });
    }
    return out;
  }

  function screenInfo() {
    const s = screen;
    return {
      width: s.width, height: s.height, availWidth: s.availWidth, availHeight: s.availHeight,
      availLeft: s.availLeft, availTop: s.availTop,
      colorDepth: s.colorDepth, pixelDepth: s.pixelDepth, devicePixelRatio: devicePixelRatio,
      innerWidth: innerWidth, innerHeight: innerHeight, outerWidth: outerWidth, outerHeight: outerHeight,
      screenX: screenX, screenY: screenY,
      orientation: safe(() => s.orientation.type),
      deviceWidthMatches: matchMedia('(device-width: ' + s.width + 'px)').matches,
      deviceHeightMatches: matchMedia('(device-height: ' + s.height + 'px)').matches,
      resolutionMatches: matchMedia('(resolution: ' + devicePixelRatio + 'dppx)').matches,
    };
  }

  function hash(str) {
    let h = 5381;
    for (let i = 0; i < str.length; i++) h = ((h << 5) + h + str.charCodeAt(i)) | 0;
    return (h >>> 0).toString(16);
  }
  function fonts() {
    const c = document.createElement('canvas');
    const ctx = c.getContext('2d');
    const text = 'mmMwWLliI0fiflO&1 Sphinx of black quartz, judge my vow';
    const base = {};
    for (const b of ['monospace', 'sans-serif', 'serif']) { ctx.font = '72px ' + b; base[b] = ctx.measureText(text).width; }
    const candidates = ['Arial', 'Helvetica', 'Times New Roman', 'Courier New', 'Verdana', 'Georgia',
      'DejaVu Sans', 'DejaVu Serif', 'DejaVu Sans Mono', 'Liberation Sans', 'Liberation Serif', 'Liberation Mono',
      'Noto Sans', 'Noto Color Emoji', 'Ubuntu', 'Cantarell', 'Segoe UI', 'Roboto'];
    const present = [];
    for (const f of candidates) {
      for (const b in base) {
        ctx.font = "72px '" + f + "', " + b;
        if (ctx.measureText(text).width !== base[b]) { present.push(f); break; }
      }
    }
    const widths = {};
    for (const f of ['16px sans-serif', '16px serif', '16px monospace', '13px Arial', '11px sans-serif']) {
      ctx.font = f; widths[f] = ctx.measureText(text).width;
    }
    c.width = 400; c.height = 60;
    ctx.textBaseline = 'top';
    ctx.font = '14px sans-serif';
    ctx.fillStyle = '#f60'; ctx.fillRect(100, 1, 62, 20);
    ctx.fillStyle = '#069'; ctx.fillText(text, 2, 15);
    ctx.fillStyle = 'rgba(102, 204, 0, 0.7)'; ctx.font = '18px serif'; ctx.fillText(text, 4, 35);
    return { present: present, widths: widths, base: base, canvasHash: hash(c.toDataURL()) };
  }

  async function audio() {
    const ac = new AudioContext();
    const out = {
      sampleRate: ac.sampleRate, baseLatency: ac.baseLatency, outputLatency: ac.outputLatency,
      state: ac.state, maxChannelCount: ac.destination.maxChannelCount, channelCount: ac.destination.channelCount,
      sinkId: safe(() => ac.sinkId),
    };
    await asafe(() => ac.close());
    out.offlineSampleRate = safe(() => new OfflineAudioContext(1, 44100, 44100).sampleRate);
    return out;
  }

  function plugins() {
    const p = navigator.plugins, m = navigator.mimeTypes;
    const names = [];
    for (let i = 0; i < p.length; i++) names.push(p[i].name);
    const types = [];
    for (let i = 0; i < m.length; i++) types.push(m[i].type + ' ' + (m[i].enabledPlugin && m[i].enabledPlugin.name));
    let protoOK = Object.getPrototypeOf(p) === PluginArray.prototype && Object.getPrototypeOf(m) === MimeTypeArray.prototype;
    for (let i = 0; i < p.length; i++) protoOK = protoOK && Object.getPrototypeOf(p[i]) === Plugin.prototype;
    for (let i = 0; i < m.length; i++) protoOK = protoOK && Object.getPrototypeOf(m[i]) === MimeType.prototype;
    return {
      length: p.length, names: names, mimeTypes: types, prototypesOK: protoOK,
      pdfViewerEnabled: navigator.pdfViewerEnabled,
      namedItem: safe(() => !!p.namedItem('PDF Viewer')),
      instanceOf: p instanceof PluginArray,
    };
  }

  function codecs() {
    const v = document.createElement('video'), a = document.createElement('audio');
    const video = ['video/mp4; codecs="avc1.42E01E"', 'video/mp4; codecs="avc1.42E01E, mp4a.40.2"',
      'video/webm; codecs="vp8, vorbis"', 'video/webm; codecs="vp9"', 'video/ogg; codecs="theora"',
      'video/mp4; codecs="hev1.1.6.L93.B0"', 'video/mp4; codecs="av01.0.05M.08"', 'video/x-matroska'];
    const aud = ['audio/mpeg', 'audio/mp4; codecs="mp4a.40.2"', 'audio/aac', 'audio/ogg; codecs="vorbis"',
      'audio/ogg; codecs="opus"', 'audio/wav; codecs="1"', 'audio/flac', 'audio/webm; codecs="opus"'];
    const out = { canPlay: {}, mediaSource: {}, mediaRecorder: {} };
    for (const t of video) out.canPlay[t] = v.canPlayType(t);
    for (const t of aud) out.canPlay[t] = a.canPlayType(t);
    for (const t of ['video/mp4; codecs="avc1.42E01E"', 'video/webm; codecs="vp9"', 'audio/mp4; codecs="mp4a.40.2"'])
      out.mediaSource[t] = safe(() => MediaSource.isTypeSupported(t));
    for (const t of ['video/webm', 'video/mp4', 'audio/webm'])
      out.mediaRecorder[t] = safe(() => MediaRecorder.isTypeSupported(t));
    return out;
  }

  async function visibility() {
    const raf = await new Promise((resolve) => {
      let fired = false;
      requestAnimationFrame(() => { fired = true; resolve(true); });
      // A hidden page never gets a frame; a visible one on a loaded
      // machine (a -race run of every package) took over 1 s.
      setTimeout(() => resolve(fired), 10000);
    });
    return { hidden: document.hidden, visibilityState: document.visibilityState, hasFocus: document.hasFocus(), rafFires: raf };
  }

  async function permissions() {
    return {
      notification: safe(() => Notification.permission),
      query: await asafe(async () => (await navigator.permissions.query({ name: 'notifications' })).state),
    };
  }

  function worker(kind) {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve('timeout'), 90000);
      try {
        if (kind === 'dedicated') {
          const w = new Worker('/testdata/fpworker.js');
          w.onmessage = (e) => { clearTimeout(t); resolve(e.data); w.terminate(); };
          w.onerror = (e) => { clearTimeout(t); resolve('error: ' + e.message); };
          w.postMessage('go');
        } else {
          const w = new SharedWorker('/testdata/fpworker.js?shared=' + Math.random());
          w.port.onmessage = (e) => { clearTimeout(t); resolve(e.data); };
          w.onerror = (e) => { clearTimeout(t); resolve('error'); };
          w.port.start();
          w.port.postMessage('go');
        }
      } catch (e) { clearTimeout(t); resolve('error: ' + e.message); }
    });
  }

  // frameSurfaces: the surfaces a page and its out-of-process iframe must agree on, read in this
  // document: its navigator (and its dedicated worker's), window.chrome, plugins, WebGL, native
  // masking, screen, visibility, and the request headers of its document (window.DOC_HEADERS, when
  // the test server served it through /docheaders/) and of a fetch of its own origin's /headers.
  async function frameSurfaces() {
    const pick = (h) => h && { userAgent: h['user-agent'], secChUa: h['sec-ch-ua'],
      secChUaPlatform: h['sec-ch-ua-platform'], acceptLanguage: h['accept-language'] };
    const [b, w, fetched] = await Promise.all([FP.basic(), worker('dedicated'),
      asafe(async () => pick(await (await fetch('/headers')).json()))]);
    const c = window.chrome;
    const gl = safe(() => webgl().webgl);
    const nat = safe(nativeFunctions);
    const s = safe(screenInfo);
    return {
      webdriver: b.webdriver, userAgent: b.userAgent, appVersion: b.appVersion, platform: b.platform,
      language: b.language, languages: b.languages, uaData: b.uaData, intl: b.intl,
      hardwareConcurrency: b.hardwareConcurrency, deviceMemory: b.deviceMemory,
      chrome: { type: typeof c, loadTimes: typeof (c && c.loadTimes), csi: typeof (c && c.csi),
        app: typeof (c && c.app), runtime: typeof (c && c.runtime) },
      plugins: { length: navigator.plugins.length, mimeTypes: navigator.mimeTypes.length, pdfViewerEnabled: navigator.pdfViewerEnabled },
      webgl: gl && { unmaskedVendor: gl.unmaskedVendor, unmaskedRenderer: gl.unmaskedRenderer },
      native: nat && { checked: nat.checked, nonNative: nat.nonNative, toStringOfToString: nat.toStringOfToString,
        wrongReceiver: nat.wrongReceiver, stackClean: nat.stackClean },
      screen: s && { width: s.width, height: s.height, availWidth: s.availWidth, availHeight: s.availHeight,
        colorDepth: s.colorDepth, devicePixelRatio: s.devicePixelRatio },
      visibility: { hidden: document.hidden, visibilityState: document.visibilityState },
      hasFocus: document.hasFocus(),
      docHeaders: pick(window.DOC_HEADERS) || null,
      headers: fetched,
      worker: w,
    };
  }

  // crossFrame loads the page at path from origin (another site: an out-of-process iframe under
  // site isolation) in an iframe, and resolves to what that page posts back ('timeout' after 90s).
  function crossFrame(origin, path) {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve('timeout'), 90000);
      addEventListener('message', (e) => { if (e.origin === origin) { clearTimeout(t); resolve(e.data); } });
      const f = document.createElement('iframe');
      f.src = origin + path;
      document.body.appendChild(f);
    });
  }

  function misc() {
    return {
      vendor: navigator.vendor, productSub: navigator.productSub, maxTouchPoints: navigator.maxTouchPoints,
      rtt: safe(() => navigator.connection.rtt), external: safe(() => String(window.external)),
      pointerFine: matchMedia('(pointer: fine)').matches, hover: matchMedia('(hover: hover)').matches,
      colorScheme: matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
      reducedMotion: matchMedia('(prefers-reduced-motion: reduce)').matches,
      evalLength: eval.toString().length,
      domAutomation: 'domAutomation' in window || 'domAutomationController' in window,
      cdcKeys: Object.getOwnPropertyNames(window).filter((k) => /^cdc_|^\$cdc_|^__(webdriver|selenium|driver)/.test(k)),
      historyLength: history.length,
    };
  }

  return {
    native: () => safe(nativeFunctions), webdriver: () => safe(webdriver), chrome: () => safe(chrome),
    visibility: () => asafe(visibility), hairline: () => safe(hairline), iframe: () => asafe(iframes),
    webgl: () => safe(webgl), screen: () => safe(screenInfo), fonts: () => safe(fonts), audio: () => asafe(audio),
    locale: async () => { const b = await FP.basic(); const w = await worker('dedicated'); return { language: b.language, languages: b.languages, intl: b.intl, worker: { language: w.language, languages: w.languages, intl: w.intl } }; },
    plugins: () => safe(plugins), codecs: () => safe(codecs), permissions: () => asafe(permissions),
    hardware: () => ({ hardwareConcurrency: navigator.hardwareConcurrency, deviceMemory: navigator.deviceMemory }),
    navigator: () => FP.basic(), worker: worker, misc: () => safe(misc),
    frameSurfaces: frameSurfaces, crossFrame: crossFrame,
  };
})();
