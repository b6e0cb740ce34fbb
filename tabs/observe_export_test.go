package tabs

import "github.com/tabpilot/tabpilot/tabs/observe"

// SetObserveRecorder makes every observation hand its input to f (nil:
// stop); tests record the inputs of the observe package's tests with it.
func SetObserveRecorder(f func(tab string, in *observe.DOMInput)) { observe.SetRecorder(f) }
