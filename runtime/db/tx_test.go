package db_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// count returns the number of rows in table, read outside any transaction.
func count(t *testing.T, d *db.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := d.QueryRow(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestWithTransaction(t *testing.T) {
	errBoom := errors.New("boom")
	cases := []struct {
		name    string
		body    func(ctx context.Context, d, tx *db.DB) error
		wantErr error
		want    int64
	}{
		{"commit", func(ctx context.Context, d, tx *db.DB) error {
			_, err := tx.Exec(ctx, "INSERT INTO tx VALUES (?)", 1)
			return err
		}, nil, 1},
		{"rollback on error", func(ctx context.Context, d, tx *db.DB) error {
			if _, err := tx.Exec(ctx, "INSERT INTO tx VALUES (?)", 1); err != nil {
				return err
			}
			return errBoom
		}, errBoom, 0},
		{"nested join commits together", func(ctx context.Context, d, tx *db.DB) error {
			return tx.WithTransaction(ctx, func(ctx context.Context, inner *db.DB) error {
				if !inner.InTransaction() {
					return errors.New("inner DB is not transaction-bound")
				}
				_, err := inner.Exec(ctx, "INSERT INTO tx VALUES (?), (?)", 1, 2)
				return err
			})
		}, nil, 2},
		{"nested failure rolls back the outer", func(ctx context.Context, d, tx *db.DB) error {
			if _, err := tx.Exec(ctx, "INSERT INTO tx VALUES (?)", 1); err != nil {
				return err
			}
			return tx.WithTransaction(ctx, func(ctx context.Context, inner *db.DB) error {
				if _, err := inner.Exec(ctx, "INSERT INTO tx VALUES (?)", 2); err != nil {
					return err
				}
				return errBoom
			})
		}, errBoom, 0},
		{"pool DB with the tx context joins", func(ctx context.Context, d, tx *db.DB) error {
			if _, err := d.Exec(ctx, "INSERT INTO tx VALUES (?)", 1); err != nil {
				return err
			}
			return d.WithTransaction(ctx, func(ctx context.Context, inner *db.DB) error {
				_, err := inner.Exec(ctx, "INSERT INTO tx VALUES (?)", 2)
				if err == nil {
					err = errBoom
				}
				return err
			})
		}, errBoom, 0},
		{"reads inside see own writes, outside do not", func(ctx context.Context, d, tx *db.DB) error {
			if _, err := tx.Exec(ctx, "INSERT INTO tx VALUES (?)", 1); err != nil {
				return err
			}
			rows, err := tx.QueryMaps(ctx, "SELECT k FROM tx")
			if err != nil || len(rows) != 1 {
				return fmt.Errorf("inside: %v rows, %v; want 1", rows, err)
			}
			outside, err := d.QueryMaps(context.Background(), "SELECT k FROM tx")
			if err != nil || len(outside) != 0 {
				return fmt.Errorf("outside: %v rows, %v; want 0 before commit", outside, err)
			}
			return nil
		}, nil, 1},
	}
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ctx := context.Background()
				mustExec(t, d, "DROP TABLE IF EXISTS tx")
				mustExec(t, d, "CREATE TABLE tx (k INT)")
				err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error { return c.body(ctx, d, tx) })
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("WithTransaction = %v, want %v", err, c.wantErr)
				}
				if got := count(t, d, "tx"); got != c.want {
					t.Errorf("%d rows after the transaction, want %d", got, c.want)
				}
			})
		}
	})
}

func TestWithTransactionPanicRollsBack(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE p (k INT)")
		func() {
			defer func() {
				if r := recover(); r != "kaboom" {
					t.Errorf("recovered %v, want the original panic", r)
				}
			}()
			_ = d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
				if _, err := tx.Exec(ctx, "INSERT INTO p VALUES (1)"); err != nil {
					t.Fatal(err)
				}
				panic("kaboom")
			})
		}()
		if n := count(t, d, "p"); n != 0 {
			t.Errorf("%d rows after a panicking transaction, want 0", n)
		}
		// The connection is usable again (on SQLite: the writer was released).
		mustExec(t, d, "INSERT INTO p VALUES (2)")
	})
}

func TestTransactionDBAfterCommitFails(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE a (k INT)")
		var leaked *db.DB
		if err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error { leaked = tx; return nil }); err != nil {
			t.Fatal(err)
		}
		_, err := leaked.Exec(ctx, "INSERT INTO a VALUES (1)")
		if err == nil || kindOf(t, err) != task.InvalidInput || !contains(err.Error(), "already ended") {
			t.Errorf("Exec on a finished transaction: %v; want InvalidInput \"already ended\"", err)
		}
	})
}

func TestLazyTx(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE lz (k INT)")

		t.Run("never started is no transaction", func(t *testing.T) {
			_, l := db.WithLazyTx(ctx, d)
			mustExec(t, d, "INSERT INTO lz VALUES (1)") // plain ctx: not in the lazy tx
			if l.Started() {
				t.Fatal("Started() = true though nothing ran under its context")
			}
			if err := l.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if n := count(t, d, "lz"); n != 1 {
				t.Errorf("%d rows, want 1 (the row written outside the lazy tx survives its rollback)", n)
			}
		})

		t.Run("started then rolled back", func(t *testing.T) {
			mustExec(t, d, "DELETE FROM lz")
			lctx, l := db.WithLazyTx(ctx, d)
			if _, err := d.Exec(lctx, "INSERT INTO lz VALUES (?)", 1); err != nil {
				t.Fatal(err)
			}
			if !l.Started() {
				t.Fatal("Started() = false after a statement ran under its context")
			}
			if n := count(t, d, "lz"); n != 0 {
				t.Errorf("uncommitted lazy write visible outside: %d rows", n)
			}
			if err := l.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if n := count(t, d, "lz"); n != 0 {
				t.Errorf("%d rows after Rollback, want 0", n)
			}
			_, err := d.Exec(lctx, "INSERT INTO lz VALUES (2)")
			if err == nil || kindOf(t, err) != task.InvalidInput {
				t.Errorf("statement under a finished lazy tx: %v; want InvalidInput", err)
			}
		})

		t.Run("started then committed, across call kinds", func(t *testing.T) {
			mustExec(t, d, "DELETE FROM lz")
			lctx, l := db.WithLazyTx(ctx, d)
			// The first statement runs under a derived context that ends
			// before the commit: the transaction must outlive it.
			short, cancel := context.WithCancel(lctx)
			if _, err := d.ExecRaw(short, "INSERT INTO lz VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			cancel()
			if err := d.WithTransaction(lctx, func(ctx context.Context, tx *db.DB) error {
				_, err := tx.Exec(ctx, "INSERT INTO lz VALUES (?)", 2)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			txdb, err := l.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var inside int64
			if err := txdb.QueryRow(ctx, "SELECT COUNT(*) FROM lz").Scan(&inside); err != nil || inside != 2 {
				t.Fatalf("inside the lazy tx: %d rows, %v; want 2", inside, err)
			}
			if n := count(t, d, "lz"); n != 0 {
				t.Errorf("uncommitted lazy writes visible outside: %d rows", n)
			}
			if err := l.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if n := count(t, d, "lz"); n != 2 {
				t.Errorf("%d rows after Commit, want 2", n)
			}
		})

		t.Run("Tx begins it", func(t *testing.T) {
			_, l := db.WithLazyTx(ctx, d)
			tx, err := l.Tx(ctx)
			if err != nil || !l.Started() || !tx.InTransaction() {
				t.Fatalf("Tx: %v, Started=%v", err, l.Started())
			}
			if err := l.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
		})

		for _, commit := range []bool{true, false} {
			t.Run(fmt.Sprintf("parallel goroutines share it, commit=%v", commit), func(t *testing.T) {
				mustExec(t, d, "DELETE FROM lz")
				lctx, l := db.WithLazyTx(ctx, d)
				const workers = 16
				var wg sync.WaitGroup
				errs := make(chan error, workers)
				for i := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := d.Exec(lctx, "INSERT INTO lz VALUES (?)", i); err != nil {
							errs <- err
							return
						}
						if _, err := d.QueryMaps(lctx, "SELECT k FROM lz WHERE k = ?", i); err != nil {
							errs <- err
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("worker: %v", err)
				}
				end, want := l.Rollback, int64(0)
				if commit {
					end, want = l.Commit, workers
				}
				if err := end(ctx); err != nil {
					t.Fatal(err)
				}
				if n := count(t, d, "lz"); n != want {
					t.Errorf("%d rows, want %d", n, want)
				}
			})
		}
	})
}

// TestLazyTxInsideTransaction: a lazy transaction opened on a
// transaction-bound DB is that transaction; its Commit leaves the decision
// to the owner.
func TestLazyTxInsideTransaction(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE lt (k INT)")
		errOuter := errors.New("outer fails")
		err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
			lctx, l := db.WithLazyTx(ctx, tx)
			if _, err := d.Exec(lctx, "INSERT INTO lt VALUES (1)"); err != nil {
				return err
			}
			if err := l.Commit(lctx); err != nil {
				return err
			}
			return errOuter
		})
		if !errors.Is(err, errOuter) {
			t.Fatalf("WithTransaction = %v", err)
		}
		if n := count(t, d, "lt"); n != 0 {
			t.Errorf("%d rows: the lazy Commit inside a transaction must not commit the owner's transaction", n)
		}
	})
}

// TestCloseRollsBackOpenTransactions: a transaction left open (a leaked
// LazyTx) does not block Close, and its writes are not committed.
func TestCloseRollsBackOpenTransactions(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.URL(t, driver)
			d, err := db.Open(ctx, driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			mustExec(t, d, "CREATE TABLE leak (k INT)")
			lctx, l := db.WithLazyTx(ctx, d)
			if _, err := d.Exec(lctx, "INSERT INTO leak VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatalf("Close with an open transaction: %v", err)
			}
			if err := l.Commit(ctx); err == nil {
				t.Error("Commit after Close succeeded; want an error or no effect")
			}
			again, err := db.Open(ctx, driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if n := count(t, again, "leak"); n != 0 {
				t.Errorf("%d rows: the open transaction was committed by Close", n)
			}
		})
	}
}

// On SQLite a read does not begin a lazy transaction (it would take the one
// write lock for as long as the step runs); the first write does, and reads
// after it see the transaction's writes. On PostgreSQL any statement begins
// it, so SELECT ... FOR UPDATE locks inside the step's transaction.
func TestLazyTxBeginsOnFirstWriteOnSQLite(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE lw (k INT)")
		lctx, l := db.WithLazyTx(ctx, d)
		var n int64
		if err := d.QueryRow(lctx, "SELECT COUNT(*) FROM lw").Scan(&n); err != nil || n != 0 {
			t.Fatalf("read under the lazy ctx: %d, %v", n, err)
		}
		if want := driver != "sqlite"; l.Started() != want {
			t.Fatalf("after a read, Started() = %v, want %v on %s", l.Started(), want, driver)
		}
		if driver == "sqlite" {
			// The write lock is free: another writer commits at once.
			mustExec(t, d, "INSERT INTO lw VALUES (100)")
		}
		if _, err := d.Exec(lctx, "INSERT INTO lw VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		if !l.Started() {
			t.Fatal("a write did not begin the lazy transaction")
		}
		if err := d.QueryRow(lctx, "SELECT COUNT(*) FROM lw WHERE k = 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("read after the write inside the lazy tx: %d, %v; want 1", n, err)
		}
		if err := l.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if got := count(t, d, "lw WHERE k = 1"); got != 0 {
			t.Fatalf("%d rows of the rolled back write survive", got)
		}
	})
}

// TestJoinsTransaction: a statement joins a transaction when its DB is bound
// to one or its context carries one for the same pool (even a lazy one not
// yet begun); another pool's transaction does not count.
func TestJoinsTransaction(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		if d.JoinsTransaction(ctx) {
			t.Error("the pool with a plain context joins a transaction")
		}
		lctx, l := db.WithLazyTx(ctx, d)
		if !d.JoinsTransaction(lctx) {
			t.Error("a context carrying a lazy transaction not yet begun: JoinsTransaction = false")
		}
		if l.Started() {
			t.Error("asking began the lazy transaction")
		}
		other, err := db.Open(ctx, "sqlite", "file:"+t.TempDir()+"/other.db")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if other.JoinsTransaction(lctx) {
			t.Error("another pool joins this pool's lazy transaction")
		}
		err = d.WithTransaction(ctx, func(txCtx context.Context, tx *db.DB) error {
			if !tx.JoinsTransaction(ctx) {
				t.Error("a transaction-bound DB: JoinsTransaction = false")
			}
			if !d.JoinsTransaction(txCtx) {
				t.Error("the pool under the transaction's context: JoinsTransaction = false")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestRejected: a statement the database refuses is Rejected; a failure on
// the client side after the statement ran is not (it may have committed).
func TestRejected(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE rj (k INTEGER PRIMARY KEY, v TEXT)")
		mustExec(t, d, "INSERT INTO rj VALUES (1, NULL)")
		if _, err := d.Exec(ctx, "INSERT INTO rj VALUES (1, 'again')"); !db.Rejected(err) {
			t.Errorf("a duplicate key: Rejected(%v) = false", err)
		}
		var v string
		err := d.QueryRow(ctx, "SELECT v FROM rj WHERE k = 1").Scan(&v)
		if err == nil || db.Rejected(err) {
			t.Errorf("scanning NULL into a string: %v, Rejected = %v; want an error that is not Rejected", err, db.Rejected(err))
		}
		if db.Rejected(nil) {
			t.Error("Rejected(nil) = true")
		}
	})
}
