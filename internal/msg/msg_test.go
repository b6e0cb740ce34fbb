package msg_test

import (
	"fmt"

	"github.com/tabpilot/tabpilot/internal/msg"
)

func ExampleTrim() {
	fmt.Println(msg.Trim("Sign in to your account", 7))
	fmt.Println(msg.Trim("Sign in", 7))
	// Output:
	// Sign in…
	// Sign in
}
