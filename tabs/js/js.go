// Package js holds the scripts tabpilot runs in pages, embedded: the
// observation's walker, the element checks of actions, the settled wait's
// watcher, the marks drawn on screenshots. Each is the source of one
// function or program, as the file it comes from says; callers compose
// them into Runtime.callFunctionOn and Runtime.evaluate calls. It must
// not hold Go logic: what a script means is documented, and decided, where
// it is called.
package js

import _ "embed"

// The scripts, by file.
var (
	//go:embed actionable.js
	Actionable string
	//go:embed areabox.js
	AreaBox string
	//go:embed editable.js
	Editable string
	//go:embed flatten.js
	Flatten string
	//go:embed guard.js
	Guard string
	//go:embed marks.js
	Marks string
	//go:embed observe.js
	Observe string
	//go:embed query.js
	Query string
	//go:embed rowkey.js
	RowKey string
	//go:embed scrolled.js
	Scrolled string
	//go:embed select.js
	Select string
	//go:embed settle.js
	Settle string
	//go:embed value.js
	Value string
)
