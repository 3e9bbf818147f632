package host

import (
	"bufio"
	"strings"
	"testing"

	"skydurable/runtime/task"
)

// TestReadLine: lines lose their \n or \r\n; a last line without a newline
// is still a line; after the end every read fails NotFound.
func TestReadLine(t *testing.T) {
	l := &lineReader{r: bufio.NewReader(strings.NewReader("one\r\ntwo\nthree"))}
	for _, want := range []string{"one", "two", "three"} {
		got, err := l.next()
		if err != nil || got != want {
			t.Fatalf("next() = %v, %v; want %q", got, err, want)
		}
	}
	for range 2 {
		if _, err := l.next(); task.As(err).Kind != task.NotFound {
			t.Fatalf("after the end: %v, want NotFound", err)
		}
	}
}
