// webdriver.js — navigator.webdriver. Runs in the page, iframes and workers.
// navigator.webdriver reads false, from the getter on Navigator.prototype (WorkerNavigator.prototype
// in a worker); an own "webdriver" property on the navigator object, as naive patches leave, is removed.
{
  const nav = G.navigator;
  const proto = G.Navigator ? G.Navigator.prototype : (G.WorkerNavigator && G.WorkerNavigator.prototype);
  if (nav && defProp.getOwn(nav, 'webdriver')) delete nav.webdriver;
  if (nav && proto && nav.webdriver) hookGetter(proto, 'webdriver', () => false);
}
