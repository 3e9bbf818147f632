package storetest

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// MigrationStep is one migration test of a store: a database at version
// From (0: made before versioned migrations, by the SQL of Seed alone)
// holding the data Seed inserts is migrated to the newest version, and the
// suite reads that data back through the store. Every Seed inserts the same
// data, in the shape of its version:
//
//   - run "old" of workflow "w", waiting and due at 2030-01-01T00:00:00Z,
//     input {"n":1}, created then; journal entries "a" (result 1, created
//     a second later) and "b" (result 2, two seconds later) with no
//     version or seq columns before version 1; an undelivered signal "go"
//     with payload true;
//   - run "finished" of workflow "w", done with output "ok".
//
// Check, when set, checks what is particular to the store.
type MigrationStep struct {
	From  int
	Seed  string
	Check func(t *testing.T, s store.Store, d *db.DB)
}

// RunMigrations runs each step on its own database: migrate to From, seed,
// Setup, check; then checks that every version is recorded exactly once,
// and that Setups racing on a new database all succeed and apply each
// migration once. open makes a store and its migrator over a fresh
// database. Every version but the newest must have a step, so each
// migration is tested from the version before it.
func RunMigrations(t *testing.T, open func(t *testing.T) (store.Store, store.Migrator, *db.DB), steps []MigrationStep) {
	ctx := context.Background()
	covered := map[int]bool{}
	for _, st := range steps {
		covered[st.From] = true
	}
	_, m, _ := open(t)
	for v := 0; v < m.Latest(); v++ {
		if !covered[v] {
			t.Errorf("no migration test from version %d: add a MigrationStep that seeds data at version %d", v, v)
		}
	}
	for _, st := range steps {
		t.Run("from"+strconv.Itoa(st.From), func(t *testing.T) {
			s, m, d := open(t)
			if st.From > 0 {
				if _, err := m.Up(ctx, d, st.From); err != nil {
					t.Fatalf("migrating to version %d: %v", st.From, err)
				}
			}
			if v, err := m.Current(ctx, d); err != nil || v != st.From {
				t.Fatalf("version before seeding = %d, %v; want %d", v, err, st.From)
			}
			if _, err := d.ExecRaw(ctx, st.Seed); err != nil {
				t.Fatalf("seeding version %d: %v", st.From, err)
			}
			if err := s.Setup(ctx); err != nil {
				t.Fatalf("Setup from version %d: %v", st.From, err)
			}
			wantVersions(t, d, m)
			checkSeeded(t, s)
			if st.Check != nil {
				st.Check(t, s, d)
			}
		})
	}
	t.Run("racingSetups", func(t *testing.T) {
		s, m, d := open(t)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- s.Setup(ctx)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("a racing Setup: %v", err)
			}
		}
		wantVersions(t, d, m)
	})
}

// wantVersions checks the version table holds each version once.
func wantVersions(t *testing.T, d *db.DB, m store.Migrator) {
	t.Helper()
	rows, err := d.QueryMaps(context.Background(), "SELECT version, name FROM "+store.VersionTable+" ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != m.Latest() {
		t.Fatalf("version table has %d rows (%v), want %d", len(rows), rows, m.Latest())
	}
	for i, r := range rows {
		if mg := m.Migrations[i]; r["version"] != strconv.Itoa(mg.Version) || r["name"] != mg.Name {
			t.Errorf("version row %d = %v, want %d %s", i, r, mg.Version, mg.Name)
		}
	}
}

// checkSeeded reads the data every MigrationStep seeds back through the
// store, and claims the old run to show it still runs.
func checkSeeded(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	old, err := s.ReadRun(ctx, "old")
	if err != nil {
		t.Fatalf("ReadRun(old) after migrating: %v", err)
	}
	due := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if old.Workflow != "w" || old.Status != store.StatusWaiting || old.Input != `{"n":1}` || old.Version != 1 || !old.WakeAt.Equal(due) {
		t.Errorf("run old after migrating: %+v", old)
	}
	if fin, err := s.ReadRun(ctx, "finished"); err != nil || fin.Status != store.StatusDone || fin.Output != `"ok"` {
		t.Errorf("run finished after migrating: %+v, %v", fin, err)
	}
	want := []store.JournalEntry{{Seq: 1, StepID: "a", Kind: store.KindStep, Result: "1"}, {Seq: 2, StepID: "b", Kind: store.KindStep, Result: "2"}}
	j, err := s.LoadJournal(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, j, IgnoreTimes); diff != "" {
		t.Errorf("journal of old after migrating (-want +got):\n%s", diff)
	}
	box, err := s.ListSignals(ctx, "old")
	if err != nil || len(box) != 1 || box[0].Name != "go" || box[0].Delivered || box[0].Payload != "true" {
		t.Errorf("mailbox of old after migrating: %+v, %v", box, err)
	}
	c, ok, err := s.ClaimRun(ctx, []string{"w"}, due.Add(time.Hour), Lease, "tok", "migrated-worker")
	if err != nil || !ok || c.ID != "old" || c.Attempts != 1 {
		t.Fatalf("claim after migrating = %+v, %v, %v; want run old", c, ok, err)
	}
	if c.JournalRead {
		j = c.Journal
	} else if j, err = s.LoadJournal(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, j, IgnoreTimes); diff != "" {
		t.Errorf("journal handed to the claim after migrating (-want +got):\n%s", diff)
	}
}

// CheckMigrationFiles fails unless a store's embedded migrations loaded
// (err is LoadMigrations' error) and start with the baseline.
func CheckMigrationFiles(t *testing.T, ms []store.Migration, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 2 || ms[0].Name != "baseline" {
		t.Fatalf("migrations %+v, want the baseline first and at least one after it", ms)
	}
}

// CheckSetupOnACurrentSchema: a second Setup (a worker's, or `sky durable
// ls`'s) on a migrated database sends only the version read, no DDL. open
// makes a store whose statements go to hook.
func CheckSetupOnACurrentSchema(t *testing.T, open func(hook store.StatementHook) store.Store) {
	t.Helper()
	var sent []string
	s := open(func(_, sql string) { sent = append(sent, sql) })
	ctx := context.Background()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	sent = nil
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || !strings.HasPrefix(sent[0], "SELECT COALESCE(MAX(version), 0)") {
		t.Errorf("Setup on a current schema sent %q, want the one version read", sent)
	}
}

// CheckLatestMigrations is the Check every store's MigrationSteps share:
// what the newest migrations (0004 deadline, 0006 flow, search) are particular
// about, which must hold whatever version a database came from.
func CheckLatestMigrations(t *testing.T, s store.Store, d *db.DB) {
	CheckDeadlineMigration(t, s, d)
	CheckFlowMigrated(t, s, d)
	CheckSearchMigrated(t, s, d)
	CheckNamespaceMigrated(t, s, d)
}
