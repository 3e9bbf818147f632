package postgres

import (
	"context"
	"testing"

	"skydurable/runtime/db/dbtest"
)

func TestZZClaimCost(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	if err := New(d, nil).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, output, wake_at, created_at, updated_at, parent_id, child_group)
  SELECT 'p' || (g / 100) || CASE WHEN g % 100 = 0 THEN '' ELSE '/' || g END, 'idle', 'done', '""', '""', 'infinity', now(), now(),
         CASE WHEN g % 100 <> 0 THEN 'p' || (g / 100) END, CASE WHEN g % 100 <> 0 THEN 'g' END
    FROM generate_series(0, 99999) g;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
  SELECT 'later' || g, 'idle', 'waiting', '""', now() + interval '1 day', now(), now() FROM generate_series(1, 100000) g;
`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `VACUUM ANALYZE _sky_durable_runs`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, sql, args string }{
		{"claim", pgClaimWhere(pgPickByName, 1), `NULL, 1000, '["idle"]', 'token', 'B'`},
		{"overdue", pgAnyOverdue, `NULL`},
		{"schedule", pgAnyScheduleDue, `NULL, '["idle"]'`},
	} {
		for _, mode := range []string{"auto"} {
			if _, err := d.ExecRaw(ctx, "SET plan_cache_mode = "+mode); err != nil {
				t.Fatal(err)
			}
			plan, err := genericPlanMode(ctx, d, c.sql, c.args)
			d.ExecRaw(ctx, "DEALLOCATE zz")
			t.Logf("%s %s\n%s err=%v", c.name, mode, plan, err)
		}
	}
}

func genericPlanMode(ctx context.Context, d interface {
	ExecRaw(context.Context, string) (int64, error)
	QueryMaps(context.Context, string, ...any) ([]map[string]string, error)
}, sql, args string) (string, error) {
	if _, err := d.ExecRaw(ctx, "PREPARE zz AS "+numbered(sql)); err != nil {
		return "", err
	}
	out := ""
	for i := 0; i < 10; i++ {
		rows, err := d.QueryMaps(ctx, "EXPLAIN (ANALYZE, BUFFERS) EXECUTE zz("+args+")")
		if err != nil {
			return "", err
		}
		if i == 9 || i == 0 {
			for _, r := range rows {
				out += r["QUERY PLAN"] + "\n"
			}
		}
	}
	return out, nil
}
