// fpworker.js: a dedicated or shared worker that answers with FP.basic().
importScripts('/testdata/fpcommon.js');
async function answer(port) { port.postMessage(await FP.basic()); }
self.onmessage = (e) => answer(self);
self.onconnect = (e) => { const p = e.ports[0]; p.onmessage = () => answer(p); p.start(); };
