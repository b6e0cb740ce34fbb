package act

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// UploadResult reports the files an upload set.
type UploadResult struct {
	Target string `json:"target"`
	// Files are the absolute paths set on the input.
	Files []string `json:"files"`
	// Via is "input" when the file input was set directly, "chooser" when
	// clicking the target opened a file chooser that got the files.
	Via string `json:"via"`
}

// fileChooserWait bounds the wait for a file chooser after the click.
const fileChooserWait = 3 * time.Second

// UploadFile sets files on a file input (DOM.setFileInputFiles, which
// fires input and change). The target may be the <input type=file> itself,
// even hidden; a label of one or an element wrapping one; or any element
// whose click opens a file chooser (a styled button that calls
// input.click()), which is then clicked with the chooser intercepted
// (Page.setInterceptFileChooserDialog, Page.fileChooserOpened). Relative
// paths are resolved against the working directory.
//
// A target that is none of these and whose click submits a form or
// follows a link (a submit button, a button in a form without a type, a
// link with href, an input type=submit or image) is never clicked.
//
// Errors: bad_request for no path, a missing file or a directory, or
// several files for a single-file input; not_actionable for a disabled
// input, a target whose click would submit a form or follow a link, or
// when clicking the target opened no file chooser.
func (t *Actor) UploadFile(ctx context.Context, tg Target, paths []string) (*UploadResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	if len(paths) == 0 {
		return nil, pagecore.Errorf(errcode.BadRequest, "uploadFile needs at least one file path")
	}
	files := make([]string, len(paths))
	for i, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, pagecore.Errorf(errcode.BadRequest, "uploadFile: bad path %q: %v", p, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, pagecore.Errorf(errcode.BadRequest, "uploadFile: no such file %s", abs)
		}
		if st.IsDir() {
			return nil, pagecore.Errorf(errcode.BadRequest, "uploadFile: %s is a directory, not a file", abs)
		}
		files[i] = abs
	}
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(actionWait(ctx))
	el, err := t.find(ctx, tg, time.Until(deadline))
	if err != nil {
		return nil, err
	}
	const findInput = `function(){ let el = this; if (el.tagName === 'LABEL' && el.control) el = el.control;
 if (el.tagName === 'INPUT' && el.type === 'file') return el;
 const inner = el.querySelectorAll ? el.querySelectorAll('input[type=file]') : [];
 return inner.length === 1 ? inner[0] : null; }`
	in, err := t.objOn(ctx, el, findInput)
	if err != nil && errcode.Of(err) != errcode.ElementNotFound {
		return nil, err
	}
	res := &UploadResult{Target: el.desc, Files: files}
	if in != nil {
		in.desc = el.desc
		var st struct {
			Disabled, Multiple bool
		}
		if err := t.callOn(ctx, in, `function(){ return {Disabled: this.disabled, Multiple: this.multiple}; }`, &st); err != nil {
			return nil, err
		}
		if st.Disabled {
			return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("cannot upload to %s: the file input is disabled", el.desc)}
		}
		if len(files) > 1 && !st.Multiple {
			return nil, pagecore.Errorf(errcode.BadRequest, "cannot upload %d files to %s: the file input takes one (no multiple attribute)", len(files), el.desc)
		}
		res.Via = "input"
		if err := t.setFiles(ctx, t.SessionOf(in.sess), dom.SetFileInputFilesParams{Files: files, ObjectID: in.obj}); err != nil {
			return nil, err
		}
		var n int
		if err := t.callOn(ctx, in, `function(){ return this.files ? this.files.length : 0; }`, &n); err == nil && n != len(files) {
			return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("upload to %s had no effect: the input holds %d files, not %d", el.desc, n, len(files))}
		}
		return res, nil
	}
	// A control that opens a file chooser: click it with the chooser
	// intercepted, unless the click would submit a form or follow a
	// link (the probe must have no side effects).
	var action string
	if err := t.callOn(ctx, el, defaultActionJS, &action); err != nil {
		return nil, err
	}
	if action != "" {
		return nil, &pagecore.Error{Code: errcode.NotActionable,
			Msg:  fmt.Sprintf("cannot upload to %s: it is not a file input, does not label or wrap one, and clicking it %s, so it was not clicked to look for a file chooser", el.desc, action),
			Hint: "Target the <input type=file> itself (it may be hidden: a selector such as input[type=file] finds it), its <label>, or the element that opens the file chooser."}
	}
	res.Via = "chooser"
	chooser, stop := t.Target().Subscribe(page.FileChooserOpened.Method)
	defer stop()
	if _, err := cdp.Call(ctx, t.Target(), page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
		return nil, pagecore.CDPErr("intercept file chooser", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_, _ = cdp.Call(cctx, t.Target(), page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: false})
		cancel()
	}()
	if err := t.clickElement(ctx, el, time.Until(deadline)); err != nil {
		return nil, fmt.Errorf("click %s to open the file chooser: %w", el.desc, pagecore.EvalErr(err))
	}
	wait := time.NewTimer(fileChooserWait)
	defer wait.Stop()
	select {
	case raw, ok := <-chooser:
		if !ok {
			return nil, &pagecore.Error{Code: errcode.NotAlive, Msg: "uploadFile: the tab went away", Err: pagecore.ErrNotAlive}
		}
		var ev page.EventFileChooserOpened
		if err := pagecore.UnmarshalEvent(raw, &ev); err != nil {
			return nil, fmt.Errorf("decode file chooser event: %w", err)
		}
		if ev.Mode == page.FileChooserOpenedModeSelectSingle && len(files) > 1 {
			return nil, pagecore.Errorf(errcode.BadRequest, "cannot upload %d files through %s: its file chooser takes one", len(files), el.desc)
		}
		if ev.BackendNodeID == 0 {
			return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("the file chooser opened by %s has no file input to set", el.desc)}
		}
		if err := t.setFiles(ctx, t.Target(), dom.SetFileInputFilesParams{Files: files, BackendNodeID: ev.BackendNodeID}); err != nil {
			return nil, err
		}
		return res, nil
	case <-wait.C:
		return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("cannot upload to %s: it is not a file input, does not label or wrap one, and clicking it opened no file chooser", el.desc)}
	case <-ctx.Done():
		return nil, &pagecore.Error{Code: errcode.Timeout, Msg: "uploadFile: no file chooser within the timeout", Err: ctx.Err()}
	}
}

// defaultActionJS says what a click on the element does by default, when
// that has side effects: "submits its form", "resets its form" or
// "follows its link (href)", from the first button, link or label with a
// control (whose click is its control's) among the element and its
// ancestors (through shadow hosts); "" when nothing.
const defaultActionJS = `function(){
  const up = (n) => n.parentElement || (n.getRootNode() instanceof ShadowRoot ? n.getRootNode().host : null);
  for (let n = this.nodeType === 1 ? this : this.parentElement; n; n = up(n)) {
    if (n.tagName === 'LABEL' && n.control) n = n.control;
    const tag = n.tagName;
    if ((tag === 'A' || tag === 'AREA') && n.hasAttribute('href')) return 'follows its link (' + n.getAttribute('href') + ')';
    const button = tag === 'BUTTON' || (tag === 'INPUT' && /^(submit|image|reset|button)$/.test(n.type));
    if (!button) continue;
    if (!n.form) return '';
    if (n.type === 'submit' || n.type === 'image') return 'submits its form';
    if (n.type === 'reset') return 'resets its form';
    return '';
  }
  return '';
}`

func (t *Actor) setFiles(ctx context.Context, sess *chromedp.Target, p dom.SetFileInputFilesParams) error {
	err := t.Blocking(ctx, func(ctx context.Context) error {
		_, err := cdp.Call(ctx, sess, dom.SetFileInputFiles, p)
		return err
	})
	var dpe *pagecore.DialogPendingError
	if pagecore.AsDialog(err, &dpe) {
		return nil // the change handler opened a dialog; the files are set
	}
	if err != nil {
		return pagecore.CDPErr("set files", err)
	}
	return nil
}
