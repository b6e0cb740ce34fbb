// native.js — native-function masking. Runs first, in every realm the patches reach: the page, its
// iframes, and dedicated and shared workers.
//
// Keeps a WeakMap from each patched function to the source text of the native function it stands
// for, and replaces Function.prototype.toString with a Proxy of itself that answers from that map.
// So Function.prototype.toString of every patched function (and of toString itself) reads
// "function name() { [native code] }". Patches are Proxies of the native functions, so name,
// length, prototype and the [[Prototype]] stay the native ones. Frames of the proxy handlers are
// cut from the stacks of errors that pass through them.
const nativeText = new WeakMap();
const wmHas = WeakMap.prototype.has, wmGet = WeakMap.prototype.get, wmSet = WeakMap.prototype.set;
const realToString = Function.prototype.toString;
const split = String.prototype.split, join = Array.prototype.join, filter = Array.prototype.filter;
const includes = String.prototype.includes;
const HANDLER = '__tpStealth';

function clean(e) {
  try {
    if (e && typeof e.stack === 'string') {
      e.stack = apply(join, apply(filter, apply(split, e.stack, ['\n']),
        [(l) => !apply(includes, l, [HANDLER])]), ['\n']);
    }
  } catch (_) { /* keep the error as it is */ }
  return e;
}

// mask makes fn read as the native function like (a function whose toString is native text).
function mask(fn, like) {
  apply(wmSet, nativeText, [fn, apply(realToString, like, [])]);
  return fn;
}

// proxied returns a Proxy of the native function target whose calls go to call(target, self, args).
function proxied(target, call) {
  const handler = {};
  handler.apply = function __tpStealthApply(t, self, args) {
    try { return call(t, self, args); } catch (e) { throw clean(e); }
  };
  return mask(new Proxy(target, handler), target);
}

// hookGetter replaces the getter of obj[prop] with a masked Proxy. The native getter runs first
// (so a wrong receiver still throws "Illegal invocation"); fn(self, nativeValue) gives the result.
function hookGetter(obj, prop, fn) {
  const d = obj && defProp.getOwn(obj, prop);
  if (!d || typeof d.get !== 'function') return false;
  d.get = proxied(d.get, (t, self, args) => fn(self, apply(t, self, args)));
  defProp.define(obj, prop, d);
  return true;
}

// hookMethod replaces the method obj[prop] with a masked Proxy; fn(target, self, args) gives the result.
function hookMethod(obj, prop, fn) {
  const d = obj && defProp.getOwn(obj, prop);
  if (!d || typeof d.value !== 'function') return false;
  d.value = proxied(d.value, fn);
  defProp.define(obj, prop, d);
  return true;
}

{
  const ts = proxied(realToString, (t, self, args) => {
    if ((typeof self === 'function' || (typeof self === 'object' && self !== null)) && apply(wmHas, nativeText, [self])) {
      return apply(wmGet, nativeText, [self]);
    }
    return apply(t, self, args);
  });
  const d = defProp.getOwn(Function.prototype, 'toString');
  d.value = ts;
  defProp.define(Function.prototype, 'toString', d);
}
