package act

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// ActionResult reports what an action did.
type ActionResult struct {
	// Target describes the element acted on.
	Target string `json:"target,omitempty"`
	// Value is a field's text after type or fill.
	Value *string `json:"value,omitempty"`
	// Dialog is a JavaScript dialog the action opened and left pending.
	Dialog *pagecore.Dialog `json:"dialog,omitempty"`
	// Navigated is true when the action started a top-level navigation.
	Navigated bool `json:"navigated,omitempty"`
	// URL is where the page is once a navigation the action started
	// committed and settled (the top frame's URL, from the commit's
	// Page.frameNavigated), or its URL after a move within the document
	// (Page.navigatedWithinDocument: history.pushState, a fragment; then
	// Navigated is false); "" when the URL did not change or the
	// navigation has not committed.
	URL string `json:"url,omitempty"`
	// Note tells what the page did that the caller may not expect, such
	// as reformatting the text a fill put in.
	Note string `json:"note,omitempty"`
	// Blocked lists the navigations the action started that the
	// navigation policy refused (the tab stayed on its page; Note says
	// so too).
	Blocked []pagecore.Blocked `json:"blocked,omitempty"`
	// Skipped counts the characters of a type's text left untyped: those
	// after a newline whose Enter started a navigation (Note says so).
	Skipped int `json:"skipped,omitempty"`
}

// Scroll scrolls by (dx, dy) CSS pixels with a mouse wheel event at the
// centre of the viewport (Input.dispatchMouseEvent mouseWheel), as a
// person's wheel would: the scroll container under the pointer moves, or
// the page. It says which one moved and where it stands now
// (ScrollResult.Container and Position; Container is "" and Note says so
// when nothing moved, as at the end of the page).
func (t *Actor) Scroll(ctx context.Context, dx, dy float64) (*ScrollResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	w, h := t.viewport()
	cx, cy := float64(w)/2, float64(h)/2
	var snap runtime.EvaluateResult
	err = t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		snap, err = cdp.Call(ctx, t.Target(), runtime.Evaluate, runtime.EvaluateParams{
			Expression: fmt.Sprintf("(%s).call(document.elementFromPoint(%g, %g), null)", js.Scrolled, cx, cy)})
		return err
	})
	if err != nil {
		return nil, pagecore.EvalErr(err)
	}
	err = t.Blocking(ctx, func(ctx context.Context) error { return t.wheel(ctx, cx, cy, dx, dy) })
	if err != nil {
		return nil, pagecore.CDPErr("scroll", err)
	}
	if snap.Result == nil || snap.Result.ObjectID == "" {
		return nil, pagecore.Errorf(errcode.ScriptError, "scroll: the page's scroll positions could not be read")
	}
	return t.scrolled(ctx, t.Target(), snap.Result.ObjectID)
}

// scrolled reads, a frame after a wheel, which of the scroll containers
// of snapshot snap (js/scrolled.js) moved, and releases the snapshot.
func (t *Actor) scrolled(ctx context.Context, sess *chromedp.Target, snap runtime.RemoteObjectID) (*ScrollResult, error) {
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_, _ = cdp.Call(rctx, sess, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: snap})
	}()
	fn := "async function(s) { await new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 250); });\nreturn (" + js.Scrolled + ").call(null, s); }"
	var res runtime.CallFunctionOnResult
	err := t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn, ObjectID: snap, Arguments: []*runtime.CallArgument{{ObjectID: snap}},
			ReturnByValue: new(true), AwaitPromise: new(true)})
		return err
	})
	if err != nil {
		return nil, pagecore.EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, pagecore.Errorf(errcode.ScriptError, "scroll: %s", pagecore.ExceptionText(res.ExceptionDetails))
	}
	var r ScrollResult
	if res.Result != nil {
		if err := json.Unmarshal(res.Result.Value, &r); err != nil {
			return nil, fmt.Errorf("scroll: decode result: %w", err)
		}
	}
	if r.Container == "" {
		r.Note = "nothing scrolled: the page and the container under the pointer are at their end in that direction (the page is " + r.Position + ")"
	}
	return &r, nil
}

// WaitFor waits until the target exists and is visible, for the whole of
// ctx's deadline. Errors: timeout (element_not_found when ctx has no
// deadline), stale_element for a number whose node is gone.
func (t *Actor) WaitFor(ctx context.Context, tg Target) (*ActionResult, error) {
	ctx, release := t.withHandles(ctx)
	defer release()
	for {
		el, err := t.resolve(ctx, tg)
		if err != nil {
			if ctx.Err() != nil {
				break // the time ran out during the query
			}
			return nil, err
		}
		if el != nil {
			var st actState
			if err := t.callOn(ctx, el, actionableJS, &st, map[string]any{"scroll": false}); err == nil && st.State == "ok" {
				return &ActionResult{Target: el.desc}, nil
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}
	return nil, &pagecore.Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitFor %s: not visible within the timeout", tg), Err: ctx.Err()}
}

// Evaluate runs JavaScript source in the page's main world and returns its
// JSON-serialisable result, awaiting a returned promise (Runtime.evaluate,
// returnByValue). The source is one of:
//   - an expression whose value is a function ("(a, b) => a + b",
//     "function () {…}", "async x => …"): it is called with args, each
//     passed as JSON;
//   - any other expression ("document.title", "(() => 1)()"): its value;
//   - statements ("let a = 1; a + 1"): the completion value, as the
//     console gives it.
//
// The source is told apart by parsing it (goja's ECMAScript parser), not
// by how it starts. Errors: script_error with the page's exception;
// bad_request for arguments that are not JSON-serialisable.
func (t *Actor) Evaluate(ctx context.Context, fnSource string, args []any) (json.RawMessage, error) {
	expr, repl, err := evalExpression(fnSource, args)
	if err != nil {
		return nil, err
	}
	var res runtime.EvaluateResult
	err = t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.Target(), runtime.Evaluate, runtime.EvaluateParams{
			Expression: expr, ReturnByValue: new(true), AwaitPromise: new(true), UserGesture: new(true), ReplMode: new(repl),
		})
		return err
	})
	if err != nil {
		if m := err.Error(); strings.Contains(m, "Object reference chain is too long") || strings.Contains(m, "could not be returned by value") || strings.Contains(m, "couldn't be returned by value") {
			return nil, &pagecore.Error{Code: errcode.ScriptError, Msg: "evaluate: the result cannot be returned as JSON: it holds a cycle, or a DOM object such as window or an element; return plain data (el.textContent, {x: r.x})"}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &pagecore.Error{Code: errcode.Timeout, Msg: "evaluate: the page's script had not returned (a promise that never settles, or code still running)", Err: err}
		}
		return nil, pagecore.EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, &pagecore.Error{Code: errcode.ScriptError, Msg: "evaluate: " + pagecore.ExceptionText(res.ExceptionDetails)}
	}
	if res.Result == nil || len(res.Result.Value) == 0 {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(res.Result.Value), nil
}

// evalExpression is the expression Evaluate sends for src and args, and
// whether to send it in REPL mode, decided by parsing src (without
// trailing semicolons) with goja's ECMAScript parser:
//   - a function expression is called with args: (src)(...args);
//   - another expression is its value, in an async arrow so that it may
//     await;
//   - statements are sent as they are, in REPL mode (Runtime.evaluate
//     replMode, as the DevTools console does: top-level await, and let
//     and const that a later call may declare again), and args are an
//     error;
//   - source the parser refuses is left to the page's parser, called
//     with args when there are any (goja may lag V8 on new syntax).
//
// The source keeps its first line, so the line numbers of the page's
// exceptions are the caller's.
func evalExpression(src string, args []any) (expr string, repl bool, err error) {
	a := []byte("[]")
	if args != nil {
		if a, err = json.Marshal(args); err != nil {
			return "", false, pagecore.Errorf(errcode.BadRequest, "evaluate: arguments are not JSON-serialisable: %v", err)
		}
	}
	body := strings.TrimRight(src, "; \t\r\n")
	kind := "unknown"
	if prog, err := parser.ParseFile(nil, "", "(async () => (\n"+body+"\n))", 0); err == nil {
		kind = "expression"
		if len(prog.Body) == 1 {
			if st, ok := prog.Body[0].(*ast.ExpressionStatement); ok {
				if fn, ok := st.Expression.(*ast.ArrowFunctionLiteral); ok {
					if b, ok := fn.Body.(*ast.ExpressionBody); ok {
						switch b.Expression.(type) {
						case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
							kind = "function"
						}
					}
				}
			}
		}
	} else if _, err := parser.ParseFile(nil, "", "(async () => {\n"+src+"\n})", 0); err == nil {
		kind = "statements"
	}
	switch {
	case kind == "function" || kind == "unknown" && len(args) > 0:
		return fmt.Sprintf("(%s\n)(...%s)", body, a), false, nil
	case len(args) > 0:
		return "", false, pagecore.Errorf(errcode.BadRequest, "evaluate: %d argument(s) given, but the source is not a function; give one such as (a, b) => …", len(args))
	case kind == "expression":
		return fmt.Sprintf("(async () => (%s\n))()", body), false, nil
	}
	return src, true, nil
}

func asError(err error, target **pagecore.Error) bool {
	e, ok := err.(*pagecore.Error)
	if ok {
		*target = e
	}
	return ok
}

// Value returns the whole current text of a field: an input's or a
// textarea's value, a contenteditable element's innerText, or that of the
// first field inside a label or wrapper (js/value.js, with
// Runtime.callFunctionOn). tab.observe shows a value cut at 2000
// characters; this reads all of it. It waits up to wait for a selector to
// match. Errors: element_not_found, stale_element.
func (t *Actor) Value(ctx context.Context, tg Target, wait time.Duration) (string, error) {
	ctx, release := t.withHandles(ctx)
	defer release()
	el, err := t.find(ctx, tg, wait)
	if err != nil {
		return "", err
	}
	v, err := t.fieldValue(ctx, el)
	if err != nil {
		return "", pagecore.CDPErr("read the value of "+el.desc, err)
	}
	return v, nil
}
