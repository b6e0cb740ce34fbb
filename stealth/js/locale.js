// locale.js — languages. Runs in the page, iframes and workers.
// Install sets the page's locale and time zone with Emulation.setLocaleOverride and
// Emulation.setTimezoneOverride (so Intl and Date strings agree) and Accept-Language with the user
// agent override. This patch makes navigator.language and navigator.languages agree with them in
// every realm, workers included, where no override reaches.
{
  const nav = G.navigator;
  const proto = G.Navigator ? G.Navigator.prototype : (G.WorkerNavigator && G.WorkerNavigator.prototype);
  if (nav && proto && O.languages && O.languages.length) {
    const want = O.languages;
    if (nav.language !== want[0]) hookGetter(proto, 'language', () => want[0]);
    if (JSON.stringify(Array.from(nav.languages || [])) !== JSON.stringify(want)) {
      const frozen = Object.freeze(Array.from(want));
      hookGetter(proto, 'languages', () => frozen);
    }
  }
}
