package app

import (
	"bufio"
	"io"
	"strings"
)

// maxLine is the longest stdin line the loop accepts.
const maxLine = 16 << 20

// scanLines calls each with every line of r (without "\n" or "\r\n") until
// EOF or until each returns false.
func scanLines(r io.Reader, each func(string) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	for sc.Scan() {
		if !each(strings.TrimSuffix(sc.Text(), "\r")) {
			return nil
		}
	}
	return sc.Err()
}
