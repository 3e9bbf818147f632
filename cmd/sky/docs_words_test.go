package main

import (
	"os"
	"strings"
	"testing"

	"skydurable/runtime/durable"
)

// TestDurableDocsQuoteTheSignalWords: docs/durable.md quotes, word for word,
// the line `sky durable signal` prints for each outcome (a script that
// matches the page's text must match the command's).
func TestDurableDocsQuoteTheSignalWords(t *testing.T) {
	page, err := os.ReadFile("../../docs/durable.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(page)), " ") // quotes wrap across lines
	for _, o := range []durable.SignalOutcome{durable.SignalStored, durable.SignalDuplicate, durable.SignalRunCancelled,
		durable.SignalReplaced, durable.SignalSentNew} {
		if m := o.Message("ID", "NAME"); !strings.Contains(text, "`"+m+"`") {
			t.Errorf("docs/durable.md does not quote what sky durable signal prints:\n\t%s", m)
		}
	}
}
