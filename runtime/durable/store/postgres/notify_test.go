package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db/dbtest"
)

func TestParseHint(t *testing.T) {
	for payload, want := range map[string]struct {
		id  string
		due time.Duration
	}{
		"order-1":      {"order-1", 0},
		"order 1 250":  {"order 1", 250 * time.Millisecond},
		"order-1 soon": {"order-1 soon", 0},
		"":             {"", 0},
		"x 86400000":   {"x", 24 * time.Hour},
	} {
		id, due := parseHint(payload)
		if id != want.id || due != want.due {
			t.Errorf("parseHint(%q) = %q, %v; want %q, %v", payload, id, due, want.id, want.due)
		}
	}
}

// TestTriggersInstallOnceUnderConcurrency: six processes' first watches on
// an empty database (each migrating it, as WatchHints does, then
// installing a trigger) install each trigger once.
func TestTriggersInstallOnceUnderConcurrency(t *testing.T) {
	d := dbtest.Open(t, "postgres")
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 6 {
		for _, tr := range []trigger{hintTrigger, doneTrigger} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := New(d, nil)
				if err := s.Setup(context.Background()); err != nil {
					errs <- err
					return
				}
				errs <- s.install(context.Background(), tr)
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{hintTrigger.name, doneTrigger.name} {
		var n int64
		if err := d.QueryRow(context.Background(), pgHasTrigger, name).Scan(&n); err != nil || n != 1 {
			t.Errorf("triggers %s: %d (err %v), want 1", name, n, err)
		}
	}
}
