package main

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
)

// TestOrphanSignalsSayTheirAgeInLsWords: `sky durable signals --orphans`
// says how long ago a signal was sent in the words of ls's UPDATED ("2d
// ago", "just now"), not as a Go duration ("48h0m0s ago", "0s ago"), on
// both stores.
func TestOrphanSignalsSayTheirAgeInLsWords(t *testing.T) {
	age := map[string]string{
		"sqlite":   `UPDATE _sky_durable_signals SET created_at = created_at - 2*86400000 WHERE run_id = 'nobody-old'`,
		"postgres": `UPDATE _sky_durable_signals SET created_at = created_at - interval '2 days' WHERE run_id = 'nobody-old'`,
	}
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn, d, e := cliEngine(t, driver, "orphans-test")
			for _, id := range []string{"nobody-old", "nobody-new"} {
				if err := e.Signal(ctx, id, "go", `1`); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := d.Exec(ctx, age[driver]); err != nil {
				t.Fatal(err)
			}
			code, out := runDurableOn(dsn, "", "signals", "--orphans")
			if code != exitOK {
				t.Fatalf("sky durable signals --orphans = %d:\n%s", code, out)
			}
			for _, want := range []string{"nobody-old  go      1      2d ago\n", "nobody-new  go      1      just now\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("sky durable signals --orphans lacks the line %q:\n%s", want, out)
				}
			}
		})
	}
}
