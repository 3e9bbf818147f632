package postgres

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
)

// The bulk statements (bulk.go) join the plan test: each text of each
// shape must be sent by the store suite, and the cancels run without JIT
// like CancelRun.
func init() {
	sqlConstants["pgBulkError"] = []string{pgBulkError}
	sqlConstants["pgBulkCount"] = pgBulkCount[:]
	sqlConstants["pgBulkRetry"] = pgBulkRetry[:]
	sqlConstants["pgBulkRelease"] = pgBulkRelease[:]
	sqlConstants["pgBulkCancel"] = pgBulkCancel[:]
	sqlConstants["pgRetrySets"] = []string{pgRetrySets}
	sqlConstants["pgCancelSets"] = []string{pgCancelSets}
	sqlConstants["pgReleaseRunSets"] = []string{pgReleaseRunSets}
	for _, sql := range pgBulkCancel {
		withoutJITStatements[sql] = true
	}
}

// TestBulkStatementsWalkTheirShapesIndex: at 100,000 runs, the generic plan
// of every bulk statement (what a pooled connection runs from its sixth
// batch on, not knowing how rare the status is) reads its shape's index;
// with the cursor written as (created_at, id) alone it walked the
// (created_at, id) listing index, testing every run's status.
func TestBulkStatementsWalkTheirShapesIndex(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	if err := New(d, nil).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, fillRuns+`; ANALYZE _sky_durable_runs`); err != nil {
		t.Fatal(err)
	}
	index := map[store.BulkShape]string{
		store.BulkByStatus:   "_sky_durable_runs_status_list",
		store.BulkByWorkflow: "_sky_durable_runs_workflow_status_list",
		store.BulkByParent:   "_sky_durable_runs_parent",
	}
	filters := map[store.BulkShape]store.BulkFilter{
		store.BulkByStatus:   {Status: store.StatusFailed},
		store.BulkByWorkflow: {Status: store.StatusFailed, Workflow: "w3"},
		store.BulkByParent:   {Status: store.StatusDone, Parent: "fill60003"},
	}
	for _, shape := range store.BulkShapes {
		f := filters[shape]
		args := bulkArgs(f, store.Cursor{})
		for name, sql := range map[string]string{"count": pgBulkCount[shape], "retry": pgBulkRetry[shape], "release": pgBulkRelease[shape], "cancel": pgBulkCancel[shape]} {
			a := args
			if name != "count" {
				a = append(append([]any{nil}, args...), 500, "operator")
			}
			plan, err := explain(ctx, d, sql, a, "force_generic_plan", true)
			if err != nil {
				t.Fatalf("%s by %s: %v", name, index[shape], err)
			}
			if !strings.Contains(plan, "using "+index[shape]+" on _sky_durable_runs r") && !strings.Contains(plan, "on "+index[shape]+" ") {
				t.Errorf("%s by %s: the generic plan does not read that index:\n%s", name, index[shape], plan)
			}
		}
	}
}
