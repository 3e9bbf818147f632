package main

import (
	"io"
	"os"
	"testing"
	"time"

	"skydurable/runtime/project"
)

// BenchmarkStartupCheckout measures what `sky run` does before main starts
// for the checkout example: parse the program and the stdlib, type-check
// them, and load (compile) them. Target: under 150 ms.
func BenchmarkStartupCheckout(b *testing.B) {
	const dir = "../../examples/checkout"
	proj, err := project.Find(dir)
	if err != nil {
		b.Fatal(err)
	}
	file := proj.Entry()
	s := streams{stdin: os.Stdin, stdout: io.Discard, stderr: os.Stderr}
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if prog, _, _ := loadProgram(file, proj, loadOptions{}, s); prog == nil {
			b.Fatal("the checkout example did not load")
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/startup")
}
