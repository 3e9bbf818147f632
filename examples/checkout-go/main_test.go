package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCheckoutStory runs the example end to end (in a temporary data
// directory) and checks the story it tells: one charge, the crash, the
// replay without effects, and the confirmed order.
func TestCheckoutStory(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, t.TempDir()); err != nil {
		t.Fatalf("run: %v\noutput so far:\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"*** CRASH right after the charge was journalled",
		"waiting for signal payment.settled",
		"status:   done",
		"order:    order-42 confirmed, reservation res-order-42, charge ch-order-42-charge, 3150 cents",
		"stock:    sku-book=8 sku-pen=47",
		"\ncharges: 1\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q; output:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "[effect] charged card"); n != 1 {
		t.Errorf("the charge effect ran %d times, want 1; output:\n%s", n, text)
	}
	if n := strings.Count(text, "[effect] reserved"); n != 1 {
		t.Errorf("the reserve effect ran %d times, want 1; output:\n%s", n, text)
	}
	if !strings.HasSuffix(text, "charges: 1\n") {
		t.Errorf("output does not end with charges: 1; output:\n%s", text)
	}
}
