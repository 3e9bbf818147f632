package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"skydurable/runtime/durable"
	"skydurable/runtime/project"
	skydurable "skydurable/stdlib/durable"
)

// TestDocTOMLExamples: every ```toml block of README.md and docs/*.md is a
// sky.toml that sky reads as the page says: it parses, and its [durable]
// settings take without a warning (ages that parse, a valid namespace).
func TestDocTOMLExamples(t *testing.T) {
	pages := []string{"../../README.md"}
	more, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range append(pages, more...) {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(text), "\n")
		for i := 0; i < len(lines); i++ {
			m := docFence.FindStringSubmatch(lines[i])
			if m == nil || strings.TrimSpace(m[3]) != "toml" {
				continue
			}
			start, indent := i+1, m[1]
			var block []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != m[2]; i++ {
				block = append(block, strings.TrimPrefix(lines[i], indent))
			}
			where := strings.TrimPrefix(path, "../../") + ":" + strconv.Itoa(start)
			f, err := project.Parse(where, strings.Join(block, "\n"))
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			var warn strings.Builder
			opts := skydurable.WithProject(durable.Options{}, f, func(string) string { return "" }, &warn)
			if warn.Len() > 0 {
				t.Errorf("%s: %s", where, warn.String())
			}
			if err := durable.CheckNamespace(opts.Namespace); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			n++
		}
	}
	if n < 2 {
		t.Errorf("found %d toml examples in the docs, want the retention and namespace ones at least", n)
	}
}
