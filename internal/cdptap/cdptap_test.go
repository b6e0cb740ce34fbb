package cdptap_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tabpilot/tabpilot/internal/cdptap"
)

// wrote reports whether c is closed.
func wrote(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func ExampleTap() {
	tap := cdptap.New() // chromedp.WithDebugf(tap.Logf) when the browser is allocated
	written, stop := tap.Watch("S1", "Input.dispatchMouseEvent")
	defer stop()

	// chromedp's transport calls Logf just before it writes each command.
	tap.Logf("-> %s", []byte(`{"id":7,"sessionId":"S2","method":"Input.dispatchMouseEvent","params":{"type":"mouseMoved","x":1,"y":2}}`))
	fmt.Println("live:", tap.Live(), "written:", wrote(written))
	tap.Logf("-> %s", []byte(`{"id":8,"sessionId":"S1","method":"Input.dispatchMouseEvent","params":{"type":"mouseMoved","x":1,"y":2}}`))
	fmt.Println("written:", wrote(written))
	// Output:
	// live: true written: false
	// written: true
}

// TestTap: reads, other methods and other sessions fire no watch; a
// transport that never logs a write leaves the tap not live; a stopped
// watch is not closed by a later write; FromContext finds the tap
// NewContext put in.
func TestTap(t *testing.T) {
	tap := cdptap.New()
	if tap.Live() {
		t.Fatal("a new tap is live")
	}
	var none *cdptap.Tap
	if none.Live() {
		t.Fatal("a nil tap is live")
	}
	w, stop := tap.Watch("S", "Input.dispatchMouseEvent")
	defer stop()
	tap.Logf("<- %s", []byte(`{"id":3,"sessionId":"S","method":"Input.dispatchMouseEvent"}`))
	if tap.Live() || wrote(w) {
		t.Fatalf("a read made the tap live (%v) or fired the watch (%v)", tap.Live(), wrote(w))
	}
	tap.Logf("-> %s", []byte(`{"id":4,"sessionId":"S","method":"Runtime.evaluate","params":{"expression":"\"method\":\"Input.dispatchMouseEvent\""}}`))
	if !tap.Live() {
		t.Fatal("a write left the tap not live")
	}
	if wrote(w) {
		// The method's name in a string of the params is escaped, so
		// it does not match.
		t.Fatal("another method fired the watch")
	}
	w2, stop2 := tap.Watch("S", "Input.dispatchMouseEvent")
	stop2()
	tap.Logf("-> %s", []byte(`{"id":5,"sessionId":"S","method":"Input.dispatchMouseEvent","params":{}}`))
	if !wrote(w) {
		t.Fatal("the watched write did not fire the watch")
	}
	if wrote(w2) {
		t.Fatal("a stopped watch fired")
	}
	ctx := cdptap.NewContext(context.Background(), tap)
	if got := cdptap.FromContext(ctx); got != tap {
		t.Fatalf("FromContext = %p, want %p", got, tap)
	}
	if got := cdptap.FromContext(context.Background()); got != nil {
		t.Fatalf("FromContext of a bare context = %p, want nil", got)
	}
}
