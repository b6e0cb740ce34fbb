package main

import (
	"flag"
	"path/filepath"

	"github.com/tabpilot/tabpilot/api"
)

// The record and replay verbs (issue 21).
func init() {
	actions = append(actions,
		&action{name: "record", args: "(start | stop FILE.js)", method: "record",
			summary: "record the session's actions as a run script",
			about: `"record start" records every action of the session's tabs (--tab NAME: of that
tab only), from any door: open, goto, click, type, fill, press, select,
hover, scroll, drag, upload, dialog answers, waits, back, forward, reload.
"record stop FILE.js" writes them as a run script (mode 0600), one statement
per step under a "// step N" comment, each element named by a locator
checked when it was recorded: aria/Name[role="role"], scoped when ambiguous
(tr:has-text("Bob") >> aria/Delete[role="button"]), else text/… or a unique
CSS selector. Replay it with tabpilot replay, or run it with tabpilot run.`,
			flags: recordFlags},
		&action{name: "replay", args: "FILE.js", method: "replay",
			summary: "replay a recorded script, step by step",
			about: `Run FILE.js (a script record stop wrote, or any run script with "// step N"
comments) on the tab. A locator that matches several elements fails, and so
does one that matches none within 5 s; the error names the step, its
locator and the nearest elements of the page, so one line can be repaired.`,
			flags: replayFlags},
	)
}

func recordFlags(_ *cli, _ *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		switch {
		case len(pos) == 1 && pos[0] == "start":
			return api.RecordRequest{Common: common, Op: "start"}, nil
		case len(pos) == 2 && pos[0] == "stop":
			// The daemon writes the file; its working directory is not ours.
			abs, err := filepath.Abs(pos[1])
			if err != nil {
				return nil, usagef("record stop %q: %v", pos[1], err)
			}
			return api.RecordRequest{Common: api.Common{Timeout: common.Timeout}, Op: "stop", Save: abs}, nil
		}
		return nil, usagef("record takes start, or stop FILE.js")
	}
}

func replayFlags(_ *cli, _ *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) != 1 {
			return nil, usagef("replay takes one FILE.js, got %d arguments", len(pos))
		}
		abs, err := filepath.Abs(pos[0])
		if err != nil {
			return nil, usagef("replay %q: %v", pos[0], err)
		}
		return api.ReplayRequest{Common: common, File: abs}, nil
	}
}
