package app_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"skydurable/runtime/app"
	"skydurable/runtime/value"
)

// A counter over stdin lines, written with Go functions where Sky would
// pass its own: each line is a message, the view is printed after init and
// after every update, and stdin EOF ends the program.
func Example() {
	none := app.CmdValue(app.Cmd{})
	prog := app.Program{
		Init: value.NewFunc("init", 1, func([]value.Value) (value.Value, error) {
			return value.Tuple{int64(0), none}, nil
		}),
		Update: value.NewFunc("update", 2, func(a []value.Value) (value.Value, error) {
			return value.Tuple{a[1].(int64) + 1, none}, nil
		}),
		View: value.NewFunc("view", 1, func(a []value.Value) (value.Value, error) {
			return fmt.Sprintf("count: %d\n", a[0]), nil
		}),
		Input: value.NewFunc("line", 1, func(a []value.Value) (value.Value, error) { return a[0], nil }),
	}
	err := app.Run(context.Background(), prog, app.Options{Stdin: strings.NewReader("a\nb\n"), Stdout: os.Stdout})
	fmt.Println("error:", err)
	// Output:
	// count: 0
	// count: 1
	// count: 2
	// error: <nil>
}
