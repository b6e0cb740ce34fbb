// Package secrets owns the named secrets of a session (--secrets FILE): the
// store of name → value read from a dotenv file, the expansion of the
// placeholder {{secret:NAME}} into its value, and the redaction of every
// value (and its encodings) out of what tabpilot outputs.
//
// How it works. An agent or a run script never holds a value: it names it.
// A run's secret("NAME") returns the placeholder "{{secret:NAME}}", and the
// text of type and fill (on every door) may contain placeholders. They are
// replaced (Store.Expand) as late as possible, in tabs/act, just before the
// text goes to the page (Input.insertText, Input.dispatchKeyEvent, the
// argument of the fill's Runtime.callFunctionOn); every layer above, the
// results, the audit log (whose textSha256 is the placeholder's) and
// recordings see only the placeholder. On the way out, Store.Redact
// replaces each value with "••••", also in the forms a page or a request
// carries it: URL-query-escaped (form posts), path-escaped, JSON-escaped,
// HTML-escaped and base64. The choke points that call it are the service's
// result path (api/service: every door's results, errors, observations,
// evaluate and run output, network and console listings), the spill files
// of long results, the network record's body files and HAR files
// (tabs/netlog), observations and their overflow file (tabs/observe), the
// page's HTML before extract converts it (tabs/capture), the result and
// errors of type and fill (tabs/act), the audit log writer and the loggers
// (Store.Handler wraps a slog.Handler). JSON documents (results' details,
// HARs) are masked string by string once decoded, so a value is found in
// the form the page gave it before JSON escaped it again.
//
// Limits. The page itself holds the value: its scripts can read the field
// and send it anywhere, and a run's tab.evaluate can read it back and
// transform it (reverse, hash, split) beyond what Redact recognises.
// Screenshots and PDFs show what the page draws: a password field is drawn
// as dots by the browser, a text field shows the value. Downloaded files
// are written as the page sends them. A value embedded in a larger base64
// text (an Authorization header of user:password) is not found, since its
// base64 form depends on what precedes it.
//
// The file. A dotenv file (github.com/joho/godotenv): NAME=value lines,
// optional "export ", # comments, single quotes for a literal value,
// double quotes with \n escapes; $NAME and ${NAME} in unquoted and
// double-quoted values expand earlier names, so quote a value holding a $
// with single quotes. Load refuses a file that is not private (mode 0600 or
// stricter), a name outside [A-Za-z_][A-Za-z0-9_]*, an empty value and a
// value shorter than MinValueLen bytes; its errors name the file, the line
// and the name, never a value.
//
// The package imports the standard library, errcode and godotenv only,
// and must not know of tabs, pages or the wire: its callers hand it text.
package secrets
