package pdf_test

import (
	"fmt"

	"github.com/tabpilot/tabpilot/tabs/pdf"
)

// Margins take a unit; a plain number is inches.
func ExampleParseLength() {
	for _, s := range []string{"1in", "2.54cm", "10mm", "96px", "72pt", "0.5", "3em"} {
		in, err := pdf.ParseLength(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s = %.3f in\n", s, in)
	}
	w, h, _ := pdf.PaperSize("a4")
	fmt.Printf("A4 = %.2f x %.2f in\n", w, h)
	// Output:
	// 1in = 1.000 in
	// 2.54cm = 1.000 in
	// 10mm = 0.394 in
	// 96px = 1.000 in
	// 72pt = 1.000 in
	// 0.5 = 0.500 in
	// length "3em": unknown unit "em" (in, cm, mm, px, pt)
	// A4 = 8.27 x 11.69 in
}
