package script_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs/script"
)

// An exception no code catches fails the run, as Node would crash: one a
// timer callback throws, or a promise rejected with no handler by the end
// of its task. The error names the exception and where, in the caller's
// code, it was thrown. The body awaits far longer than the error takes,
// so only the error can end these runs before their timeout.
func TestUncaughtErrorsFailTheRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, code string
		want       errcode.Code
		msg        string
	}{
		{"setTimeout", "setTimeout(() => {\n  throw new Error('tick');\n}, 10);\nawait wait(30000);",
			errcode.ScriptError, "uncaught exception in a setTimeout callback: tick (line 2:9)"},
		{"setInterval", "let n = 0;\nsetInterval(() => { if (++n === 3) null.x; }, 5);\nawait wait(30000);",
			errcode.ScriptError, "uncaught exception in a setInterval callback: TypeError: Cannot read property 'x' of undefined (line 2:41)"},
		{"setImmediate", "setImmediate(n => { throw new RangeError('n=' + n) }, 4);\nawait wait(30000);",
			errcode.ScriptError, "uncaught exception in a setImmediate callback: RangeError: n=4 (line 1:27)"},
		{"thrown string", "setTimeout(() => { throw 'plain' }, 0);\nawait wait(30000);",
			errcode.ScriptError, "uncaught exception in a setTimeout callback: the script threw plain (line 1:20)"},
		{"assert in timer", "setTimeout(() => assert(1 === 2, 'in timer'), 0);\nawait wait(30000);",
			errcode.AssertionFailed, "uncaught exception in a setTimeout callback: assertion failed: in timer (line 1:24)"},
		{"rejection", "Promise.reject(new Error('nobody'));\nawait wait(30000);",
			errcode.ScriptError, "unhandled promise rejection: nobody (line 1:16)"},
		{"async timer", "setTimeout(async () => {\n  await null;\n  throw new Error('async tick');\n}, 0);\nawait wait(30000);",
			errcode.ScriptError, "unhandled promise rejection: async tick (line 3:9)"},
		{"two rejections", "Promise.reject(1); Promise.reject(2);\nawait wait(30000);",
			errcode.ScriptError, "unhandled promise rejection: the script threw 1 (and 1 more)"},
		// A tab call the code did not await keeps its code.
		{"tab call not awaited", "tab.click('#missing-element', {timeout: 200});\nawait wait(30000);",
			errcode.ElementNotFound, `unhandled promise rejection: no element matches "#missing-element" (line 1:10)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := runCode(t, c.code, 50*time.Second)
			if errcode.Of(err) != c.want || err.Error() != c.msg {
				t.Fatalf("err = %v (%s), want %s %q", err, errcode.Of(err), c.want, c.msg)
			}
		})
	}
}

// A rejection that gets a handler in the same task (goja's tracker reports
// the reject, then the handle) does not count, nor does an exception
// caught in a timer callback.
func TestHandledRejectionsDoNotFail(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const r = [];
const p = Promise.reject(new Error('later'));
await null;
await null;
p.catch(e => r.push('caught ' + e.message));
try {
  await Promise.all([Promise.reject(new Error('a')), Promise.reject(new Error('b'))]);
} catch (e) { r.push('all ' + e.message); }
async function fails() { throw new Error('f'); }
const q = fails();
await Promise.resolve();
await q.catch(e => r.push('then ' + e.message));
setTimeout(() => { try { throw new Error('inner') } catch (e) { r.push('timer ' + e.message) } }, 0);
try { await tab.click('#missing-element', {timeout: 200}); } catch (e) { r.push(e.code); }
await wait(20);
return r.join(', ');
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := "caught later, all a, then f, timer inner, element_not_found"
	if got := texts(out); len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Once the run's result is decided nothing more of it runs: a callback
// due after the body returned neither fails the run nor adds output, and
// an error beside the body's own (a rejection no code handled) is logged,
// not reported.
func TestLateErrorsAreLogged(t *testing.T) {
	t.Parallel()
	t.Run("timer after return", func(t *testing.T) {
		t.Parallel()
		out, err := runCode(t, `
setInterval(() => display('tick'), 1);
await wait(30);
setImmediate(() => { throw new Error('late') });
setTimeout(() => { throw new Error('later') }, 0);
return 'done';`, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := texts(out)
		if len(got) == 0 || got[len(got)-1] != "done" {
			t.Fatalf("output = %q, want it to end with done", got)
		}
		for _, s := range got[:len(got)-1] {
			if s != "tick" {
				t.Fatalf("output = %q, want ticks then done", got)
			}
		}
	})
	t.Run("beside the body's error", func(t *testing.T) {
		t.Parallel()
		var log testenv.SyncBuffer
		_, err := runCodeWith(t, `Promise.reject(new Error('second')); throw new Error('first');`, 20*time.Second,
			&script.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if errcode.Of(err) != errcode.ScriptError || err.Error() != "first (line 1:44)" {
			t.Fatalf("err = %v (%s), want script_error first (line 1:44)", err, errcode.Of(err))
		}
		if l := log.String(); !strings.Contains(l, `level=WARN msg="script error after the run's result was decided"`) ||
			!strings.Contains(l, `err="unhandled promise rejection: second (line 1:16)"`) {
			t.Fatalf("log = %s", l)
		}
	})
}
