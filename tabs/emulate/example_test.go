package emulate_test

import (
	"fmt"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/emulate"
)

// A preset's parts agree: a phone's user agent comes with touch, a mobile
// viewport, its screen and, for Chrome on Android, mobile client hints.
func ExampleLookupDevice() {
	d, _ := emulate.LookupDevice("pixel 7")
	fmt.Println(d.Name, d.Viewport, d.ScreenWidth, d.ScreenHeight, d.Mobile, d.Touch, d.MaxTouchPoints)
	fmt.Println(d.Platform, d.Metadata.Platform, d.Metadata.Model, d.Metadata.Mobile)
	err := emulate.Options{Device: "pixel 7", ColorScheme: "sepia"}.Validate()
	fmt.Println(errcode.Of(err), err)
	// Output:
	// Pixel 7 412x839@2.625x 412 915 true true 5
	// Linux armv8l Android Pixel 7 true
	// bad_request emulate: colorScheme "sepia": light, dark or no-preference
}
