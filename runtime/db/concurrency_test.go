package db_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// TestConcurrentMixedWorkload runs many goroutines doing read-modify-write
// transactions, plain writes and plain reads at once. Every call must
// succeed (on SQLite: zero SQLITE_BUSY) and no update may be lost.
func TestConcurrentMixedWorkload(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE counter (id INT PRIMARY KEY, n BIGINT NOT NULL)")
		mustExec(t, d, "CREATE TABLE events (worker INT, i INT)")
		mustExec(t, d, "INSERT INTO counter VALUES (1, 0)")

		lock := ""
		if driver == "postgres" {
			lock = " FOR UPDATE" // READ COMMITTED needs a row lock for read-modify-write
		}
		const workers, iterations = 12, 20
		var wg sync.WaitGroup
		errs := make(chan error, workers*iterations*3)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range iterations {
					switch (w + i) % 3 {
					case 0: // read-modify-write transaction
						errs <- d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
							var n int64
							if err := tx.QueryRow(ctx, "SELECT n FROM counter WHERE id = 1"+lock).Scan(&n); err != nil {
								return err
							}
							if _, err := tx.Exec(ctx, "UPDATE counter SET n = ? WHERE id = 1", n+1); err != nil {
								return err
							}
							_, err := tx.Exec(ctx, "INSERT INTO events VALUES (?, ?)", w, i)
							return err
						})
					case 1: // plain write outside a transaction
						_, err := d.Exec(ctx, "INSERT INTO events VALUES (?, ?)", w, i)
						errs <- err
					case 2: // plain read
						_, err := d.QueryMaps(ctx, "SELECT worker, COUNT(*) AS c FROM events GROUP BY worker")
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		failures := 0
		for err := range errs {
			if err != nil {
				failures++
				if failures <= 5 {
					t.Errorf("concurrent call failed: %v", err)
				}
			}
		}
		if failures > 0 {
			t.Fatalf("%d concurrent calls failed; want 0", failures)
		}
		var txs, writes int64
		for w := range workers {
			for i := range iterations {
				switch (w + i) % 3 {
				case 0:
					txs++
				case 1:
					writes++
				}
			}
		}
		var n int64
		if err := d.QueryRow(ctx, "SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != txs {
			t.Errorf("counter = %d after %d read-modify-write transactions (lost updates)", n, txs)
		}
		if got := count(t, d, "events"); got != txs+writes {
			t.Errorf("%d event rows, want %d", got, txs+writes)
		}
	})
}

// TestSQLiteTwoPoolsOneFile has two independently opened DBs (as two
// processes would) write the same file concurrently: BEGIN IMMEDIATE plus the
// busy timeout must serialise them without a BUSY error.
func TestSQLiteTwoPoolsOneFile(t *testing.T) {
	path := dbtest.URL(t, "sqlite")
	ctx := context.Background()
	var pools []*db.DB
	for range 2 {
		d, err := db.Open(ctx, "sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		pools = append(pools, d)
	}
	mustExec(t, pools[0], "CREATE TABLE shared (n INT)")
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for p, d := range pools {
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					errs <- d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
						var n int64
						if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM shared").Scan(&n); err != nil {
							return err
						}
						_, err := tx.Exec(ctx, "INSERT INTO shared VALUES (?)", p*1000+g*100+i)
						return err
					})
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("write failed: %v (busy: %v)", err, strings.Contains(strings.ToLower(err.Error()), "busy"))
		}
	}
	if n := count(t, pools[1], "shared"); n != 160 {
		t.Errorf("%d rows, want 160", n)
	}
}
