package sqlite

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
)

// TestDeadlineMigrationFailsOnAnUnexpectedTableDefinition: when the runs
// table's stored CHECK is not the text 0004 edits (a hand-altered schema),
// the migration fails, names the check and changes nothing, rather than
// leaving a CHECK that refuses the first run to time out.
func TestDeadlineMigrationFailsOnAnUnexpectedTableDefinition(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "sqlite")
	s := New(d, nil)
	if _, err := s.migrator().Up(ctx, d, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql, '''dead'',''cancelled'')', '''dead'', ''cancelled'')') WHERE name = '_sky_durable_runs';
PRAGMA writable_schema = RESET;`); err != nil {
		t.Fatal(err)
	}
	err := s.Setup(ctx)
	if err == nil || !strings.Contains(err.Error(), "the_runs_status_check_admits_timed_out") || !strings.Contains(err.Error(), "0004_deadline") {
		t.Fatalf("Setup on an unexpected definition = %v; want the 0004 migration to fail naming its check", err)
	}
	if v, err := s.migrator().Current(ctx, d); err != nil || v != 3 {
		t.Errorf("schema version after the failed migration = %d, %v; want 3", v, err)
	}
}
