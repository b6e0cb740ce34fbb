// hardware.js — hardware concurrency and device memory. Runs in the page, iframes and workers.
// When configured, navigator.hardwareConcurrency and navigator.deviceMemory read the configured
// values in every realm, so the page and its workers agree (Install also sends
// Emulation.setHardwareConcurrencyOverride for the page).
{
  const nav = G.navigator;
  const proto = G.Navigator ? G.Navigator.prototype : (G.WorkerNavigator && G.WorkerNavigator.prototype);
  if (nav && proto) {
    if (O.hardwareConcurrency && nav.hardwareConcurrency !== O.hardwareConcurrency) hookGetter(proto, 'hardwareConcurrency', () => O.hardwareConcurrency);
    if (O.deviceMemory && nav.deviceMemory !== O.deviceMemory) hookGetter(proto, 'deviceMemory', () => O.deviceMemory);
  }
}
