// check.js validates a HAR file with two readers none of us wrote, and
// prints one JSON line: {"schema": "ok"|error, "k6": "ok"|error,
// "urls": [...]} — the URLs har-to-k6's generated script requests.
// Run: node check.js FILE (from the directory holding node_modules).
'use strict'
const fs = require('fs')
const path = require('path')
const { createRequire } = require('module')
const req = createRequire(path.join(process.cwd(), 'node_modules', 'x.js'))
const validator = req('har-validator')
const harToK6 = req('har-to-k6')

async function main () {
  const har = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
  const out = { schema: 'ok', k6: 'ok', urls: [] }
  try {
    await validator.har(har)
  } catch (e) {
    out.schema = (e.errors || [e]).map(x => (x.dataPath || '') + ' ' + (x.message || String(x))).join('; ')
  }
  try {
    // k6 scripts replay plain HTTP: it cannot take the WebSocket entries.
    const plain = JSON.parse(JSON.stringify(har))
    plain.log.entries = plain.log.entries.filter(e => !/^wss?:/.test(e.request.url))
    harToK6.validate(plain)
    const { main } = await harToK6.liHARToK6Script(plain)
    out.urls = [...main.matchAll(/http\.(?:get|post|put|del|request)\(\s*(?:"[A-Z]+",\s*)?[`"']([^`"']+)[`"']/g)].map(m => m[1])
    out.script = main.length
  } catch (e) {
    out.k6 = String(e && e.message || e)
  }
  process.stdout.write(JSON.stringify(out) + '\n')
}
main().catch(e => { console.error(e); process.exit(2) })
